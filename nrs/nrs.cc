#include "nrs/nrs.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>
#include <utility>

namespace sfs::nrs {
namespace {

// Every op, in enum order.
constexpr auto kAllOps = [] {
  std::array<Op, static_cast<size_t>(kLastOp) + 1> ops{};
  for (size_t i = 0; i < ops.size(); ++i) ops[i] = static_cast<Op>(i);
  return ops;
}();

std::string AllOpNames() {
  std::string out;
  for (Op op : kAllOps) out += std::string(OpName(op)) + ", ";
  return out + "or none";
}

// Both picks came back without a request: the earlier "until" wins.
Pick Earliest(const Pick& a, const Pick& b) {
  if (!a.not_before.has_value()) return b;
  if (!b.not_before.has_value()) return a;
  return *a.not_before <= *b.not_before ? a : b;
}

}  // namespace

const char* HeadName(Head head) { return head == Head::kRegular ? "reg" : "hp"; }

Result<OpSet> ParseOpSet(std::string_view text) {
  OpSet ops = 0;
  bool none = false;
  size_t words = 0;
  while (!text.empty()) {
    const size_t end = std::min(text.find_first_of(", \t\n"), text.size());
    const std::string_view word = text.substr(0, end);
    text = end < text.size() ? text.substr(end + 1) : std::string_view{};
    if (word.empty()) continue;
    words++;
    if (word == "none") {
      none = true;
      continue;
    }
    bool known = false;
    for (Op op : kAllOps) {
      if (word == OpName(op)) {
        ops |= OpBit(op);
        known = true;
      }
    }
    if (!known) {
      return Status::Error(EINVAL, "unknown op '" + std::string(word) + "' (" + AllOpNames() + ")");
    }
  }
  if (words == 0) return Status::Error(EINVAL, "empty op list (use 'none' for no op)");
  if (none && ops != 0) return Status::Error(EINVAL, "'none' cannot be combined with ops");
  return ops;
}

std::string OpSetName(OpSet ops) {
  std::string out;
  for (Op op : kAllOps) {
    if ((ops & OpBit(op)) == 0) continue;
    if (!out.empty()) out += ',';
    out += OpName(op);
  }
  return out.empty() ? "none" : out;
}

void Nrs::SetHighPriority(OpSet ops, uint32_t ratio) {
  hp_ops_ = ops;
  hp_ratio_ = std::max<uint32_t>(1, ratio);
}

void Nrs::CountPick(bool high) {
  if (!high) {
    hp_in_a_row_ = 0;
  } else if (hp_in_a_row_ < hp_ratio_) {
    hp_in_a_row_++;
  }
}

void Nrs::Enqueue(Request* request, TimePoint now) {
  const bool high = IsHigh(request->info.op);
  request->sched.high_priority = high;
  (high ? high_ : regular_).Enqueue(request, now);
}

bool Nrs::Raise(Request* request, TimePoint now) {
  if (request->sched.high_priority || !regular_.Remove(request, now)) return false;
  request->sched.high_priority = true;
  high_.EnqueueRaised(request, now);
  raised_++;
  return true;
}

bool Nrs::Remove(Request* request, TimePoint now) {
  return (request->sched.high_priority ? high_ : regular_).Remove(request, now);
}

Pick Nrs::Dequeue(TimePoint now, bool force) {
  // The common case of a service that keeps up: nothing waits (a request
  // a policy holds back is still queued), so no head needs asking.
  if (Queued() == 0) return Pick::Empty();
  Pick high_pick;
  const bool high_allowed = hp_in_a_row_ < hp_ratio_;
  if (high_allowed) {
    high_pick = high_.Dequeue(now, force);
    if (high_pick.request != nullptr) {
      CountPick(true);
      return high_pick;
    }
  }
  Pick regular_pick = regular_.Dequeue(now, force);
  if (regular_pick.request != nullptr) {
    CountPick(false);
    return regular_pick;
  }
  if (!high_allowed) {
    // The ratio only yields to regular work that is ready; with none, the
    // high-priority head goes on.
    high_pick = high_.Dequeue(now, force);
    if (high_pick.request != nullptr) return high_pick;
  }
  return Earliest(high_pick, regular_pick);
}

EpochData Nrs::ReportEpoch(TimePoint now) {
  EpochEnvelope envelope;
  envelope.participants = 1;
  for (Head which : {Head::kRegular, Head::kHighPriority}) {
    Scheduler& scheduler = head(which);
    const EpochKind kind = scheduler.EpochDataKind();
    if (kind == EpochKind::kNone) continue;
    envelope.sections.push_back(
        EpochSection{kind, static_cast<uint8_t>(which), scheduler.ReportEpoch(now)});
  }
  std::sort(envelope.sections.begin(), envelope.sections.end(),
            [](const EpochSection& a, const EpochSection& b) {
              return std::pair(a.kind, a.head) < std::pair(b.kind, b.head);
            });
  return EncodeEpochData(envelope);
}

std::chrono::nanoseconds Nrs::EpochLength(std::chrono::nanoseconds fallback) const {
  const auto regular = regular_.EpochLength();
  const auto high = high_.EpochLength();
  if (regular.has_value() && high.has_value()) return std::min(*regular, *high);
  if (regular.has_value()) return *regular;
  if (high.has_value()) return *high;
  return fallback;
}

void Nrs::StartEpoch(Epoch epoch, const EpochData& reduced, TimePoint now) {
  const EpochEnvelope envelope = DecodeEpochData(reduced);
  for (Head which : {Head::kRegular, Head::kHighPriority}) {
    Scheduler& scheduler = head(which);
    const EpochKind kind = scheduler.EpochDataKind();
    if (kind == EpochKind::kNone) continue;
    const EpochSection* section = FindSection(envelope, kind, static_cast<uint8_t>(which));
    scheduler.StartEpoch(epoch, section != nullptr ? std::span<const uint8_t>(section->payload)
                                                   : std::span<const uint8_t>(),
                         now);
  }
}

std::vector<Request*> Nrs::TakeArrivedBefore(TimePoint deadline, TimePoint now) {
  std::vector<Request*> taken = high_.TakeArrivedBefore(deadline, now);
  for (Request* request : regular_.TakeArrivedBefore(deadline, now)) taken.push_back(request);
  return taken;
}

void Nrs::Complete(Request* request, TimePoint now) {
  (request->sched.high_priority ? high_ : regular_).Complete(request, now);
}

}  // namespace sfs::nrs
