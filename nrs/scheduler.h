// One NRS head (seed 000 core framework; seed 002 local request scheduler):
// a FIFO fallback policy that always runs, at most one primary policy, and
// policies being stopped that still hold requests.
//
// States, as in Lustre's nrs.c: a registered policy that is not running is
// "stopped" (seed 000: AVAILABLE); the fallback FIFO is always "started";
// the primary is "started"; a replaced primary is "stopping" until it is
// empty, then it is destroyed. "starting" is the instant between building a
// policy and publishing it; it is never observable because StartPrimary runs
// under the caller's lock.
//
// Dequeue order: stopping policies first (oldest first) so a switch drains
// what was queued before it, then the primary and the fallback in turn (each
// serves one request while the other has work). Nothing is lost or served
// twice: every Request* given to Enqueue comes back from exactly one Dequeue.
//
// Thread safety: NOT thread-safe; the owner (ost::Service) serializes every
// call with its own mutex.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "nrs/policy.h"
#include "nrs/stats.h"

namespace sfs::nrs {

// Counters of one policy on one head. Times are sums in nanoseconds so
// means can be derived; everything is cumulative since the policy started.
struct PolicyStats {
  uint64_t queued = 0;      // held now
  uint64_t active = 0;      // handed out, not yet Complete()d
  uint64_t completed = 0;
  uint64_t bytes = 0;       // sum of info.length of completed requests
  uint64_t wait_ns = 0;     // arrival -> dequeue, completed requests
  uint64_t service_ns = 0;  // dequeue -> complete
};

enum class PolicyState { kStopped, kStarting, kStarted, kStopping };
const char* PolicyStateName(PolicyState state);

struct PolicyStatus {
  std::string name;
  PolicyState state = PolicyState::kStopped;
  bool fallback = false;  // the always-on FIFO
  bool primary = false;
  std::string description;  // Policy::Describe()
  PolicyStats stats;
  std::vector<ClassStats> classes;  // completed requests by Policy::ClassOf
};

// Order-dependent counters of a whole head: how far apart consecutive
// served requests on one object are (the seek distance a disk would travel,
// in logical object bytes) and how often service moved to another object.
struct HeadStats {
  uint64_t dequeued = 0;
  uint64_t seek_bytes = 0;
  uint64_t object_switches = 0;
};

class Scheduler {
 public:
  Scheduler();
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Never blocks, never fails: the primary takes it or the fallback does.
  void Enqueue(Request* request, TimePoint now);

  // Seed 000's nrs_priority: `request`, raised from the other head (Nrs::
  // Raise), joins this head's FIFO fallback, so it waits behind no policy
  // of this head (no second throttle) and is served in the order raised.
  void EnqueueRaised(Request* request, TimePoint now);
  // Takes a queued `request` back from whichever policy holds it
  // (Policy::Remove): it leaves as if never queued, no wait counted, and
  // the caller owns it again. False if it is not queued here (handed out
  // already, or held by a policy that cannot remove).
  // REQUIRES: `request` is alive and not completed.
  bool Remove(Request* request, TimePoint now);

  // Next request to serve, or nothing / nothing-until (see Pick). With
  // `force` (shutdown), any held request, ignoring throttles.
  Pick Dequeue(TimePoint now, bool force = false);

  // REQUIRES: `request` came from Dequeue and is not yet completed.
  void Complete(Request* request, TimePoint now);

  // True when every arrival would be served at once whatever it is: the
  // fallback alone runs (no primary, none stopping) and it serves arrivals
  // at once (FIFO). Then a caller may serve requests past this head and
  // count them afterwards with CountServedAtOnce.
  bool ServesEveryArrivalAtOnce() const;
  // Counts `requests` served past this head while ServesEveryArrivalAtOnce
  // held, as if each had been queued, handed out at once and completed: on the
  // fallback, zero wait, `service_ns` in all and `service` their latencies,
  // in the fallback's one class (a policy that serves arrivals at once
  // does not classify). No bytes: metadata requests move none.
  void CountServedAtOnce(uint64_t requests, uint64_t service_ns, const LatencyHistogram& service);

  // Removes and returns every queued request that arrived before `deadline`
  // (an OST that stopped answering fails them unserved). They leave as if
  // never queued: no wait or service time is counted, and the caller owns
  // them again. The others stay queued, enqueued afresh at `now` (their
  // order may change: this is for an OST that serves nothing anyway).
  std::vector<Request*> TakeArrivedBefore(TimePoint deadline, TimePoint now);

  // Makes `policy` the primary. The old primary (if any) becomes stopping
  // and is drained by Dequeue. Replacing FIFO-with-FIFO is allowed.
  void StartPrimary(std::unique_ptr<Policy> policy);
  // Back to the fallback alone; the old primary drains as above.
  void StopPrimary();
  // Passes new tunables to the primary and to stopping policies.
  void Retune(const Tunables& tunables, TimePoint now);

  // Seed 002 for the primary policy (Policy::EpochDataKind and friends):
  // what it coordinates, its data as an epoch ends, and the start of the
  // next one. Stopping policies and the fallback do not coordinate.
  EpochKind EpochDataKind() const;
  std::vector<uint8_t> ReportEpoch(TimePoint now);
  void StartEpoch(Epoch epoch, std::span<const uint8_t> reduced, TimePoint now);
  // The primary's Policy::EpochDone and Policy::EpochLength (false and
  // nullopt without one).
  bool EpochDone(TimePoint now) const;
  std::optional<std::chrono::nanoseconds> EpochLength() const;

  // Name of the primary policy, or "fifo" when only the fallback runs.
  std::string PrimaryName() const;
  size_t Queued() const;  // across all policies
  size_t Active() const;  // dequeued, not completed

  // Every policy that is started or stopping, plus `registered` names that
  // are not running, reported as stopped.
  // `with_classes`: also copy the per-class statistics (not free: up to 64
  // histograms per policy).
  std::vector<PolicyStatus> Status(const std::vector<std::string>& registered,
                                   bool with_classes = true) const;
  HeadStats head_stats() const { return head_stats_; }

 private:
  struct Slot;
  Pick DequeueFrom(Slot& slot, TimePoint now, bool force);
  void ReapStopped();
  // The slot whose stats `request` was queued against, or null.
  Slot* SlotOf(const Request& request);
  void NoteOrder(const RequestInfo& info);
  // Counts `request`, taken from `slot`'s policy, as in service from `now`.
  void HandOut(Slot& slot, Request* request, TimePoint now);
  // Retires the primary: stopping if it still holds requests, else destroyed.
  void RetirePrimary();

  std::unique_ptr<Slot> fallback_;
  std::unique_ptr<Slot> primary_;               // may be null
  std::vector<std::unique_ptr<Slot>> stopping_;  // oldest first
  HeadStats head_stats_;
  bool fallback_next_ = false;  // the fallback's turn comes before the primary's
  // The last read or write served, for seek distances.
  uint32_t last_ost_ = 0;
  uint64_t last_object_ = 0;
  uint64_t last_end_ = 0;
  bool have_last_ = false;
};

}  // namespace sfs::nrs
