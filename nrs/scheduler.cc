#include "nrs/scheduler.h"

#include <cassert>
#include <chrono>
#include <optional>
#include <set>
#include <utility>

namespace sfs::nrs {

// One running policy and its counters. Requests point at `stats` (through
// sched.stats), so a slot is only destroyed when nothing is queued in it and
// nothing it handed out is still being served.
struct Scheduler::Slot {
  std::unique_ptr<Policy> policy;
  PolicyStats stats;
  ClassStatsTable classes;
  PolicyState state = PolicyState::kStarted;

  bool Idle() const { return stats.queued == 0 && stats.active == 0; }
};

namespace {

uint64_t NanosBetween(TimePoint from, TimePoint to) {
  // A caller's clock may put arrival after dequeue (or leave it unset far in
  // the past); a negative span would wrap, so it counts as zero.
  if (to <= from) return 0;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count());
}

PolicyStatus StatusOfSlot(const Policy& policy, const PolicyStats& stats,
                          const ClassStatsTable& classes, PolicyState state, bool with_classes) {
  PolicyStatus status;
  status.name = std::string(policy.Name());
  status.state = state;
  status.description = policy.Describe();
  status.stats = stats;
  if (with_classes) status.classes = classes.Snapshot();
  return status;
}

uint64_t Distance(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

const char* PolicyStateName(PolicyState state) {
  switch (state) {
    case PolicyState::kStopped: return "stopped";
    case PolicyState::kStarting: return "starting";
    case PolicyState::kStarted: return "started";
    case PolicyState::kStopping: return "stopping";
  }
  return "unknown";
}

Scheduler::Scheduler() : fallback_(std::make_unique<Slot>()) {
  fallback_->policy = NewFifoPolicy();
}

Scheduler::~Scheduler() = default;

void Scheduler::Enqueue(Request* request, TimePoint now) {
  Slot* slot = fallback_.get();
  if (primary_ != nullptr && primary_->policy->Enqueue(request, now)) {
    slot = primary_.get();
  } else {
    fallback_->policy->Enqueue(request, now);  // FIFO never refuses
  }
  request->sched.stats = &slot->stats;
  request->sched.queued = true;
  slot->stats.queued++;
}

void Scheduler::EnqueueRaised(Request* request, TimePoint now) {
  fallback_->policy->Enqueue(request, now);
  request->sched.stats = &fallback_->stats;
  request->sched.queued = true;
  fallback_->stats.queued++;
}

bool Scheduler::Remove(Request* request, TimePoint now) {
  if (!request->sched.queued) return false;
  Slot* slot = SlotOf(*request);
  if (slot == nullptr || !slot->policy->Remove(request, now)) return false;
  slot->stats.queued--;
  request->sched.stats = nullptr;
  request->sched.queued = false;
  request->policy_data = nullptr;
  ReapStopped();
  return true;
}

Pick Scheduler::DequeueFrom(Slot& slot, TimePoint now, bool force) {
  if (slot.stats.queued == 0) return Pick::Empty();
  Pick pick = force ? Pick::Of(slot.policy->TakeAny()) : slot.policy->Dequeue(now);
  if (pick.request == nullptr) return pick;
  slot.stats.queued--;
  HandOut(slot, pick.request, now);
  return Pick::Of(pick.request);
}

void Scheduler::HandOut(Slot& slot, Request* request, TimePoint now) {
  slot.stats.active++;
  request->sched.queued = false;
  request->sched.dequeued = now;
  request->policy_data = nullptr;
  NoteOrder(request->info);
}

void Scheduler::NoteOrder(const RequestInfo& info) {
  head_stats_.dequeued++;
  if (info.op != Op::kRead && info.op != Op::kWrite) return;
  if (have_last_ && last_ost_ == info.ost && last_object_ == info.object_id) {
    head_stats_.seek_bytes += Distance(info.offset, last_end_);
  } else if (have_last_) {
    head_stats_.object_switches++;
  }
  have_last_ = true;
  last_ost_ = info.ost;
  last_object_ = info.object_id;
  last_end_ = info.offset + info.length;
}

Pick Scheduler::Dequeue(TimePoint now, bool force) {
  std::optional<TimePoint> earliest;
  auto try_slot = [&](Slot& slot) -> Request* {
    Pick pick = DequeueFrom(slot, now, force);
    if (pick.request == nullptr && pick.not_before.has_value() &&
        (!earliest.has_value() || *pick.not_before < *earliest)) {
      earliest = pick.not_before;
    }
    return pick.request;
  };

  // A throttled policy must not hold back the others, so "until" only
  // remembers its time and the search goes on.
  for (auto& slot : stopping_) {
    if (Request* r = try_slot(*slot)) return Pick::Of(r);
  }
  // The primary and the fallback take turns when both have work (Lustre
  // moves the policy it served to the back of its queue): a primary that
  // refuses some requests (ORR and writes) must not starve them.
  Slot* first = primary_.get();
  Slot* second = fallback_.get();
  if (first == nullptr || fallback_next_) std::swap(first, second);
  for (Slot* slot : {first, second}) {
    if (slot == nullptr) continue;
    if (Request* r = try_slot(*slot)) {
      fallback_next_ = slot != fallback_.get();
      return Pick::Of(r);
    }
  }
  return earliest.has_value() ? Pick::Until(*earliest) : Pick::Empty();
}

Scheduler::Slot* Scheduler::SlotOf(const Request& request) {
  if (request.sched.stats == &fallback_->stats) return fallback_.get();
  if (primary_ != nullptr && request.sched.stats == &primary_->stats) return primary_.get();
  for (auto& slot : stopping_) {
    if (request.sched.stats == &slot->stats) return slot.get();
  }
  return nullptr;
}

std::vector<Request*> Scheduler::TakeArrivedBefore(TimePoint deadline, TimePoint now) {
  std::vector<Request*> expired, kept;
  auto drain = [&](Slot& slot) {
    while (slot.stats.queued > 0) {
      Request* request = slot.policy->TakeAny();
      if (request == nullptr) break;  // a policy's count and contents disagree: keep going
      slot.stats.queued--;
      request->policy_data = nullptr;
      request->sched.stats = nullptr;
      request->sched.queued = false;
      (request->info.arrival < deadline ? expired : kept).push_back(request);
    }
  };
  for (auto& slot : stopping_) drain(*slot);
  if (primary_ != nullptr) drain(*primary_);
  drain(*fallback_);
  // Kept ones go where a new request would (a stopping policy is left empty).
  for (Request* request : kept) Enqueue(request, now);
  ReapStopped();
  return expired;
}

void Scheduler::Complete(Request* request, TimePoint now) {
  Slot* slot = SlotOf(*request);
  assert(slot != nullptr && "Complete() of a request not handed out by this scheduler");
  if (slot == nullptr) return;
  assert(slot->stats.active > 0);

  PolicyStats& stats = slot->stats;
  stats.active--;
  stats.completed++;
  stats.bytes += request->info.length;
  // Wait is added here, not at dequeue, so wait_ns / completed is an exact
  // mean over completed requests, as PolicyStats promises.
  const uint64_t wait_ns = NanosBetween(request->info.arrival, request->sched.dequeued);
  const uint64_t service_ns = NanosBetween(request->sched.dequeued, now);
  stats.wait_ns += wait_ns;
  stats.service_ns += service_ns;
  slot->classes.Add(slot->policy->ClassOf(*request), request->info.length, wait_ns, service_ns);
  slot->policy->Served(request, now);
  // The caller may reuse the request; a stale pointer must not match a slot.
  request->sched.stats = nullptr;
  ReapStopped();
}

bool Scheduler::ServesEveryArrivalAtOnce() const {
  return primary_ == nullptr && stopping_.empty() && fallback_->policy->ServesArrivalAtOnce();
}

void Scheduler::CountServedAtOnce(uint64_t requests, uint64_t service_ns,
                                  const LatencyHistogram& service) {
  if (requests == 0) return;
  Slot& slot = *fallback_;
  slot.stats.completed += requests;
  slot.stats.service_ns += service_ns;
  LatencyHistogram waits;
  waits.Add(0, static_cast<uint32_t>(requests));
  // FIFO classifies nothing: any request names its one class.
  const Request any;
  slot.classes.AddMany(slot.policy->ClassOf(any), requests, 0, waits, service);
  head_stats_.dequeued += requests;
}

void Scheduler::ReapStopped() {
  std::erase_if(stopping_, [](const std::unique_ptr<Slot>& slot) { return slot->Idle(); });
}

void Scheduler::RetirePrimary() {
  if (primary_ == nullptr) return;
  if (primary_->Idle()) {
    primary_.reset();
    return;
  }
  primary_->state = PolicyState::kStopping;
  stopping_.push_back(std::move(primary_));
}

void Scheduler::StartPrimary(std::unique_ptr<Policy> policy) {
  auto slot = std::make_unique<Slot>();
  slot->policy = std::move(policy);
  // kStarting would only be visible between these lines, under the caller's
  // lock, so the slot is published as started directly.
  slot->state = PolicyState::kStarted;
  RetirePrimary();
  primary_ = std::move(slot);
}

void Scheduler::StopPrimary() { RetirePrimary(); }

void Scheduler::Retune(const Tunables& tunables, TimePoint now) {
  if (primary_ != nullptr) primary_->policy->Retune(tunables, now);
  for (auto& slot : stopping_) slot->policy->Retune(tunables, now);
}

EpochKind Scheduler::EpochDataKind() const {
  return primary_ != nullptr ? primary_->policy->EpochDataKind() : EpochKind::kNone;
}

std::vector<uint8_t> Scheduler::ReportEpoch(TimePoint now) {
  if (EpochDataKind() == EpochKind::kNone) return {};
  std::vector<uint8_t> payload = primary_->policy->ReportEpoch(now);
  // A policy over its budget would spoil the whole envelope: cut it here
  // (formats are built so a cut keeps whole leading entries meaningful).
  if (payload.size() > kMaxEpochPayload) payload.resize(kMaxEpochPayload);
  return payload;
}

void Scheduler::StartEpoch(Epoch epoch, std::span<const uint8_t> reduced, TimePoint now) {
  if (EpochDataKind() != EpochKind::kNone) primary_->policy->StartEpoch(epoch, reduced, now);
}

bool Scheduler::EpochDone(TimePoint now) const {
  return primary_ != nullptr && primary_->policy->EpochDone(now);
}

std::optional<std::chrono::nanoseconds> Scheduler::EpochLength() const {
  if (primary_ == nullptr) return std::nullopt;
  return primary_->policy->EpochLength();
}

std::string Scheduler::PrimaryName() const {
  if (primary_ == nullptr) return std::string(fallback_->policy->Name());
  return std::string(primary_->policy->Name());
}

size_t Scheduler::Queued() const {
  uint64_t total = fallback_->stats.queued;
  if (primary_ != nullptr) total += primary_->stats.queued;
  for (const auto& slot : stopping_) total += slot->stats.queued;
  return total;
}

size_t Scheduler::Active() const {
  uint64_t total = fallback_->stats.active;
  if (primary_ != nullptr) total += primary_->stats.active;
  for (const auto& slot : stopping_) total += slot->stats.active;
  return total;
}

std::vector<PolicyStatus> Scheduler::Status(const std::vector<std::string>& registered,
                                            bool with_classes) const {
  std::vector<PolicyStatus> out;
  std::set<std::string, std::less<>> running;

  out.push_back(StatusOfSlot(*fallback_->policy, fallback_->stats, fallback_->classes,
                             fallback_->state, with_classes));
  out.back().fallback = true;
  running.insert(out.back().name);
  if (primary_ != nullptr) {
    out.push_back(StatusOfSlot(*primary_->policy, primary_->stats, primary_->classes,
                               primary_->state, with_classes));
    out.back().primary = true;
    running.insert(out.back().name);
  }
  for (const auto& slot : stopping_) {
    out.push_back(
        StatusOfSlot(*slot->policy, slot->stats, slot->classes, slot->state, with_classes));
    running.insert(out.back().name);
  }
  for (const std::string& name : registered) {
    if (running.count(name) != 0) continue;
    PolicyStatus stopped;
    stopped.name = name;
    stopped.state = PolicyState::kStopped;
    out.push_back(std::move(stopped));
    running.insert(name);  // a name listed twice is still one policy
  }
  return out;
}

}  // namespace sfs::nrs
