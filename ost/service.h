// One object storage target: its backend, its NRS scheduler and its Boost.Asio
// service threads (seed 002's local request scheduler with service threads
// that ask it for the next request).
//
// Data path: Submit() enqueues into the OST's NRS (regular and high-priority
// heads) under mu_ and posts one "serve" token to the io_context
// (SubmitOrRun() instead serves a request on the caller's thread when the
// OST is idle and its policy dispatches it at once); a service
// thread running a token dequeues whatever the policies allow next, runs it
// against the object file and calls the request's observer. There is a
// token (posted or parked) for every queued request, so nothing waits
// without one, and a request leaves the scheduler once, so nothing is
// served twice.
// When the policies answer "nothing until t", the token is parked and one
// Asio steady_timer per OST is armed for the earliest such t; when it fires,
// the parked tokens take whatever has become ready, and the rest park again.
// No busy polling, no sleeping service thread, and one timer wake-up per
// deadline however many requests wait.
//
// An OST can stop answering (a hung disk, a stopped network filesystem): its
// threads then sit in system calls that do not return. Tick(), called by a
// monitor thread that never touches the disk (ost/monitor.h), notices a task
// in service longer than the timeout, marks the OST unresponsive (one log
// line, a listener call: placement gives it weight 0) and, while no request
// has completed for that long either (no service thread makes progress),
// fails with EIO the requests that have queued longer than the timeout: they
// never started, so nothing is half-written. It is responsive again as soon as no task has
// been in service that long. Space is sampled in the background (Tick asks
// for a sample; a sampler thread of the OST's own takes it, so a sample stuck
// on a hung disk takes no service thread from the requests), so statfs and
// automatic weights never wait on a disk; a missing or old sample says so.
//
// Epochs (seed 002): the OST's NRS is a local request scheduler that joins
// an epoch hub (shared by the OSTs of a filesystem) when the service
// starts. When the epoch's length has passed (epoch_length, or the
// policy's own nrs::Policy::EpochLength), or earlier once the policy is
// through with it (nrs::Policy::EpochDone, not before nrs::kMinEpochSpan),
// a service thread asks the hub for the next epoch, handing in the
// policies' data (nrs::Nrs::ReportEpoch); the hub's
// callback starts the epoch with the reduction of every OST's data. An OST
// seen unresponsive (Tick) is evicted at once and rejoins (kFirstEpoch)
// when it answers again; one whose service threads are all stuck cannot
// ask, and the hub evicts it after eh_timeout (rare: at most `threads`
// requests are in service, one possibly on a caller's thread, so a service
// thread is usually free to ask). At
// shutdown it leaves the hub once what was queued has been served.
//
// Thread safety: all public methods are safe from any thread. Lock order:
// the epoch callback's gate, then Service::mu_; Service::mu_ and the space
// sample's lock are leaves otherwise; observers, the health listener and
// the epoch hub are called with no lock held.
//
// ost::Service is that OST as its callers see it, an interface: LocalService
// (ost/local_service.h) is the one on this machine, the one this header
// describes; a remote one (client/remote_ost.h) forwards each request to the
// LocalService of an OSS, where its NRS runs.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "jobstats/job_stats.h"
#include "nrs/epoch_hub.h"
#include "nrs/nrs.h"
#include "nrs/policy.h"
#include "nrs/request.h"
#include "nrs/scheduler.h"
#include "nrs/target.h"
#include "nrs/tunables.h"
#include "ost/backend.h"
#include "ost/object_cache.h"

namespace sfs::ost {

// One object as the requests of an open file name it. Cheap to make and
// share; it holds no descriptor: the object is opened on demand by
// whichever thread serves a request (a service thread, or a caller's in
// SubmitOrRun), through its OST's bounded ObjectCache (ost/object_cache.h).
class ObjectHandle {
 public:
  ObjectHandle(ObjectCache* cache, uint64_t object_id) : cache_(cache), object_id_(object_id) {}
  uint64_t object_id() const { return object_id_; }
  // The open file, opened now if needed; hold it only for the I/O at hand.
  // With create=false a missing object is ENOENT.
  Result<std::shared_ptr<ObjectFile>> Get(bool create) { return cache_->Get(object_id_, create); }

 private:
  ObjectCache* const cache_;  // borrowed; the Service outlives its handles
  const uint64_t object_id_;
};

class IoRequest;

// Told when one request has finished. Called with no lock held on the
// thread that finished it: a service thread, the caller of SubmitOrRun, or
// whichever thread calls FinishStarted or Tick. May send a FUSE reply.
// Must not block on I/O.
class IoObserver {
 public:
  virtual ~IoObserver() = default;
  // `bytes` is what a read or write moved.
  virtual void PartDone(IoRequest& request, const Status& status, size_t bytes) = 0;
};

class IoRequest : public nrs::Request {
 public:
  std::shared_ptr<ObjectHandle> object;
  // Read or write buffers, in object order; they cover info.length bytes.
  // Borrowed from the observer, which keeps them alive until PartDone.
  std::vector<iovec> iov;
  // kRead, instead of iov: the write end of a pipe the bytes go into,
  // spliced from the object's cached pages (no copy through user space),
  // holes and the part past the object's end as zeros. The pipe has room
  // for info.length bytes; the observer owns it.
  int pipe = -1;
  uint64_t truncate_size = 0;  // kTruncate
  bool keep_size = false;      // kAllocate
  bool data_only = false;      // kSync: fdatasync
  int whence = 0;              // kSeek: SEEK_DATA or SEEK_HOLE from info.offset
  // The file recorded that this object was created: if it is missing it was
  // lost (EIO, never zeros), and nothing creates it again.
  bool must_exist = false;
  IoObserver* observer = nullptr;  // borrowed; outlives the request
  uint64_t tag = 0;                // free for the observer (e.g. stripe index)
  uint64_t ino = 0;                // the file, for log lines
  // Where a change reports the object's allocated bytes once it is done
  // (st_blocks x 512); borrowed, may be null.
  std::atomic<uint64_t>* allocation = nullptr;
  // kSeek, set by the service: the object offset found, or nullopt if the
  // object has no data (SEEK_DATA) at or after info.offset.
  std::optional<uint64_t> seek_result;
  // Set by the service: the object file exists now (opened, or created by
  // this request), whatever the request's outcome. A write or
  // preallocation that created its object and then failed (ENOSPC inside
  // the OST's filesystem) still leaves the object and what it allocated:
  // the file must record it so that unlink frees it.
  bool object_exists = false;
};

struct ServiceOptions {
  uint32_t index = 0;
  int threads = 2;
  // Object files kept open at once (ObjectCache): this OST's share of the
  // daemon's file descriptors.
  size_t open_objects = 1024;
  // A task in service longer than this makes the OST unresponsive (Tick).
  std::chrono::nanoseconds timeout = std::chrono::seconds(30);
  // How many requests may run on their callers' threads at once (see
  // SubmitOrRun), shared by the OSTs given the same counter: a caller's
  // thread stuck on a hung disk is one FUSE worker fewer, so the counter
  // bounds how many a hung OST can take (a request SubmitOrStart started
  // holds no thread and takes no share). Null: never on the caller's
  // thread, nor started by it.
  std::shared_ptr<std::atomic<int>> inline_budget;
  // The epoch hub this OST's scheduler joins, shared by the OSTs of one
  // filesystem; null: a LocalEpochHub of its own (nothing to coordinate).
  std::shared_ptr<nrs::EpochHub> epochs;
  // How long an epoch runs before the scheduler asks for the next one, for
  // policies without a length of their own (nrs_epoch_ms).
  std::chrono::nanoseconds epoch_length = std::chrono::milliseconds(50);
};

// Live per-OST counters beside the scheduler's per-policy ones.
struct ServiceCounters {
  uint64_t errors = 0;
  uint64_t last_error = 0;  // errno of the most recent failure
  // Failures the caller sees as EIO: the OST itself is failing, as opposed
  // to ENOSPC, EDQUOT or EFBIG, which say something about space or a file.
  uint64_t io_errors = 0;
  uint64_t bytes = 0;      // moved by reads and writes since start
  uint64_t queued = 0;     // now, both heads
  uint64_t active = 0;     // now, in service
  uint64_t raised = 0;     // moved to the high-priority head by Raise, since start
  uint64_t cancelled = 0;  // taken back unserved by Cancel, since start
  uint64_t started = 0;    // reads and writes started by their caller (SubmitOrStart)
  bool responsive = true;  // see Service::Tick
  // How long the oldest task now in service has been (0: none).
  std::chrono::nanoseconds oldest_in_service{0};
};

// The latest background sample of an OST's space (Service::Tick).
struct SpaceSample {
  std::optional<SpaceInfo> space;    // none until a sample succeeded
  Status error;                      // of the latest attempt
  std::optional<nrs::TimePoint> at;  // when the latest successful sample was taken
  // When its statvfs returned: a change begun later is surely not in it
  // (free-space grants credit frees by this, resource/free_space.h).
  std::optional<nrs::TimePoint> until;
};

// How job stats count a request of `op` (kCount: not at all).
jobstats::JobOp JobOpOf(nrs::Op op);

class Service : public nrs::Target {
 public:
  Service() = default;
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  // A local service serves every request already submitted (at once: see
  // Drain), then joins its threads; a remote one fails what is still in
  // flight with EIO once its server has had `timeout` to answer.
  virtual ~Service() = default;

  virtual uint32_t index() const = 0;
  // The object store behind the OST: the directory's on this machine, or
  // one that reaches the OSS's (settling writes, fsck, Describe).
  virtual Backend& backend() = 0;

  virtual std::shared_ptr<ObjectHandle> Object(uint64_t object_id) = 0;
  // Closes the object's file if it is cached (after its file was closed, so
  // an idle OST holds no descriptor and its filesystem can be remounted
  // read-only). On a service thread: a close may wait on the disk.
  virtual void CloseObject(uint64_t object_id) = 0;
  // A new share of the daemon's descriptors (ServiceOptions::open_objects),
  // when the filesystem gains an OST; see ObjectCache::SetCapacity.
  virtual void SetOpenObjects(size_t open_objects) = 0;

  // Hands the request to the scheduler and returns at once. `arrival` in
  // request->info is set here if it was left at its default.
  virtual void Submit(std::unique_ptr<IoRequest> request) = 0;
  // Like Submit, but when the OST can take the request now (responsive,
  // idle: nothing queued or in service, a share of the inline budget free,
  // and its policy dispatches it at once) it is served on the calling thread: no hand-off
  // to a service thread, and the observer is called before this returns.
  // It still passes the scheduler (classified, counted, throttled). If it
  // must wait instead, `before_queueing` runs first, while no other thread
  // can see it yet: the caller makes the buffers it borrowed its own. It
  // may run under the OST's lock, so it must only copy memory.
  virtual void SubmitOrRun(std::unique_ptr<IoRequest> request,
                           const std::function<void(IoRequest&)>& before_queueing) = 0;

  // For a thread that must never wait on a disk (an io_uring queue's,
  // ring/fuse_ring.h) but can start a read or write and hear of it later:
  // like SubmitOrRun, but a read (into iov) or write of an object open
  // already (writable, for a write), which the OST can take now, is handed
  // to `start` with the object's file instead of being run. `start` starts
  // it without waiting (an asynchronous read or write of file.NativeFd()
  // at info.offset) and returns true; FinishStarted must then follow
  // exactly once, from any thread. The request is in service meanwhile,
  // in the inline slot, so Tick sees one that never ends; it holds no
  // thread, so it takes no share of the inline budget and no service
  // thread's place (as a request run on a caller's thread does: the
  // service threads serve what queues behind it meanwhile). Anything else
  // (another op, an object not open, a busy OST, a throttle, `start`
  // declining) goes to the service threads as Submit, `before_queueing`
  // first.
  using IoStarter = std::function<bool(IoRequest&, std::shared_ptr<ObjectFile>)>;
  virtual void SubmitOrStart(std::unique_ptr<IoRequest> request,
                             const std::function<void(IoRequest&)>& before_queueing,
                             const IoStarter& start) = 0;
  // The started request is done: `bytes` read (short only at the object's
  // end; the rest reads as zeros) or written (all of them), or the
  // failure. `file` is the one `start` had. Counted, stated and observed
  // as any request; the observer runs on the calling thread.
  virtual void FinishStarted(IoRequest* request, ObjectFile& file, Status status, size_t bytes) = 0;
  // Lets go of the file `start` had, after FinishStarted. If this may be
  // its last reference (the object's cache let it go meanwhile), the drop,
  // a close that may wait on the disk, is left to a service thread.
  virtual void LetGo(std::shared_ptr<ObjectFile> file) = 0;

  // Seed 000's nrs_priority: another request waits for `request`, so if it
  // is still queued on the regular head it moves to the high-priority head
  // (nrs::Nrs::Raise) and the service looks at its queues at once (a
  // throttled request's token may be parked). Nothing if it is served or
  // in service already. REQUIRES: `request` was submitted here and its
  // observer has not been told it is done (so it is alive).
  virtual void Raise(IoRequest& request) = 0;
  // Its caller gave up (an interrupted FUSE request, fs/interrupts.h): if
  // `request` is still queued, on either head, it leaves unserved and the
  // caller owns it again (Submit took it released): true, and its
  // observer never hears of it. False if it was handed out already (in
  // service, or done): it goes on, and its observer is told as usual. Its
  // serve token stays posted or parked and then finds nothing, as a token
  // whose request another token took. REQUIRES: as for Raise.
  virtual bool Cancel(IoRequest& request) = 0;

  // nrs::Target: switch the primary policy of one head while I/O runs (see
  // nrs::Scheduler). Requests parked on a throttling policy are looked at
  // again at once.
  virtual void StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) = 0;
  virtual void StopPolicy(nrs::Head head) = 0;
  void StartPolicy(std::unique_ptr<nrs::Policy> policy) {
    StartPolicy(nrs::Head::kRegular, std::move(policy));
  }
  void StopPolicy() { StopPolicy(nrs::Head::kRegular); }
  // New tunables for the policies of one head (validated by the caller).
  virtual void Retune(nrs::Head head, const nrs::Tunables& tunables) = 0;
  virtual void SetHighPriority(nrs::OpSet ops, uint32_t ratio) = 0;
  // Epochs from the next one on last this long (nrs_epoch_ms).
  virtual void SetEpochLength(std::chrono::nanoseconds length) = 0;
  // The epoch this OST's scheduler runs (0: none yet, or evicted), and
  // where it stands with its hub.
  virtual nrs::Epoch epoch() const = 0;
  virtual nrs::Standing EpochStanding() const = 0;
  // Shutdown: from now on requests are served as fast as the threads go,
  // ignoring every throttle (TBF, delay), so a stop never waits on a rate.
  virtual void Drain() = 0;

  virtual std::string PrimaryName(nrs::Head head) const = 0;
  virtual std::vector<nrs::PolicyStatus> PolicyStatus(nrs::Head head,
                                                      const std::vector<std::string>& registered,
                                                      bool with_classes = true) const = 0;
  std::vector<nrs::PolicyStatus> PolicyStatus(const std::vector<std::string>& registered) const {
    return PolicyStatus(nrs::Head::kRegular, registered);
  }
  virtual nrs::HeadStats HeadStats(nrs::Head head) const = 0;
  virtual ServiceCounters Counters() const = 0;

  // See the header comment. Called every so often by the monitor with the
  // current time; never waits on the OST. Failed requests' observers run on
  // the calling thread.
  virtual void Tick(nrs::TimePoint now) = 0;
  // Told (on Tick's thread, no lock held) when the OST turns unresponsive
  // (false) or answers again (true). Set before the first Tick.
  virtual void SetHealthListener(std::function<void(uint32_t index, bool responsive)> listener) = 0;
  // Told (on the serving thread, no lock held) when a truncate, punch or
  // destroy freed `bytes` of the OST's disk (the object's allocation
  // before it, less after), in a change begun at `from`; not when two
  // frees of one object overlapped (each would count the other's). Set
  // before the first request.
  virtual void SetSpaceFreedListener(
      std::function<void(uint32_t index, uint64_t bytes, nrs::TimePoint from)> listener) = 0;
  virtual bool responsive() const = 0;
  // The latest background space sample; never waits on the OST.
  virtual SpaceSample LastSpace() const = 0;
  // Asks the sampler thread for a space sample (one more after the one
  // under way, if any).
  virtual void RequestSpaceSample() = 0;
  // Destroys queued or in service now: space about to be freed. Free-space
  // grants wait for them before refusing (an unlink replies before its
  // objects are gone), as a Lustre client waits for its destroys in flight.
  virtual uint64_t DestroysInFlight() const = 0;
  // Whether the OST's filesystem was last seen read-only: a change failed
  // with EROFS and none has succeeded since.
  virtual bool read_only() const = 0;
  // What this OST served per job id (requests that succeeded; latency from
  // arrival to completion, queueing included).
  virtual jobstats::JobStats& job_stats() = 0;
};

}  // namespace sfs::ost
