// The metadata service (Lustre's MDT request handling; seed 000 schedules
// metadata services as it does data ones): the NRS heads every metadata
// operation passes through before it runs, with the policies, rules and
// control syntax of the OSTs' heads (control/nrs_control.h, "mdt." settings).
//
// A metadata operation runs on the caller's thread (a FUSE worker) as soon
// as its policy lets it, and while fewer than `max_active` requests are in
// service. Two ways in:
// - The door (fifo alone in both heads, nothing queued, not draining: the
//   default, idle service): the caller takes a place with one atomic
//   compare-and-swap, serves its request and counts it in its own thread's
//   tally, taking no lock. The tallies are folded into the NRS statistics
//   (fifo's, as if each request had been queued and handed out at once)
//   whenever those are read, so every figure stays exact. A lock shared by
//   every FUSE worker cost more than its instructions on a 2-core machine:
//   a worker preempted while holding it stalls the others.
// - The locked way, otherwise: Submit enqueues the request under the
//   service's lock and serves what the policies hand out next, possibly
//   another caller's request. A request a policy holds back (a TBF rate, a
//   delay) stays queued and its caller returns at once to read the next
//   FUSE request, so a throttled job never takes a worker from the others:
//   the service's own threads serve it when the policy allows (one Asio
//   timer for the earliest such time), or a caller that comes by first
//   does. Whoever finishes a request serves the next ready one before
//   leaving, so nothing ready waits while a place in service is free.
// Starting a policy closes the door before it returns, so every later
// arrival meets the policy; a request queued for want of a place closes it
// until the queue is empty again.
//
// Epochs (seed 002) are local: the service is the only metadata scheduler,
// so each epoch starts with its own policy data as the reduction (what an
// nrs::LocalEpochHub gives), every epoch_length or earlier once the policy
// is through with it (nrs::Policy::EpochDone, never before
// nrs::kMinEpochSpan). Under fifo alone, which has no epoch data, the
// epochs rest after the first (no timer wakes a thread) until a policy
// starts.
//
// Thread safety: all public methods are safe from any thread. The
// service's lock is a leaf; no lock is held while a request is served.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nrs/nrs.h"
#include "nrs/request.h"
#include "nrs/target.h"

namespace sfs::mdt {

// One metadata operation. info.op is a metadata op (nrs::IsMetadata);
// uid, gid, pid and jobid say who asked, as policies classify by them.
class MdRequest : public nrs::Request {
 public:
  // Does the operation and sends its reply. Called exactly once, with no
  // service lock held, on whichever thread serves it; the service destroys
  // the request afterwards. It must own whatever it needs: it may run after
  // the thread that submitted it has moved on.
  virtual void Serve() = 0;
};

struct ServiceOptions {
  // Requests in service at once, on callers' threads and the service's
  // own (it runs this many). At least the FUSE workers of the mount (4):
  // under fifo, each worker then serves its own request and nothing ever
  // queues.
  size_t max_active = 4;
  // How long an epoch runs for policies without a length of their own
  // (nrs_epoch_ms).
  std::chrono::nanoseconds epoch_length = std::chrono::milliseconds(50);
};

struct ServiceCounters {
  uint64_t queued = 0;     // now, both heads
  uint64_t active = 0;     // now, in service
  uint64_t completed = 0;  // since start
  // Served by the service's own threads: a policy held them back and no
  // caller came by when they became ready.
  uint64_t served_by_service = 0;
  uint64_t cancelled = 0;  // taken back unserved by Cancel, since start
};

class Service final : public nrs::Target {
 public:
  explicit Service(const ServiceOptions& options);
  // Serves every request still queued, ignoring throttles (as Drain), then
  // stops its threads. REQUIRES: no Submit from here on.
  ~Service() override;
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Schedules `request` (info.arrival stamped here if left at its default)
  // and serves what is ready on this thread, possibly this request before
  // returning, possibly a request another caller submitted.
  void Submit(std::unique_ptr<MdRequest> request);
  // The caller-owned form of Submit's common case: when the door is open
  // (fifo alone, nothing queued) and a place in service is free, serves
  // `request` on this thread without a lock and returns true. Else returns
  // false at once, nothing scheduled, no lock taken: the caller then
  // Submits it. Lets the request live on the caller's stack.
  bool ServeIfAdmitted(MdRequest& request);
  // Its caller gave up (an interrupted FUSE request, fs/interrupts.h): if
  // a policy still holds `request`, it leaves unserved and the caller owns
  // it again (Submit took it): true, and it is never served. False if it
  // is not queued (handed out, or not submitted yet). REQUIRES: `request`
  // is alive (its Serve has not returned).
  bool Cancel(MdRequest& request);
  // Shutdown: from now on requests are served at once, ignoring every
  // throttle, so a stop never waits on a rate.
  void Drain();

  // nrs::Target
  void StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) override;
  void StopPolicy(nrs::Head head) override;
  void Retune(nrs::Head head, const nrs::Tunables& tunables) override;
  void SetHighPriority(nrs::OpSet ops, uint32_t ratio) override;
  void SetEpochLength(std::chrono::nanoseconds length) override;
  std::vector<nrs::PolicyStatus> PolicyStatus(nrs::Head head,
                                              const std::vector<std::string>& registered,
                                              bool with_classes = true) const override;
  nrs::HeadStats HeadStats(nrs::Head head) const override;

  std::string PrimaryName(nrs::Head head) const;
  nrs::Epoch epoch() const;
  ServiceCounters Counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sfs::mdt
