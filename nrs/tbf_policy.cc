// The TBF policy (seed 001; Lustre nrs_tbf.c): one FIFO class queue per
// distinct key of the type's fields, a token bucket per class whose numbers
// come from the first rule matching the class, and a min-heap of the
// backlogged classes ordered by the time their head request conforms.
// What a bucket earns and holds, and what realtime= changes, is in
// tbf_bucket.h.
//
// Throttled time of a rule: summed over the requests it served, the time
// from the request reaching the head of its class queue to the moment its
// tokens were there (its deadline); time a conformant request then waits for
// the service to call Dequeue is not throttling and is not counted.
//
// Rule changes (Retune with a new rule set or default rate): backlogged
// classes re-match at once, so a waiting request gets a deadline from its new
// rule (a stopped rule's classes fall to the next matching rule or the
// default); idle classes re-match lazily when they next get a request
// (generation check). Per-rule counters live in RuleState objects that
// survive a Retune when the rule name does; a class holds its RuleState by
// shared_ptr and copies the numbers it uses, so it never reads a freed rule.
// Filesystem-wide limits (nrs_tbf_scope=fs, tbf_shares.h): each class
// counts what arrived, what it served and the tokens its buckets lost since
// a reduction last covered it; at the end of an epoch the active classes
// report their demand (arrived + queued, smoothed) and the rest, and at the
// start of the next every class the reduction covers takes its share of
// the class's demand across the OSTs (and of the lost tokens) and starts
// counting afresh; a class it does not cover (the window is elsewhere)
// keeps its shares and its counts. With scope=ost, or until the first epoch
// starts, every share is whole.
// Retune assumes, as Policy::Retune allows, that the settings layer checked
// the new rules with NewTbfPolicy: a rule testing a field outside the type
// would see that field as 0 or "" in every class.
#include <algorithm>
#include <cassert>
#include <cerrno>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nrs/policy.h"
#include "nrs/tbf_bucket.h"
#include "nrs/tbf_rules.h"
#include "nrs/tbf_shares.h"

namespace sfs::nrs {
namespace {

constexpr size_t kNotInHeap = std::numeric_limits<size_t>::max();

// One rule of the current set as the policy sees it: its numbers and the
// counters Describe reports.
struct RuleState {
  std::string name;
  std::string expression;
  TbfLimits limits;
  uint64_t classes = 0;  // live classes bound to this state
  uint64_t served = 0;
  uint64_t throttled_ns = 0;
};

// A class key: the type's fields of a request, the others zero or empty.
struct ClassKey {
  uint32_t uid = 0;
  uint32_t gid = 0;
  Op op = Op::kRead;
  std::string_view jobid;  // borrowed: the request's or the class's own copy

  bool operator==(const ClassKey&) const = default;
};

struct ClassKeyHash {
  size_t operator()(const ClassKey& key) const {
    uint64_t x = (uint64_t{key.uid} << 32 | key.gid) * 0x9E3779B97F4A7C15ull;
    x ^= (x >> 29) + static_cast<uint64_t>(key.op);
    if (!key.jobid.empty()) x ^= std::hash<std::string_view>{}(key.jobid) * 0xBF58476D1CE4E5B9ull;
    return static_cast<size_t>(x ^ (x >> 32));
  }
};

struct TbfClass {
  uint32_t uid = 0;
  uint32_t gid = 0;
  Op op = Op::kRead;
  std::string jobid;

  // Queued requests in arrival order, linked through Request::policy_data.
  Request* head = nullptr;
  Request* tail = nullptr;
  size_t queued = 0;

  std::shared_ptr<RuleState> rule;
  uint64_t generation = 0;  // of the rule set `rule` and `buckets.limits` come from
  TbfBuckets buckets;

  // While queued > 0: when `head` conforms, and when it became the head.
  TimePoint deadline{};
  TimePoint head_since{};
  uint64_t order = 0;  // heap tie-break: earlier (re)scheduled class first
  size_t heap_index = kNotInHeap;

  // Filesystem scope: the class's key on every OST; what happened since a
  // reduction last covered the class (lost: tokens its buckets lost to
  // their cap, not yet handed over); the smoothed demand this OST reported
  // then; and what the latest report said, taken off the counts when the
  // reduction of that report covers the class.
  struct Sent {
    bool valid = false;
    uint32_t arrived = 0;
    uint64_t arrived_bytes = 0;
    uint32_t served = 0;
    uint64_t served_bytes = 0;
    uint32_t demand = 0;
    uint32_t demand_kib = 0;
    uint32_t lost_milli = 0;
    uint32_t lost_kib = 0;
  };
  uint64_t share_key = 0;
  uint64_t queued_bytes = 0;
  uint32_t arrived = 0;
  uint64_t arrived_bytes = 0;
  uint32_t served = 0;
  uint64_t served_bytes = 0;
  uint32_t lost_milli = 0;
  uint32_t lost_kib = 0;
  uint32_t reported = 0;
  uint32_t reported_kib = 0;
  Sent sent;

  // Idle LRU links, while queued == 0.
  TbfClass* lru_prev = nullptr;
  TbfClass* lru_next = nullptr;

  ClassKey key() const { return ClassKey{uid, gid, op, jobid}; }
};

class TbfPolicy final : public Policy {
 public:
  TbfPolicy(TbfFields type, const Tunables& tunables) : type_(type) {
    idle_limit_ = tunables.tbf_idle_class_limit;
    scope_ = tunables.tbf_scope;
    SetRules(tunables);
  }

  std::string_view Name() const override { return "tbf"; }

  bool Enqueue(Request* request, TimePoint now) override {
    const ClassKey key = KeyOf(request->info);
    auto it = classes_.find(key);
    TbfClass* c = it != classes_.end() ? it->second.get() : NewClass(key, now);
    request->policy_data = nullptr;
    if (c->tail != nullptr) {
      c->tail->policy_data = request;
    } else {
      c->head = request;
    }
    c->tail = request;
    c->queued_bytes += request->info.length;
    c->arrived = SaturatingAdd(c->arrived, 1);
    c->arrived_bytes += request->info.length;
    queued_++;
    if (++c->queued == 1) Wake(c, now);
    return true;
  }

  Pick Dequeue(TimePoint now) override {
    if (heap_.empty()) return Pick::Empty();
    TbfClass* c = heap_.front();
    if (c->deadline > now) return Pick::Until(c->deadline);

    c->buckets.Refill(now, /*cap=*/!c->buckets.limits.realtime);
    Request* request = c->head;
    const uint64_t length = request->info.length;
    assert(c->buckets.Conforms(length));
    c->buckets.Spend(length);

    RuleState& rule = *c->rule;
    rule.served++;
    c->served = SaturatingAdd(c->served, 1);
    c->served_bytes += length;
    const TimePoint conformed = std::min(c->deadline, now);
    if (conformed > c->head_since) rule.throttled_ns += NanosBetween(c->head_since, conformed);
    return Pick::Of(PopHead(c, now));
  }

  // Shutdown: the earliest class's head, whatever its tokens say.
  Request* TakeAny() override {
    if (heap_.empty()) return nullptr;
    TbfClass* c = heap_.front();
    return PopHead(c, c->head_since);
  }

  // Leaves its class queue without spending a token (docs/design.md, "A
  // blocker raised"); it still counts as having arrived (fs scope demand).
  bool Remove(Request* request, TimePoint now) override {
    auto it = classes_.find(KeyOf(request->info));
    if (it == classes_.end()) return false;
    TbfClass* c = it->second.get();
    if (c->head == request) {
      PopHead(c, now);
      return true;
    }
    for (Request* prev = c->head; prev != nullptr;
         prev = static_cast<Request*>(prev->policy_data)) {
      if (prev->policy_data != request) continue;
      prev->policy_data = request->policy_data;
      if (c->tail == request) c->tail = prev;
      request->policy_data = nullptr;
      c->queued_bytes -= request->info.length;
      queued_--;
      c->queued--;  // the head stays: still backlogged, same deadline
      return true;
    }
    return false;
  }

  size_t Queued() const override { return queued_; }

 private:
  // Unlinks c's head request and files c again: idle (LRU) or rescheduled.
  Request* PopHead(TbfClass* c, TimePoint now) {
    Request* request = c->head;
    c->head = static_cast<Request*>(request->policy_data);
    if (c->head == nullptr) c->tail = nullptr;
    request->policy_data = nullptr;
    c->queued_bytes -= request->info.length;
    queued_--;
    if (--c->queued == 0) {
      HeapErase(c);
      LruPushBack(c);
      Reclaim(now);  // may free c
    } else {
      c->head_since = now;
      Schedule(c);
      // c may sit anywhere in the heap (a Remove takes a head from inside
      // it), and its key may move either way: re-place it where it is.
      SiftDown(c->heap_index);
      SiftUp(c->heap_index);
    }
    return request;
  }

 public:
  // A new rule set or default rate re-matches the backlogged classes now and
  // the idle ones when next used; a lower idle class limit reclaims at once.
  void Retune(const Tunables& tunables, TimePoint now) override {
    idle_limit_ = tunables.tbf_idle_class_limit;
    if (tunables.tbf_scope != scope_) {
      scope_ = tunables.tbf_scope;
      // Whole shares until the first epoch of the new scope says otherwise;
      // credit handed over under the old scope is not owed under the new.
      for (auto& [key, c] : classes_) {
        SetShares(c.get(), kShareOne, kShareOne, now);
        c->buckets.DropBonus();
        c->sent.valid = false;
        if (c->queued > 0) c->deadline = c->buckets.Deadline(c->head->info.length);
      }
      RebuildHeap();
    }
    const auto& rules = tunables.tbf_rules ? tunables.tbf_rules : TbfRuleSet::Empty();
    if (rules != rules_ || tunables.tbf_default_rate != default_rate_) {
      SetRules(tunables);
      for (TbfClass* c : heap_) {
        Rebind(c, now);
        Schedule(c);
      }
      RebuildHeap();
    }
    Reclaim(now);
  }

  EpochKind EpochDataKind() const override {
    return scope_ == TbfScope::kFs ? EpochKind::kTbfShares : EpochKind::kNone;
  }

  std::vector<uint8_t> ReportEpoch(TimePoint now) override {
    TbfShares report{1, epoch_, window_, {}};
    for (auto& [key, owned] : classes_) {
      TbfClass* c = owned.get();
      // Smoothed over reports (half the weight on the latest), in 1/16 of a
      // request or KiB: the next arrivals at an OST are better foreseen by
      // an average than by the latest count alone. Every OST counts a class
      // from the same covered epoch on, so their counts compare.
      const uint64_t demand = uint64_t{c->arrived} + c->queued;
      const uint64_t demand_bytes = c->arrived_bytes + c->queued_bytes;
      c->sent = TbfClass::Sent{true,
                               c->arrived,
                               c->arrived_bytes,
                               c->served,
                               c->served_bytes,
                               Smooth(c->reported, demand),
                               Smooth(c->reported_kib, Kib(demand_bytes))};
      // Tokens lost to the cap (a full bucket where the class had too
      // little to send). Only classes with demand or service take a place
      // in the report: an idle class's full bucket loses tokens every epoch,
      // and reporting those would crowd busy classes out of the window.
      // What it lost is nobody's then (its share here drops to 0 once its
      // smoothed demand has, so the loss stops too).
      c->buckets.Refill(now, /*cap=*/!(c->queued > 0 && c->buckets.limits.realtime));
      const TbfBuckets::Lost lost = c->buckets.TakeLost();
      if (c->sent.demand == 0 && c->sent.served == 0) {
        c->lost_milli = c->lost_kib = 0;
        continue;
      }
      // Kept until a reduction covers the class, however many epochs that
      // takes, so its rate holds over the window's round.
      c->lost_milli = c->sent.lost_milli = SaturatingAdd(c->lost_milli, lost.milli_requests);
      c->lost_kib = c->sent.lost_kib = SaturatingAdd(c->lost_kib, lost.kib);
      report.entries.push_back(TbfShareEntry{c->share_key, c->sent.demand, c->sent.demand_kib,
                                             c->sent.served, Kib(c->sent.served_bytes),
                                             c->sent.lost_milli, c->sent.lost_kib});
    }
    // The encoding keeps the first kTbfShareEntries from the window on, as
    // every reduction does: a class cut here is not covered by the
    // reduction either, so it keeps its counts for a later report.
    return EncodeTbfShares(std::move(report));
  }

  void StartEpoch(Epoch epoch, std::span<const uint8_t> reduced, TimePoint now) override {
    const TbfShares shares = DecodeTbfShares(reduced);
    // Our data is in the reduction only when it carried the reduction's
    // (epoch, window); else (this policy just started, or its OST
    // rejoined) it was dropped, so nothing it said is settled.
    const bool ours = shares.epoch == epoch_ && shares.window == window_;
    epoch_ = epoch;
    window_ = NextTbfShareWindow(shares);
    last_reporters_ = shares.reporters;
    for (auto& [key, owned] : classes_) {
      TbfClass* c = owned.get();
      const bool sent = c->sent.valid;
      c->sent.valid = false;
      // Not covered: the class keeps its shares (an equal 1/N would undo
      // its share by demand on every OST for the whole round).
      if (!ours || !sent || !TbfSharesCover(shares, c->share_key)) continue;
      Settle(c);
      c->buckets.DropBonus();
      const TbfShareEntry* total = FindTbfShare(shares, c->share_key);
      if (total == nullptr) {
        // Idle everywhere: an equal share until it reports.
        const uint32_t equal = TbfShareOf(0, 0, shares.reporters);
        SetShares(c, equal, equal, now);
      } else {
        const uint32_t request_share = TbfShareOf(c->reported, total->demand, shares.reporters);
        const uint32_t byte_share =
            TbfShareOf(c->reported_kib, total->demand_kib, shares.reporters);
        SetShares(c, request_share, byte_share, now);
        // This OST's share of what idle buckets lost, so the class as a
        // whole gets its rate while some OST has work for it.
        if (total->demand != 0 || total->demand_kib != 0) {
          c->buckets.AddCredit(uint64_t{total->lost_milli} * request_share / kShareOne,
                               uint64_t{total->lost_kib} * byte_share / kShareOne);
        }
      }
      if (c->queued > 0) c->deadline = c->buckets.Deadline(c->head->info.length);
    }
    RebuildHeap();
  }

  std::string ClassOf(const Request& request) const override {
    const RequestInfo& info = request.info;
    std::string label;
    auto add = [&](TbfField field, std::string_view name, std::string_view value) {
      if (!(type_ & field)) return;
      if (!label.empty()) label += '+';
      label.append(name).append("=").append(value);
    };
    add(kTbfUid, "uid", std::to_string(info.uid));
    add(kTbfGid, "gid", std::to_string(info.gid));
    add(kTbfJobid, "jobid", info.jobid ? std::string_view(*info.jobid) : "");
    add(kTbfOpcode, "opcode", TbfOpcodeName(info.op));
    return label;
  }

  std::string Describe() const override {
    std::string out = "type=" + TbfTypeName(type_) + " scope=" + TbfScopeName(scope_) +
                      " classes=" + std::to_string(classes_.size()) +
                      " queued=" + std::to_string(queued_);
    for (const auto& state : states_) {
      const TbfLimits& l = state->limits;
      out += "\nrule " + state->name + " " + state->expression + " rate=" + std::to_string(l.rate) +
             " bps=" + std::to_string(l.bps) + " depth=" + std::to_string(l.depth) +
             " realtime=" + (l.realtime ? "1" : "0") +
             " classes=" + std::to_string(state->classes) +
             " throttled_ms=" + std::to_string(state->throttled_ns / 1'000'000) +
             " served=" + std::to_string(state->served);
    }
    return out;
  }

 private:
  ClassKey KeyOf(const RequestInfo& info) const {
    ClassKey key;
    if (type_ & kTbfUid) key.uid = info.uid;
    if (type_ & kTbfGid) key.gid = info.gid;
    if (type_ & kTbfOpcode) key.op = TbfOpcodeClass(info.op);
    if ((type_ & kTbfJobid) && info.jobid) key.jobid = *info.jobid;
    return key;
  }

  // Rounds down so an idle class's demand reaches 0 (8, 4, 2, 1, 0); any
  // demand since the last report keeps it at 8 or more.
  static uint32_t Smooth(uint32_t previous, uint64_t latest) {
    return static_cast<uint32_t>(std::min<uint64_t>((previous + latest * 16) / 2, UINT32_MAX));
  }

  static uint32_t Kib(uint64_t bytes) {
    return static_cast<uint32_t>(std::min<uint64_t>((bytes + 1023) / 1024, UINT32_MAX));
  }

  // A reduction covered what `c` sent: the counts start again from what
  // came after the report, and the smoothed demand is what was sent.
  static void Settle(TbfClass* c) {
    const TbfClass::Sent& s = c->sent;
    c->arrived -= std::min(c->arrived, s.arrived);
    c->arrived_bytes -= std::min(c->arrived_bytes, s.arrived_bytes);
    c->served -= std::min(c->served, s.served);
    c->served_bytes -= std::min(c->served_bytes, s.served_bytes);
    c->lost_milli -= std::min(c->lost_milli, s.lost_milli);
    c->lost_kib -= std::min(c->lost_kib, s.lost_kib);
    c->reported = s.demand;
    c->reported_kib = s.demand_kib;
  }

  // New shares for `c` from `now` on; a backlogged class's deadline moves.
  // REQUIRES: RebuildHeap afterwards.
  void SetShares(TbfClass* c, uint32_t request_share, uint32_t byte_share, TimePoint now) {
    if (c->buckets.request_share == request_share && c->buckets.byte_share == byte_share) return;
    const bool backlogged = c->queued > 0;
    c->buckets.Refill(now, /*cap=*/!(backlogged && c->buckets.limits.realtime));
    c->buckets.SetShares(request_share, byte_share);
    if (backlogged) c->deadline = c->buckets.Deadline(c->head->info.length);
  }

  void RebuildHeap() {
    for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
  }

  // Takes a new rule set: one RuleState per rule then the default, reusing
  // the state (and counters) of every name that survives.
  void SetRules(const Tunables& tunables) {
    rules_ = tunables.tbf_rules ? tunables.tbf_rules : TbfRuleSet::Empty();
    default_rate_ = tunables.tbf_default_rate;
    std::vector<std::shared_ptr<RuleState>> next;
    auto add = [&](const TbfRule& rule, uint64_t rate) {
      auto it = std::find_if(states_.begin(), states_.end(),
                             [&](const auto& s) { return s->name == rule.name; });
      auto state = it != states_.end() ? *it : std::make_shared<RuleState>();
      state->name = rule.name;
      state->expression = rule.expression;
      state->limits = TbfLimitsOf(rule, rate);
      next.push_back(std::move(state));
    };
    for (const TbfRule& rule : rules_->rules()) add(rule, rule.rate);
    const TbfRule& fallback = rules_->default_rule();
    add(fallback, std::max<uint64_t>(fallback.rate != 0 ? fallback.rate : default_rate_, 1));
    states_ = std::move(next);
    generation_++;
  }

  // The state of the first rule matching the class's key.
  const std::shared_ptr<RuleState>& MatchState(const TbfClass& c) const {
    RequestInfo info;
    info.uid = c.uid;
    info.gid = c.gid;
    info.op = c.op;
    // Aliasing a shared_ptr that owns nothing: the class outlives the call.
    info.jobid = std::shared_ptr<const std::string>(std::shared_ptr<const std::string>(), &c.jobid);
    const TbfRule& rule = rules_->Match(info);
    const auto& rules = rules_->rules();
    const size_t index = &rule == &rules_->default_rule() ? rules.size() : &rule - rules.data();
    return states_[index];
  }

  TbfClass* NewClass(const ClassKey& key, TimePoint now) {
    auto owned = std::make_unique<TbfClass>();
    TbfClass* c = owned.get();
    c->uid = key.uid;
    c->gid = key.gid;
    c->op = key.op;
    c->jobid = std::string(key.jobid);
    c->rule = MatchState(*c);
    c->rule->classes++;
    c->generation = generation_;
    c->buckets = TbfBuckets::Full(c->rule->limits, now);  // a new class starts full
    c->share_key = TbfClassKeyHash(c->uid, c->gid, static_cast<uint8_t>(c->op), c->jobid);
    if (scope_ == TbfScope::kFs && last_reporters_ > 1) {
      // Unknown to the other OSTs until the next epoch: an equal share.
      c->buckets.SetShares(kShareOne / last_reporters_, kShareOne / last_reporters_);
    }
    classes_.emplace(c->key(), std::move(owned));         // the key borrows c->jobid
    return c;
  }

  // The class just got its first queued request.
  void Wake(TbfClass* c, TimePoint now) {
    if (c->lru_prev != nullptr || lru_head_ == c) LruUnlink(c);
    if (c->generation != generation_) Rebind(c, now);
    c->buckets.Refill(now, /*cap=*/true);
    c->head_since = now;
    Schedule(c);
    c->heap_index = heap_.size();
    heap_.push_back(c);
    SiftUp(c->heap_index);
  }

  // Re-matches `c` under the current rule set. Credit earned so far counts
  // at the old numbers; the new capacity then caps it (except for a
  // backlogged realtime class, which keeps what it is owed).
  void Rebind(TbfClass* c, TimePoint now) {
    const bool backlogged = c->queued > 0;
    c->buckets.Refill(now, /*cap=*/!(backlogged && c->buckets.limits.realtime));
    const std::shared_ptr<RuleState>& state = MatchState(*c);
    if (state != c->rule) {
      c->rule->classes--;
      state->classes++;
      c->rule = state;
    }
    c->buckets.Adopt(state->limits, /*cap=*/!(backlogged && state->limits.realtime));
    c->generation = generation_;
  }

  // Sets the deadline of the class's head request from its credit as of
  // `buckets.refilled`, and gives it the newest tie-break order.
  void Schedule(TbfClass* c) {
    c->deadline = c->buckets.Deadline(c->head->info.length);
    c->order = ++order_;
  }

  // Heap of backlogged classes, earliest (deadline, order) first.
  static bool Before(const TbfClass* a, const TbfClass* b) {
    return a->deadline != b->deadline ? a->deadline < b->deadline : a->order < b->order;
  }
  void Place(size_t i, TbfClass* c) {
    heap_[i] = c;
    c->heap_index = i;
  }
  void SiftUp(size_t i) {
    TbfClass* c = heap_[i];
    while (i > 0 && Before(c, heap_[(i - 1) / 2])) {
      Place(i, heap_[(i - 1) / 2]);
      i = (i - 1) / 2;
    }
    Place(i, c);
  }
  void SiftDown(size_t i) {
    TbfClass* c = heap_[i];
    for (;;) {
      size_t child = 2 * i + 1;
      if (child >= heap_.size()) break;
      if (child + 1 < heap_.size() && Before(heap_[child + 1], heap_[child])) child++;
      if (!Before(heap_[child], c)) break;
      Place(i, heap_[child]);
      i = child;
    }
    Place(i, c);
  }
  void HeapErase(TbfClass* c) {
    const size_t i = c->heap_index;
    TbfClass* last = heap_.back();
    heap_.pop_back();
    c->heap_index = kNotInHeap;
    if (last == c) return;
    Place(i, last);
    SiftDown(i);
    SiftUp(last->heap_index);
  }

  // Idle classes, least recently used first.
  void LruPushBack(TbfClass* c) {
    c->lru_prev = lru_tail_;
    c->lru_next = nullptr;
    (lru_tail_ != nullptr ? lru_tail_->lru_next : lru_head_) = c;
    lru_tail_ = c;
    idle_++;
  }
  void LruUnlink(TbfClass* c) {
    (c->lru_prev != nullptr ? c->lru_prev->lru_next : lru_head_) = c->lru_next;
    (c->lru_next != nullptr ? c->lru_next->lru_prev : lru_tail_) = c->lru_prev;
    c->lru_prev = c->lru_next = nullptr;
    idle_--;
  }
  // Frees idle classes beyond the limit, least recently used first, but only
  // once a class's buckets are full again: a freed class comes back full, so
  // freeing it earlier would hand a client that keeps its queue short (and
  // so keeps going idle) fresh tokens each time, beyond its rate. A class
  // refills within depth/rate (at most depth seconds at rate 1), so the
  // bound holds again within that time.
  void Reclaim(TimePoint now) {
    while (idle_ > idle_limit_) {
      TbfClass* c = lru_head_;
      if (!c->buckets.FullAt(now)) break;  // the others went idle later still
      LruUnlink(c);
      c->rule->classes--;
      classes_.erase(classes_.find(c->key()));
    }
  }

  const TbfFields type_;
  std::shared_ptr<const TbfRuleSet> rules_;
  uint64_t default_rate_ = 0;  // the tunable, used when the default rule has no rate
  size_t idle_limit_ = 0;
  std::vector<std::shared_ptr<RuleState>> states_;  // rules_ in match order, then default
  uint64_t generation_ = 0;

  std::unordered_map<ClassKey, std::unique_ptr<TbfClass>, ClassKeyHash> classes_;
  TbfScope scope_ = TbfScope::kOst;
  uint32_t last_reporters_ = 0;  // OSTs in the latest reduction
  Epoch epoch_ = kFirstEpoch;     // the one this policy is in
  uint64_t window_ = 0;           // where the classes it reports start (tbf_shares.h)
  std::vector<TbfClass*> heap_;  // backlogged classes
  TbfClass* lru_head_ = nullptr;
  TbfClass* lru_tail_ = nullptr;
  size_t idle_ = 0;
  size_t queued_ = 0;
  uint64_t order_ = 0;
};

}  // namespace

Result<std::unique_ptr<Policy>> NewTbfPolicy(std::string_view args, const Tunables& tunables) {
  auto type = ParseTbfType(args);
  if (!type.ok()) return type.status();
  const auto& rules = tunables.tbf_rules ? tunables.tbf_rules : TbfRuleSet::Empty();
  for (const TbfRule& rule : rules->rules()) {
    const TbfFields outside = rule.fields & ~*type;
    if (outside != 0) {
      return Status::Error(EINVAL, "tbf " + TbfTypeName(*type) + " cannot use rule '" + rule.name +
                                       "': it tests " + TbfTypeName(outside));
    }
  }
  const uint64_t rate = rules->default_rule().rate;
  if (rate == 0 && (tunables.tbf_default_rate == 0 || tunables.tbf_default_rate > kTbfMaxRate)) {
    return Status::Error(EINVAL, "nrs_tbf_default_rate " +
                                     std::to_string(tunables.tbf_default_rate) +
                                     " is out of range 1.." + std::to_string(kTbfMaxRate));
  }
  return std::unique_ptr<Policy>(std::make_unique<TbfPolicy>(*type, tunables));
}

}  // namespace sfs::nrs
