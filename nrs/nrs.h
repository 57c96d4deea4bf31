// The NRS of one OST (seed 000; Lustre's ptlrpc service with its regular and
// high-priority NRS heads): two nrs::Scheduler heads, each with its FIFO
// fallback and at most one primary policy. Requests whose op is in the
// high-priority set (default: fsync, truncate and punch) go to the
// high-priority head; Dequeue serves up to `hp_ratio` of those for each
// regular one when both have work (Lustre's srv_hpreq_ratio), and either
// head alone at full speed when the other has nothing ready.
//
// It is seed 002's local request scheduler (LRS) of its OST: Enqueue is
// lrs_incoming_request (never blocks, never fails), Dequeue is
// lrs_get_next_request (a request, nothing, or nothing until t), and
// ReportEpoch / StartEpoch are the policy data handed to eh_next_epoch and
// the lrs_start_epoch callback; ost::Service runs the rest of the life
// cycle (init: joins its epoch hub; shutdown: no more incoming, what is
// queued is served, then eh_last_epoch; fini: destroyed).
//
// Thread safety: NOT thread-safe, like Scheduler; ost::Service serializes it.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "nrs/epoch_data.h"
#include "nrs/scheduler.h"

namespace sfs::nrs {

enum class Head : uint8_t { kRegular, kHighPriority };
const char* HeadName(Head head);  // "reg", "hp"

// A set of ops, one bit per nrs::Op.
using OpSet = uint32_t;
constexpr OpSet OpBit(Op op) { return OpSet{1} << static_cast<unsigned>(op); }
constexpr OpSet kDefaultHpOps = OpBit(Op::kSync) | OpBit(Op::kTruncate) | OpBit(Op::kPunch);
constexpr uint32_t kDefaultHpRatio = 10;

// "fsync,punch,truncate" <-> OpSet, with the op names of nrs::OpName and
// "none" for the empty set. EINVAL for an unknown name.
Result<OpSet> ParseOpSet(std::string_view text);
std::string OpSetName(OpSet ops);

class Nrs {
 public:
  Nrs() = default;
  Nrs(const Nrs&) = delete;
  Nrs& operator=(const Nrs&) = delete;

  // Which ops are high priority and how many high-priority requests are
  // served per regular one (>= 1). Applies to requests enqueued later.
  void SetHighPriority(OpSet ops, uint32_t ratio);

  void Enqueue(Request* request, TimePoint now);
  // `force`: shutdown, any held request whatever the throttles (Scheduler).
  Pick Dequeue(TimePoint now, bool force = false);
  // REQUIRES: `request` came from Dequeue and is not yet completed.
  void Complete(Request* request, TimePoint now);
  // Seed 000's nrs_priority (Lustre's ptlrpc_hpreq_reorder): another
  // request waits for `request`'s completion, so a queued regular request
  // moves to the high-priority head, once. It keeps its arrival time
  // (waits count from it) and joins that head's FIFO fallback; its old
  // policy drops it (Policy::Remove). False if it is not queued on the
  // regular head (served already, in service, high priority already).
  // REQUIRES: `request` is alive and not completed.
  bool Raise(Request* request, TimePoint now);
  uint64_t raised() const { return raised_; }  // requests Raise moved
  // Takes a queued `request` back from whichever head holds it
  // (Scheduler::Remove): it leaves unserved, and the caller owns it again
  // (its caller was interrupted: ost::Service::Cancel). False if it is not
  // queued (handed out already, or held by a policy that cannot remove).
  // REQUIRES: `request` is alive and not completed.
  bool Remove(Request* request, TimePoint now);
  // Both heads serve every arrival at once (Scheduler::
  // ServesEveryArrivalAtOnce) and nothing is queued: a caller may serve
  // requests past the heads, then count them (Scheduler::CountServedAtOnce
  // on the head IsHigh names; the high-priority ratio does not see them,
  // which matters only while both heads have work queued).
  bool ServesEveryArrivalAtOnce() const {
    return Queued() == 0 && regular_.ServesEveryArrivalAtOnce() && high_.ServesEveryArrivalAtOnce();
  }
  // Scheduler::TakeArrivedBefore on both heads.
  std::vector<Request*> TakeArrivedBefore(TimePoint deadline, TimePoint now);

  // The policy data of both heads' primaries for the epoch handler (an
  // envelope of nrs/epoch_data.h, participants = 1), and the start of the
  // next epoch with the reduction of every OST's data.
  EpochData ReportEpoch(TimePoint now);
  void StartEpoch(Epoch epoch, const EpochData& reduced, TimePoint now);
  // Either head's primary is through with the epoch early (Policy::EpochDone).
  bool EpochDone(TimePoint now) const {
    return regular_.EpochDone(now) || high_.EpochDone(now);
  }
  // The shorter of the heads' primaries' epoch lengths, or `fallback`
  // (nrs_epoch_ms) when neither has one of its own.
  std::chrono::nanoseconds EpochLength(std::chrono::nanoseconds fallback) const;

  Scheduler& head(Head which) { return which == Head::kRegular ? regular_ : high_; }
  const Scheduler& head(Head which) const { return which == Head::kRegular ? regular_ : high_; }
  size_t Queued() const { return regular_.Queued() + high_.Queued(); }
  size_t Active() const { return regular_.Active() + high_.Active(); }
  OpSet hp_ops() const { return hp_ops_; }
  uint32_t hp_ratio() const { return hp_ratio_; }

 private:
  bool IsHigh(Op op) const { return (hp_ops_ & OpBit(op)) != 0; }
  // A request of that head was handed out: the run of high-priority ones
  // grows (up to the ratio, where only regular work that is ready stops
  // it) or ends.
  void CountPick(bool high);

  Scheduler regular_;
  Scheduler high_;
  OpSet hp_ops_ = kDefaultHpOps;
  uint32_t hp_ratio_ = kDefaultHpRatio;
  uint32_t hp_in_a_row_ = 0;  // high-priority requests served since the last regular one
  uint64_t raised_ = 0;
};

}  // namespace sfs::nrs
