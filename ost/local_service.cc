// The per-OST service: Asio owns the threads and the timer, nrs::Nrs owns
// the order, and one "serve" token is posted per submitted request.
#include "ost/local_service.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <condition_variable>
#include <cassert>
#include <optional>
#include <thread>
#include <utility>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "common/log.h"
#include "ost/execute.h"

namespace sfs::ost {
namespace {

// The busy slot of the service thread running now (null on other threads):
// when its current task began, in steady-clock nanoseconds, 0 when idle.
thread_local std::atomic<int64_t>* tls_busy = nullptr;

int64_t SteadyNanos(nrs::TimePoint t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Marks the calling service thread busy for its lifetime: what Tick looks
// at to tell a hung OST. Every task that may touch the disk holds one.
class BusyScope {
 public:
  BusyScope() {
    if (tls_busy != nullptr) tls_busy->store(SteadyNanos(nrs::Clock::now()));
  }
  ~BusyScope() {
    if (tls_busy != nullptr) tls_busy->store(0);
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
};

}  // namespace

struct LocalService::Impl {
  Impl(uint32_t index, Backend* backend, ObjectCache* objects, std::chrono::nanoseconds timeout,
       int threads, std::shared_ptr<std::atomic<int>> inline_budget,
       std::shared_ptr<nrs::EpochHub> epochs, std::chrono::nanoseconds epoch_length)
      : index(index),
        backend(backend),
        objects(objects),
        timeout(timeout),
        inline_budget(std::move(inline_budget)),
        inline_slot(static_cast<size_t>(threads) + 1),
        // One per service thread, the space sampler's, and the inline one.
        busy_since(inline_slot + 1),
        log(Logger("ost")),
        work(io.get_executor()),
        timer(io),
        epochs(epochs != nullptr ? std::move(epochs) : std::make_shared<nrs::LocalEpochHub>()),
        epoch_length(epoch_length),
        epoch_timer(io),
        epoch_gate(std::make_shared<EpochGate>()) {
    epoch_gate->impl = this;
  }

  void ServeOne();
  // Gives every parked token that can have a request now its request, and
  // re-arms the timer for the rest.
  void WakeParked();
  void Run(std::unique_ptr<IoRequest> request);
  // What Run does once the request has run: counters, job stats, the
  // scheduler's completion, the observer.
  void Complete(std::unique_ptr<IoRequest> request, const Outcome& outcome);
  // REQUIRES: mu held. Arms the timer for `when` if it is not armed for an
  // earlier time (or always, with `force`).
  void ArmLocked(nrs::TimePoint when, bool force);
  void Finish(IoRequest& request, const Outcome& outcome, Status* for_caller);

  // Hands the policies' data to the hub for the next epoch, unless a call
  // is pending, the OST is unresponsive or the service is stopping.
  void AskNextEpoch();
  // The policy is through with its epoch early (nrs::Nrs::EpochDone): ask
  // for the next one now (or once nrs::kMinEpochSpan has passed) rather
  // than when the epoch's length has. REQUIRES: mu held.
  void AskEarlyIfDoneLocked(nrs::TimePoint now);
  // The epoch timer: at `when`, OnEpochTimer. REQUIRES: mu held.
  void ArmEpochTimerLocked(nrs::TimePoint when);
  // Asks for the next epoch if this one's length has passed or the policy
  // is through with it; otherwise waits for the rest of its length.
  void OnEpochTimer();
  // The hub's callback: starts `epoch` (or, on a refusal, rejoins later).
  void StartEpoch(nrs::Epoch epoch, const std::shared_ptr<const nrs::EpochData>& reduced);

  const uint32_t index;
  // The age of the oldest task in service at `now` (0: none).
  std::chrono::nanoseconds OldestBusy(nrs::TimePoint now) const;
  // The space sampler's thread: one sample per request (RequestSpaceSample)
  // until `sampler_stop`. A thread of its own, so a sample stuck on a hung
  // disk never takes a service thread from the requests.
  void SampleLoop();

  Backend* const backend;  // borrowed from LocalService::backend_, which outlives Impl
  ObjectCache* const objects;  // borrowed from LocalService::objects_, likewise
  const std::chrono::nanoseconds timeout;
  const std::shared_ptr<std::atomic<int>> inline_budget;  // see ServiceOptions
  // The busy slot of the one request that may be served on a caller's
  // thread at a time (SubmitOrRun serves an idle OST only).
  const size_t inline_slot;
  // One slot per service thread (see tls_busy), the sampler's, and the
  // inline one, claimed by a caller while it serves.
  std::vector<std::atomic<int64_t>> busy_since;
  // Claims the inline slot, marking it busy since now, and for a request
  // the caller's thread will run (`on_caller_thread`) a share of the
  // budget too; false if either is taken. A started request holds no
  // thread (SubmitOrStart), so the budget, which bounds the threads hung
  // OSTs can take, is not charged for it: the slot alone bounds it.
  bool ClaimInline(bool on_caller_thread);
  void ReleaseInline();
  // Whether the inline slot's holder is a started request (no thread, no
  // share of the budget) rather than one run on its caller's thread; set
  // by the holder's claim, cleared as it gives the slot back (the slot's
  // claim orders them). ServeOne reads it under `mu` while inline_running
  // says the slot is held: AdmitIfIdle counted that under `mu` after the
  // claim.
  std::atomic<bool> inline_started{false};
  const std::shared_ptr<spdlog::logger> log;

  boost::asio::io_context io;
  // Keeps io.run() from returning while idle; reset by ~Service to drain.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;

  // Leaf lock (see service.h); never held across I/O or an observer call.
  mutable std::mutex mu;
  nrs::Nrs nrs;                           // GUARDED_BY(mu)
  size_t parked = 0;                      // GUARDED_BY(mu): tokens waiting for the timer
  size_t service_threads = 1;             // set at start, then read only
  size_t inline_running = 0;              // GUARDED_BY(mu): SubmitOrRun runs in service
  size_t deferred_tokens = 0;             // GUARDED_BY(mu): tokens waiting for one to end
  uint64_t cancelled = 0;                 // GUARDED_BY(mu): requests LocalService::Cancel took back
  std::optional<nrs::TimePoint> armed_for;  // GUARDED_BY(mu): the timer's expiry, if waiting
  boost::asio::steady_timer timer;        // GUARDED_BY(mu): every call on it

  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> io_errors{0};
  std::atomic<uint64_t> last_error{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> started{0};        // reads and writes SubmitOrStart had started
  bool responsive = true;                  // GUARDED_BY(mu)
  // When a request last completed (steady ns; 0: never): while some do,
  // the OST makes progress and nothing queued is failed.
  std::atomic<int64_t> last_completion{0};
  std::function<void(uint32_t, bool)> on_health;  // set before the first Tick
  // Set before the first request (LocalService::SetSpaceFreedListener).
  std::function<void(uint32_t, uint64_t, nrs::TimePoint)> on_freed;
  FreeTracker frees;  // truncates, punches and destroys in progress
  std::atomic<uint64_t> destroys{0};  // stamped and not finished (DestroysInFlight)

  mutable std::mutex space_mu;  // guards the four below; a leaf
  std::condition_variable sample_wanted;
  SpaceSample space;            // GUARDED_BY(space_mu)
  bool sample_requested = false;  // GUARDED_BY(space_mu)
  bool sampler_stop = false;    // GUARDED_BY(space_mu)
  std::thread sampler;

  // Per job id, what this OST served (LocalService::job_stats); its own lock, a leaf.
  jobstats::JobStats job_stats;

  // Epochs. The hub may call back from any thread, even after ~Service
  // began; callbacks go through the gate, which ~Service closes.
  const std::shared_ptr<nrs::EpochHub> epochs;
  std::chrono::nanoseconds epoch_length;  // GUARDED_BY(mu)
  nrs::Epoch epoch = nrs::kFirstEpoch;   // GUARDED_BY(mu): 0 until joined, or after eviction
  bool epoch_asked = false;              // GUARDED_BY(mu): a NextEpoch call is pending
  bool early_ask_armed = false;          // GUARDED_BY(mu): an early ask is on its way
  nrs::TimePoint epoch_started{};        // GUARDED_BY(mu)
  bool epochs_stopped = false;           // GUARDED_BY(mu): shutdown began
  boost::asio::steady_timer epoch_timer;  // GUARDED_BY(mu): every call on it
  struct EpochGate {
    std::mutex mu;         // taken before Impl::mu; guards impl
    Impl* impl = nullptr;  // null once ~Service closed the gate
  };
  const std::shared_ptr<EpochGate> epoch_gate;

  std::atomic<bool> read_only{false};  // see LocalService::read_only()
  std::atomic<bool> stopping{false};  // only to catch Submit after ~Service began
  std::atomic<bool> draining{false};  // Drain(): dequeue ignoring throttles
};

jobstats::JobOp JobOpOf(nrs::Op op) {
  switch (op) {
    case nrs::Op::kRead: return jobstats::JobOp::kRead;
    case nrs::Op::kWrite: return jobstats::JobOp::kWrite;
    case nrs::Op::kTruncate: return jobstats::JobOp::kTruncate;
    case nrs::Op::kPunch: return jobstats::JobOp::kPunch;
    case nrs::Op::kAllocate: return jobstats::JobOp::kAllocate;
    case nrs::Op::kSync: return jobstats::JobOp::kSync;
    case nrs::Op::kDestroy: return jobstats::JobOp::kDestroy;
    case nrs::Op::kSeek: return jobstats::JobOp::kSeek;
    default: break;  // metadata ops never reach an OST
  }
  return jobstats::JobOp::kCount;  // not counted
}

// Set while a caller's thread serves a request inline: one it submits from
// an observer then goes through the queue (no nesting on one stack).
thread_local bool tls_serving_inline = false;

bool LocalService::Impl::ClaimInline(bool on_caller_thread) {
  if (!inline_budget || tls_serving_inline || draining.load()) return false;
  int64_t idle = 0;
  if (!busy_since[inline_slot].compare_exchange_strong(idle, SteadyNanos(nrs::Clock::now()))) {
    return false;
  }
  if (!on_caller_thread) {
    inline_started.store(true);
    return true;
  }
  int left = inline_budget->load(std::memory_order_relaxed);
  while (left > 0 && !inline_budget->compare_exchange_weak(left, left - 1)) {
  }
  if (left > 0) return true;
  busy_since[inline_slot].store(0);
  return false;
}

void LocalService::Impl::ReleaseInline() {
  if (!inline_started.exchange(false)) inline_budget->fetch_add(1);
  busy_since[inline_slot].store(0);
}

void LocalService::Impl::ServeOne() {
  nrs::Pick pick;
  {
    std::lock_guard<std::mutex> lock(mu);
    // A request served on a caller's thread takes a service thread's place:
    // at most `service_threads` in service at once, as without it, so a
    // hung disk holds no more threads and what queues behind fails after
    // ost_timeout. The token waits for the inline run to end. A started
    // one holds no thread, so it takes no thread's place: with a write
    // that waits in the kernel (an io_uring worker's), the service threads
    // still serve what queued behind it.
    if (inline_running > 0 && !inline_started.load() && nrs.Active() >= service_threads) {
      deferred_tokens++;
      return;
    }
    const nrs::TimePoint now = nrs::Clock::now();
    pick = nrs.Dequeue(now, draining.load());
    if (pick.request != nullptr) AskEarlyIfDoneLocked(now);
    if (pick.request == nullptr) {
      if (pick.not_before.has_value()) {
        parked++;
        ArmLocked(*pick.not_before, /*force=*/false);
      } else {
        // Every queued request has a token, so this means another token took
        // this one's request; harmless, but worth seeing when debugging.
        log->debug("ost {}: serve token found nothing queued", index);
      }
      return;
    }
  }
  // Enqueue was given a released IoRequest; ownership comes back here.
  Run(std::unique_ptr<IoRequest>(static_cast<IoRequest*>(pick.request)));
}

void LocalService::Impl::ArmLocked(nrs::TimePoint when, bool force) {
  if (!force && armed_for.has_value() && *armed_for <= when) return;
  armed_for = when;
  // Re-arming cancels the previous wait; its handler sees operation_aborted.
  timer.expires_at(when);
  timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) WakeParked();
  });
}

void LocalService::Impl::WakeParked() {
  std::vector<std::unique_ptr<IoRequest>> ready;
  {
    std::lock_guard<std::mutex> lock(mu);
    armed_for.reset();
    while (parked > 0) {
      const nrs::TimePoint now = nrs::Clock::now();
      nrs::Pick pick = nrs.Dequeue(now, draining.load());
      if (pick.request != nullptr) {
        AskEarlyIfDoneLocked(now);
        parked--;
        ready.emplace_back(static_cast<IoRequest*>(pick.request));
      } else if (pick.not_before.has_value()) {
        ArmLocked(*pick.not_before, /*force=*/true);
        break;
      } else {
        // Nothing queued: the requests of these tokens were served by newer
        // tokens, so the parked ones have nothing left to do.
        parked = 0;
      }
    }
    // A wait nobody needs any more must go: a pending timer is io_context
    // work, and one armed for an hour would hold ~Service for that hour.
    if (!armed_for.has_value()) timer.cancel();
  }
  // Each request runs as its own handler so the service threads share them.
  for (auto& request : ready) {
    boost::asio::post(io, [this, r = request.release()] { Run(std::unique_ptr<IoRequest>(r)); });
  }
}

void LocalService::Impl::Run(std::unique_ptr<IoRequest> request) {
  Outcome outcome;
  {
    BusyScope busy;
    outcome = Execute(*request, *objects, &frees);
  }
  Complete(std::move(request), outcome);
}

void LocalService::Impl::Complete(std::unique_ptr<IoRequest> request, const Outcome& outcome) {
  // Before the observer hears of it: the op's reply may let its caller's
  // next write ask for the room.
  if (outcome.freed > 0 && on_freed) on_freed(index, outcome.freed, outcome.freed_from);
  if (request->info.op == nrs::Op::kDestroy) destroys.fetch_sub(1, std::memory_order_relaxed);
  last_completion.store(SteadyNanos(nrs::Clock::now()), std::memory_order_relaxed);
  if (outcome.status.err() == EROFS) {
    read_only.store(true, std::memory_order_relaxed);
  } else if (outcome.status.ok() && nrs::Changes(request->info.op) &&
             read_only.load(std::memory_order_relaxed)) {
    read_only.store(false, std::memory_order_relaxed);
  }
  Status for_caller;
  Finish(*request, outcome, &for_caller);
  const nrs::TimePoint done = nrs::Clock::now();
  if (for_caller.ok()) {
    bytes.fetch_add(outcome.bytes, std::memory_order_relaxed);
    if (request->info.jobid != nullptr) {
      job_stats.Record(*request->info.jobid, JobOpOf(request->info.op), outcome.bytes,
                       done - request->info.arrival, done);
    }
  }
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    // Before the observer hears of it, so stats already count it then.
    nrs.Complete(request.get(), done);
    // A place freed: a token that waited for one (ServeOne) may go on.
    if (deferred_tokens > 0 && nrs.Active() < service_threads) {
      deferred_tokens--;
      wake = true;
    }
  }
  if (wake) boost::asio::post(io, [this] { ServeOne(); });
  if (request->observer != nullptr) {
    request->observer->PartDone(*request, for_caller, for_caller.ok() ? outcome.bytes : 0);
  }
  // The request dies only now: PartDone may free the buffers iov points at,
  // but never the request itself.
}

void LocalService::Impl::Finish(IoRequest& request, const Outcome& outcome, Status* for_caller) {
  if (outcome.status.ok()) {
    *for_caller = Status::Ok();
    return;
  }
  const nrs::RequestInfo& info = request.info;
  int err = outcome.status.err();
  errors.fetch_add(1, std::memory_order_relaxed);
  if (CallerErrno(err) == EIO) io_errors.fetch_add(1, std::memory_order_relaxed);
  last_error.store(err, std::memory_order_relaxed);
  log->error("ost {} ({}): {} object {:#x} offset {} length {} failed: {}", index,
             backend->Describe(), nrs::OpName(info.op), request.object->object_id(), info.offset,
             info.length, outcome.status.ToString());
  *for_caller = Status::Error(
      CallerErrno(err), fmt::format("ost {}: {} object {:#x} failed", index, nrs::OpName(info.op),
                                    request.object->object_id()));
}

std::chrono::nanoseconds LocalService::Impl::OldestBusy(nrs::TimePoint now) const {
  int64_t oldest = 0;
  for (const auto& slot : busy_since) {
    const int64_t since = slot.load();
    if (since != 0 && (oldest == 0 || since < oldest)) oldest = since;
  }
  if (oldest == 0) return std::chrono::nanoseconds(0);
  return std::max(std::chrono::nanoseconds(SteadyNanos(now) - oldest), std::chrono::nanoseconds(1));
}

void LocalService::Impl::AskEarlyIfDoneLocked(nrs::TimePoint now) {
  if (epoch_asked || early_ask_armed || epochs_stopped || !responsive) return;
  if (!nrs.EpochDone(now)) return;
  early_ask_armed = true;
  const nrs::TimePoint earliest = epoch_started + nrs::kMinEpochSpan;
  if (now >= earliest) {
    boost::asio::post(io, [this] { AskNextEpoch(); });
  } else {
    ArmEpochTimerLocked(earliest);
  }
}

void LocalService::Impl::ArmEpochTimerLocked(nrs::TimePoint when) {
  // Re-arming cancels the previous wait; its handler sees operation_aborted.
  epoch_timer.expires_at(when);
  epoch_timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) OnEpochTimer();
  });
}

void LocalService::Impl::OnEpochTimer() {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (epoch_asked || epochs_stopped) return;
    const nrs::TimePoint now = nrs::Clock::now();
    const nrs::TimePoint end = epoch_started + nrs.EpochLength(epoch_length);
    if (now < end && !nrs.EpochDone(now)) {
      // Brought forward for an early end that no longer holds (the group
      // got new requests here): the epoch runs on.
      early_ask_armed = false;
      ArmEpochTimerLocked(end);
      return;
    }
  }
  AskNextEpoch();
}

void LocalService::Impl::AskNextEpoch() {
  nrs::EpochData data;
  nrs::Epoch current = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    early_ask_armed = false;
    if (epoch_asked || epochs_stopped || !responsive) return;
    epoch_asked = true;
    current = epoch;
    data = nrs.ReportEpoch(nrs::Clock::now());
  }
  epochs->NextEpoch(index, current, std::move(data),
                    [gate = epoch_gate](nrs::Epoch next,
                                        std::shared_ptr<const nrs::EpochData> reduced) {
                      std::lock_guard<std::mutex> lock(gate->mu);
                      if (gate->impl != nullptr) gate->impl->StartEpoch(next, reduced);
                    });
}

void LocalService::Impl::StartEpoch(nrs::Epoch next,
                               const std::shared_ptr<const nrs::EpochData>& reduced) {
  bool rejoin = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    epoch_asked = false;
    if (nrs::EpochError(next)) {
      // Evicted (ETIMEDOUT) or any other refusal: join afresh, unless the
      // OST is out of service (Tick rejoins it when it answers again) or
      // stopping (ESHUTDOWN: its own last_epoch).
      rejoin = responsive && !epochs_stopped;
      if (next != -ESHUTDOWN) {
        log->info("ost {}: out of the epochs ({}); {}", index,
                  std::strerror(static_cast<int>(-next)),
                  rejoin ? "rejoining" : "rejoins when it answers again");
      }
      epoch = nrs::kFirstEpoch;
    } else {
      epoch = next;
      const nrs::TimePoint now = nrs::Clock::now();
      nrs.StartEpoch(next, *reduced, now);
      epoch_started = now;
      if (!epochs_stopped) {
        ArmEpochTimerLocked(now + nrs.EpochLength(epoch_length));
        AskEarlyIfDoneLocked(now);
      }
    }
  }
  if (rejoin) {
    boost::asio::post(io, [this] { AskNextEpoch(); });
  } else if (!nrs::EpochError(next)) {
    // New shares may make a parked request ready before its old deadline.
    boost::asio::post(io, [this] { WakeParked(); });
  }
}

void LocalService::Impl::SampleLoop() {
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(space_mu);
      sample_wanted.wait(lock, [&] { return sample_requested || sampler_stop; });
      if (sampler_stop) return;
      sample_requested = false;
    }
    Result<SpaceInfo> sample = Status::Error(EIO, "unset");
    // Stamped when asked: the sample shows at least every write that had
    // completed by then (free-space grants count on it, control/space_grants.h).
    const nrs::TimePoint asked = nrs::Clock::now();
    {
      BusyScope busy;
      sample = backend->Space();
    }
    const nrs::TimePoint returned = nrs::Clock::now();
    std::lock_guard<std::mutex> lock(space_mu);
    space.error = sample.ok() ? Status::Ok() : sample.status();
    if (!sample.ok()) continue;
    space.space = *sample;
    space.at = asked;
    space.until = returned;
    // Seen read-only (or writable again) without a write having failed.
    read_only.store(sample->read_only, std::memory_order_relaxed);
  }
}

LocalService::LocalService(const ServiceOptions& options, std::unique_ptr<Backend> backend)
    : index_(options.index),
      backend_(std::move(backend)),
      objects_(backend_.get(), options.open_objects),
      impl_(std::make_unique<Impl>(options.index, backend_.get(), &objects_, options.timeout,
                                   std::max(1, options.threads), options.inline_budget,
                                   options.epochs, options.epoch_length)) {
  int n = std::max(1, options.threads);
  impl_->service_threads = static_cast<size_t>(n);
  impl_->threads.reserve(n);
  for (int i = 0; i < n; ++i) {
    impl_->threads.emplace_back([impl = impl_.get(), i] {
      // Names show up in top -H and gdb; truncated to 15 bytes by the kernel.
      pthread_setname_np(pthread_self(), fmt::format("ost{}-io{}", impl->index, i).c_str());
      tls_busy = &impl->busy_since[static_cast<size_t>(i)];
      impl->io.run();
    });
  }
  impl_->sampler = std::thread([impl = impl_.get(), n] {
    pthread_setname_np(pthread_self(), fmt::format("ost{}-space", impl->index).c_str());
    tls_busy = &impl->busy_since[static_cast<size_t>(n)];
    impl->SampleLoop();
  });
  // lrs_init: join the epoch hub.
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->AskNextEpoch(); });
}

LocalService::~LocalService() {
  // REQUIRES: no Submit() once destruction has begun. Dropping the guard
  // lets run() return once every token (posted or parked on the timer) has
  // served; draining first means no request waits for a throttle.
  impl_->stopping.store(true);
  nrs::Epoch last_epoch = 0;
  {
    // lrs_shutdown: no epoch timer may keep io.run() going.
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->epochs_stopped = true;
    impl_->epoch_timer.cancel();
  }
  Drain();
  impl_->work.reset();
  for (std::thread& t : impl_->threads) t.join();
  // Everything queued has been served: leave the epochs (eh_last_epoch),
  // then close the gate so no late callback reaches a dead Impl.
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    last_epoch = impl_->epoch;
  }
  impl_->epochs->LastEpoch(index_, last_epoch);
  {
    std::lock_guard<std::mutex> lock(impl_->epoch_gate->mu);
    impl_->epoch_gate->impl = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(impl_->space_mu);
    impl_->sampler_stop = true;
  }
  impl_->sample_wanted.notify_all();
  impl_->sampler.join();
}

std::shared_ptr<ObjectHandle> LocalService::Object(uint64_t object_id) {
  return std::make_shared<ObjectHandle>(&objects_, object_id);
}

void LocalService::CloseObject(uint64_t object_id) {
  boost::asio::post(impl_->io, [this, object_id] {
    BusyScope busy;  // a close may wait on the disk
    objects_.Forget(object_id);
  });
}

void LocalService::Stamp(IoRequest& request) {
  if (request.info.arrival == nrs::TimePoint{}) request.info.arrival = nrs::Clock::now();
  if (request.object == nullptr) request.object = Object(request.info.object_id);
  request.info.ost = index_;
}

void LocalService::CountDestroy(const IoRequest& request) {
  // When it is queued, not when stamped: SubmitOrRun stamps a request and
  // may then hand it to Submit, which stamps it again.
  if (request.info.op == nrs::Op::kDestroy) impl_->destroys.fetch_add(1, std::memory_order_relaxed);
}

void LocalService::Submit(std::unique_ptr<IoRequest> request) {
  assert(!impl_->stopping.load() && "Submit() during ~Service");
  Stamp(*request);
  CountDestroy(*request);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    const nrs::TimePoint now = nrs::Clock::now();
    impl_->nrs.Enqueue(request.release(), now);
    impl_->AskEarlyIfDoneLocked(now);
  }
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->ServeOne(); });
}

LocalService::Admission LocalService::AdmitIfIdle(std::unique_ptr<IoRequest>& request,
                                        const std::function<void(IoRequest&)>& before_queueing) {
  Stamp(*request);
  IoRequest* const mine = request.get();
  std::lock_guard<std::mutex> lock(impl_->mu);
  // An idle OST only: a request arriving while another is in service
  // waits in the queue as before, so a disk that stops answering holds
  // at most one caller's thread (or one started read or write), and what queues
  // behind it fails after ost_timeout (Tick).
  if (!impl_->responsive || impl_->nrs.Queued() != 0 || impl_->nrs.Active() != 0) {
    return Admission::kBusy;
  }
  const nrs::TimePoint now = nrs::Clock::now();
  CountDestroy(*request);
  impl_->nrs.Enqueue(request.release(), now);
  // Only this request is queued, so the policy answers about it: now, or
  // not yet (a throttle).
  nrs::Pick pick = impl_->nrs.Dequeue(now, impl_->draining.load());
  assert(pick.request == nullptr || pick.request == mine);
  impl_->AskEarlyIfDoneLocked(now);
  if (pick.request == mine) {
    impl_->inline_running++;
    request.reset(mine);
    return Admission::kDispatched;
  }
  // Waiting: it stays queued, and gets its token from the caller. Service
  // threads dequeue only under this lock, so none can see it before its
  // buffers are the caller's own.
  before_queueing(*mine);
  return Admission::kQueued;
}

void LocalService::NotAdmitted(Admission admission, std::unique_ptr<IoRequest> request,
                          const std::function<void(IoRequest&)>& before_queueing) {
  impl_->ReleaseInline();
  if (admission == Admission::kBusy) {  // not even enqueued: busy or unresponsive OST
    before_queueing(*request);
    return Submit(std::move(request));
  }
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->ServeOne(); });
}

void LocalService::SubmitOrRun(std::unique_ptr<IoRequest> request,
                          const std::function<void(IoRequest&)>& before_queueing) {
  assert(!impl_->stopping.load() && "SubmitOrRun() during ~Service");
  if (!impl_->ClaimInline(/*on_caller_thread=*/true)) {
    before_queueing(*request);
    return Submit(std::move(request));
  }
  const Admission admission = AdmitIfIdle(request, before_queueing);
  if (admission != Admission::kDispatched) {
    return NotAdmitted(admission, std::move(request), before_queueing);
  }
  tls_serving_inline = true;
  impl_->Run(std::move(request));
  tls_serving_inline = false;
  EndInline();
}

void LocalService::SubmitOrStart(std::unique_ptr<IoRequest> request,
                            const std::function<void(IoRequest&)>& before_queueing,
                            const IoStarter& start) {
  assert(!impl_->stopping.load() && "SubmitOrStart() during ~Service");
  // Only an object open already: opening one may wait on the disk.
  const nrs::Op op = request->info.op;
  std::shared_ptr<ObjectFile> file;
  if ((op == nrs::Op::kRead && request->pipe < 0) || op == nrs::Op::kWrite) {
    file = objects_.Cached(request->object != nullptr ? request->object->object_id()
                                                      : request->info.object_id);
  }
  // A file opened read-only (its filesystem was) is reopened by a service
  // thread before a write (Execute).
  const bool startable =
      file != nullptr && file->NativeFd() >= 0 && (op == nrs::Op::kRead || !file->read_only());
  if (!startable || !impl_->ClaimInline(/*on_caller_thread=*/false)) {
    before_queueing(*request);
    return Submit(std::move(request));
  }
  const Admission admission = AdmitIfIdle(request, before_queueing);
  if (admission != Admission::kDispatched) {
    return NotAdmitted(admission, std::move(request), before_queueing);
  }
  IoRequest* const mine = request.release();  // the service's until FinishStarted
  if (start(*mine, std::move(file))) {
    impl_->started.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Not started after all: a service thread runs it, in the inline slot's
  // place, so the caller's buffers must become the request's own first, as
  // for any request that waits.
  before_queueing(*mine);
  EndInline();
  boost::asio::post(impl_->io,
                    [impl = impl_.get(), mine] { impl->Run(std::unique_ptr<IoRequest>(mine)); });
}

void LocalService::FinishStarted(IoRequest* request, ObjectFile& file, Status status, size_t bytes) {
  Outcome outcome;
  if (request->info.op == nrs::Op::kWrite) {
    request->object_exists = true;  // it was open
    if (status.ok()) {
      ReportAllocation(*request, file);
      outcome.bytes = bytes;
    } else {
      outcome.status = std::move(status);
    }
  } else if (status.ok()) {
    // Short only at the object's end: the rest is a hole.
    ZeroFrom(request->iov, bytes);
    outcome.bytes = request->info.length;
  } else {
    outcome.status = std::move(status);
  }
  impl_->Complete(std::unique_ptr<IoRequest>(request), outcome);
  EndInline();  // as SubmitOrRun after its Run
}

void LocalService::LetGo(std::shared_ptr<ObjectFile> file) {
  // use_count is a hint: another holder letting go at the same moment may
  // still leave the close here, which only costs a wait this avoids
  // almost always.
  if (file.use_count() > 1) return;
  boost::asio::post(impl_->io, [file = std::move(file)]() mutable {
    BusyScope busy;  // a close may wait on the disk
    file.reset();
  });
}

void LocalService::EndInline() {
  size_t wake = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->inline_running--;
    wake = std::exchange(impl_->deferred_tokens, 0);
  }
  impl_->ReleaseInline();
  for (size_t i = 0; i < wake; ++i) {
    boost::asio::post(impl_->io, [impl = impl_.get()] { impl->ServeOne(); });
  }
}

void LocalService::StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->nrs.head(head).StartPrimary(std::move(policy));
  }
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->WakeParked(); });
}

void LocalService::Raise(IoRequest& request) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->nrs.Raise(&request, nrs::Clock::now())) return;
  }
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->WakeParked(); });
}

bool LocalService::Cancel(IoRequest& request) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->nrs.Remove(&request, nrs::Clock::now())) return false;
  impl_->cancelled++;
  // Counted when queued (CountDestroy); it will never run.
  if (request.info.op == nrs::Op::kDestroy) impl_->destroys.fetch_sub(1, std::memory_order_relaxed);
  return true;
}

void LocalService::StopPolicy(nrs::Head head) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->nrs.head(head).StopPrimary();
  }
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->WakeParked(); });
}

void LocalService::Retune(nrs::Head head, const nrs::Tunables& tunables) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->nrs.head(head).Retune(tunables, nrs::Clock::now());
  }
  // A new rate may make a parked request ready before the armed deadline.
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->WakeParked(); });
}

void LocalService::Drain() {
  impl_->draining.store(true);
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->WakeParked(); });
}

void LocalService::SetEpochLength(std::chrono::nanoseconds length) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->epoch_length = length;
}

nrs::Epoch LocalService::epoch() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->epoch;
}

nrs::Standing LocalService::EpochStanding() const { return impl_->epochs->StandingOf(index_); }

void LocalService::SetHighPriority(nrs::OpSet ops, uint32_t ratio) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->nrs.SetHighPriority(ops, ratio);
}

std::string LocalService::PrimaryName(nrs::Head head) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->nrs.head(head).PrimaryName();
}

std::vector<nrs::PolicyStatus> LocalService::PolicyStatus(nrs::Head head,
                                                     const std::vector<std::string>& registered,
                                                     bool with_classes) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->nrs.head(head).Status(registered, with_classes);
}

nrs::HeadStats LocalService::HeadStats(nrs::Head head) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->nrs.head(head).head_stats();
}

bool LocalService::read_only() const { return impl_->read_only.load(std::memory_order_relaxed); }

jobstats::JobStats& LocalService::job_stats() { return impl_->job_stats; }

void LocalService::Tick(nrs::TimePoint now) {
  const std::chrono::nanoseconds oldest = impl_->OldestBusy(now);
  const bool absent = !backend_->Available();  // has not answered since the mount
  const bool stuck = absent || oldest > impl_->timeout;
  std::optional<bool> changed;
  std::vector<std::unique_ptr<IoRequest>> expired;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (stuck == impl_->responsive) {
      impl_->responsive = !stuck;
      changed = impl_->responsive;
    }
    // Only while the OST makes no progress at all: another service thread
    // still completing requests will serve the queue (a slow call, not a
    // hung disk).
    const bool progressing =
        SteadyNanos(now) - impl_->last_completion.load(std::memory_order_relaxed) <=
        impl_->timeout.count();
    if (!impl_->responsive && (!progressing || impl_->draining.load())) {
      // Queued longer than the timeout: they never started. At shutdown
      // nothing more is waited for.
      const nrs::TimePoint deadline =
          impl_->draining.load() ? nrs::TimePoint::max() : now - impl_->timeout;
      for (nrs::Request* request : impl_->nrs.TakeArrivedBefore(deadline, now)) {
        expired.emplace_back(static_cast<IoRequest*>(request));
      }
    }
  }
  if (changed.has_value()) {
    if (*changed) {
      impl_->log->info("ost {} ({}): answering again; back in service", index_,
                       backend_->Describe());
    } else if (absent) {
      impl_->log->error("ost {} ({}): not answering since the mount: unresponsive; no new files "
                        "on it, and requests to it fail with EIO after ost_timeout",
                        index_, backend_->Describe());
    } else {
      impl_->log->error("ost {} ({}): a call into it has been in service for {} ms, longer than "
                        "ost_timeout ({} ms): unresponsive; no new files on it, and requests "
                        "queued on it longer than that fail with EIO",
                        index_, backend_->Describe(),
                        std::chrono::duration_cast<std::chrono::milliseconds>(oldest).count(),
                        std::chrono::duration_cast<std::chrono::milliseconds>(impl_->timeout)
                            .count());
    }
    if (impl_->on_health) impl_->on_health(index_, *changed);
    // An OST out of service leaves the epochs at once, so the others'
    // shares and groups are computed without it; it rejoins when it answers.
    if (*changed) {
      boost::asio::post(impl_->io, [impl = impl_.get()] { impl->AskNextEpoch(); });
    } else {
      impl_->epochs->Evict(index_);
    }
  }
  if (!expired.empty()) {
    impl_->log->error("ost {} ({}): {} requests waited longer than ost_timeout on an unresponsive "
                      "OST and fail with EIO; none had started",
                      index_, backend_->Describe(), expired.size());
  }
  for (auto& request : expired) {
    impl_->errors.fetch_add(1, std::memory_order_relaxed);
    impl_->io_errors.fetch_add(1, std::memory_order_relaxed);
    impl_->last_error.store(ETIMEDOUT, std::memory_order_relaxed);
    const Status failed = Status::Error(
        EIO, fmt::format("ost {}: {} object {:#x} not served: the OST is unresponsive", index_,
                         nrs::OpName(request->info.op), request->info.object_id));
    if (request->info.op == nrs::Op::kDestroy) {
      impl_->destroys.fetch_sub(1, std::memory_order_relaxed);
    }
    if (request->observer != nullptr) request->observer->PartDone(*request, failed, 0);
  }
  RequestSpaceSample();
}

uint64_t LocalService::DestroysInFlight() const {
  return impl_->destroys.load(std::memory_order_relaxed);
}

void LocalService::SetHealthListener(std::function<void(uint32_t index, bool responsive)> listener) {
  impl_->on_health = std::move(listener);
}

void LocalService::SetSpaceFreedListener(
    std::function<void(uint32_t index, uint64_t bytes, nrs::TimePoint from)> listener) {
  impl_->on_freed = std::move(listener);
}

bool LocalService::responsive() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->responsive;
}

SpaceSample LocalService::LastSpace() const {
  std::lock_guard<std::mutex> lock(impl_->space_mu);
  return impl_->space;
}

void LocalService::RequestSpaceSample() {
  if (impl_->draining.load()) return;  // shutdown: no new call into the disk
  {
    // One at a time: requests while a sample runs (or hangs) pile nothing up.
    std::lock_guard<std::mutex> lock(impl_->space_mu);
    impl_->sample_requested = true;
  }
  impl_->sample_wanted.notify_one();
}

ServiceCounters LocalService::Counters() const {
  ServiceCounters counters;
  counters.oldest_in_service = impl_->OldestBusy(nrs::Clock::now());
  counters.errors = impl_->errors.load(std::memory_order_relaxed);
  counters.last_error = impl_->last_error.load(std::memory_order_relaxed);
  counters.io_errors = impl_->io_errors.load(std::memory_order_relaxed);
  counters.bytes = impl_->bytes.load(std::memory_order_relaxed);
  counters.started = impl_->started.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(impl_->mu);
  counters.queued = impl_->nrs.Queued();
  counters.active = impl_->nrs.Active();
  counters.raised = impl_->nrs.raised();
  counters.cancelled = impl_->cancelled;
  counters.responsive = impl_->responsive;
  return counters;
}

}  // namespace sfs::ost
