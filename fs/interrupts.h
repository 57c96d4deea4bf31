// FUSE_INTERRUPT for requests answered later by an op of their own (a read
// or write whose parts wait in their OSTs' NRS queues, a metadata request
// held by the metadata service's policy): the kernel sends it
// when the caller got a signal, and waits for the request's answer. An
// interrupted op whose work has not started ends at once with EINTR
// (docs/design.md, "Interrupts").
//
// libfuse calls the interrupt callback on the thread that read the
// INTERRUPT (or at once inside fuse_req_interrupt_func, if it came first),
// holding the request's own lock but not stopping another thread from
// replying meanwhile: the reply frees the request only once the callback
// is through, but the op may be gone. So the callback gets this table, not
// the op, and finds the op by its request here; an op leaves the table
// before it replies (Forget), and the one that finds it in the table is
// the one that may act on it.
//
// Thread safety: every method from any thread. Lock order: libfuse's
// request lock, then the table's mu_, then the op's own locks (what
// Interruptible::TakeBack takes, e.g. fs::MultiPartOp::mu_, then
// ost::Service's, or mdt::Service's). Never call Watch with an op lock held: it may run the
// callback at once.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "fs/fuse_api.h"

namespace sfs::fs {

// An op answering a FUSE request later, whose waiting work can be taken
// back when the caller is interrupted.
class Interruptible {
 public:
  virtual ~Interruptible() = default;
  // The caller was interrupted: takes back the op's work if none of it has
  // started, and returns how much (>0: the op is now to end with EINTR,
  // by EndTakenBack); 0 if some had started (the op goes on and answers
  // when done, as if not interrupted). Runs under the table's lock: must
  // neither reply nor call into the table.
  virtual size_t TakeBack() = 0;
  // After TakeBack returned `taken` > 0, with no table lock held: ends the
  // op (EINTR), which replies and may delete it.
  virtual void EndTakenBack(size_t taken) = 0;
};

class InterruptTable {
 public:
  // How Watch asks for the request's interrupts: in the daemon
  // fuse_req_interrupt_func(req, <callback calling Interrupt(req)>, table),
  // which calls back at once if the interrupt came first. Tests give their own.
  using Arm = std::function<void(fuse_req_t req, InterruptTable* table)>;
  // The calling thread of a request (in the daemon fuse_req_ctx's pid),
  // for Signalled; null: unknown (never found signalled).
  using CallerOf = std::function<pid_t(fuse_req_t req)>;
  InterruptTable();
  explicit InterruptTable(Arm arm, CallerOf caller_of = nullptr);
  InterruptTable(const InterruptTable&) = delete;
  InterruptTable& operator=(const InterruptTable&) = delete;

  // From now until Forget(req), an interrupt of `req` reaches `op`, maybe
  // before this returns (on this thread). REQUIRES: `op` stays alive until
  // Forget(req) returned or its EndTakenBack was called.
  void Watch(fuse_req_t req, Interruptible* op);
  // The op is about to answer `req`: no interrupt reaches it once this
  // returns (one under way is waited for).
  void Forget(fuse_req_t req);
  // `req`'s caller was interrupted (libfuse's callback): the watching op
  // is asked to take its work back, and if it did, leaves the table and
  // ends. Nothing if no op watches `req` (it answered already, or was
  // never watched).
  void Interrupt(fuse_req_t req);

  // A request watched since before `before` whose caller `signalled`
  // says has a signal pending (see SignalSweep), with when it was watched.
  struct Waiting {
    fuse_req_t req;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Waiting> Signalled(std::chrono::steady_clock::time_point before,
                                 const std::function<bool(pid_t)>& signalled) const;
  // Interrupt, if `waiting.req` is still the request watched then (not one
  // made since at the same address).
  void InterruptIfStill(const Waiting& waiting);

  size_t watched() const;  // ops in the table now
  uint64_t ended() const { return ended_.load(std::memory_order_relaxed); }

 private:
  // Every read and write is watched and forgotten: shards, so that no lock
  // is shared by every operation (issue 33, item 5).
  struct Watched {
    Interruptible* op = nullptr;
    pid_t caller = 0;  // the calling thread, 0 if unknown
    std::chrono::steady_clock::time_point since;
  };
  struct alignas(64) Shard {
    mutable std::mutex mu;  // guards ops; "the table's lock" above
    std::unordered_map<fuse_req_t, Watched> ops;  // GUARDED_BY(mu)
  };
  static constexpr size_t kShards = 16;
  Shard& ShardOf(fuse_req_t req);

  void InterruptWatched(fuse_req_t req, const std::chrono::steady_clock::time_point* since);

  const Arm arm_;
  const CallerOf caller_of_;
  std::array<Shard, kShards> shards_;
  std::atomic<uint64_t> ended_{0};  // ops ended by an interrupt
};

// Whether thread `tid` has a signal pending that it does not block
// (/proc/TID/status: SigPnd or ShdPnd outside SigBlk), which is what ends
// a caller's interruptible wait in the kernel. False if it cannot be read.
bool SignalPending(pid_t tid);

// Over io_uring the kernel (6.18) sends no FUSE_INTERRUPT for a request
// whose caller was signalled before the request reached the daemon: the
// /dev/fuse read path queues the interrupt then (fuse_dev_do_read), the
// ring's send path (fuse_uring_prepare_send) does not. A caller that
// queued on a directory's lock behind a throttled mkdir, got its signal
// there and then sent its own request would wait for the throttle. So,
// on a mount served over io_uring, a thread looks every `interval` at the
// requests watched for longer than that and interrupts those whose caller
// has a signal pending (SignalPending), as the kernel's interrupt would.
class SignalSweep {
 public:
  SignalSweep(InterruptTable& table, std::chrono::milliseconds interval);
  ~SignalSweep();  // stops the thread
  SignalSweep(const SignalSweep&) = delete;
  SignalSweep& operator=(const SignalSweep&) = delete;
  uint64_t interrupted() const { return interrupted_.load(std::memory_order_relaxed); }

 private:
  void Run();
  InterruptTable& table_;
  const std::chrono::milliseconds interval_;
  std::mutex mu_;  // guards stop_
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<uint64_t> interrupted_{0};
  std::thread thread_;  // last: started once the rest is set
};

}  // namespace sfs::fs
