// The metadata service: nrs::Nrs owns the order, callers' threads serve
// what is ready, and the service's Asio threads (max_active of them) serve
// what a policy held back. Under fifo with nothing queued, requests take a
// lock-free way in (the door) and are counted in per-thread tallies that
// the locked side folds into the NRS statistics when they are read.
#include "mdt/service.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "common/adaptive_mutex.h"
#include "common/log.h"
#include "nrs/stats.h"

namespace sfs::mdt {
namespace {

uint64_t NanosBetween(nrs::TimePoint from, nrs::TimePoint to) {
  if (to <= from) return 0;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count());
}

// Door tallies: one per thread that takes the door, as far as this many
// go (FUSE workers are created one after another, so their thread ids
// differ in the low bits and each gets its own).
constexpr size_t kDoorShards = 8;
size_t ThisThreadsShard() {
  thread_local const size_t shard = static_cast<size_t>(gettid()) % kDoorShards;
  return shard;
}

}  // namespace

struct Service::Impl {
  explicit Impl(const ServiceOptions& options)
      : max_active(std::max<size_t>(1, options.max_active)),
        work(io.get_executor()),
        timer(io),
        epoch_timer(io),
        epoch_length(options.epoch_length) {}

  // The door: serves `request` on this thread now, with no lock, when it
  // is open (fifo alone in both heads, nothing queued, not draining) and a
  // place in service is free; counts it in this thread's tally. False:
  // not served, nothing changed; take the locked way.
  bool ServeThroughDoor(MdRequest& request);
  // Takes a place in service if one is free (active < max_active), or
  // gives one back; both ways in count places here.
  bool TakePlace();
  void ReleasePlace() { active.fetch_sub(1, std::memory_order_seq_cst); }
  // Opens the door when every arrival would be served at once anyway, else
  // closes it. Called wherever that may have changed (ends of Pump, policy
  // changes, drain). REQUIRES: mu held.
  void RefreshDoorLocked();
  // Moves the door tallies into the NRS statistics (as if those requests
  // had passed the heads) and the completed count, so readers see them.
  // REQUIRES: mu held.
  void FoldTalliesLocked();
  // Door requests in service now (places taken past the heads).
  // REQUIRES: mu held.
  uint64_t DoorActiveLocked() const;

  // Serves ready requests on the calling thread while a place in service
  // is free; arms the timer when the policies hold the rest back. Ends
  // with RefreshDoorLocked.
  // `by_service`: the service's own thread (counted apart). `now`: the
  // time, when the caller has just read it (a clock read costs as much as
  // the rest of the head on some virtual machines).
  // REQUIRES: `lock` holds mu; holds it again on return.
  void Pump(std::unique_lock<AdaptiveMutex>& lock, bool by_service,
            std::optional<nrs::TimePoint> now = std::nullopt);
  // Serves a request counted active (its place in service taken) with mu
  // released, then completes it. Returns when it finished; the request is
  // the caller's still.
  // REQUIRES: `lock` holds mu; holds it again on return.
  nrs::TimePoint ServeLocked(std::unique_lock<AdaptiveMutex>& lock, MdRequest& request);
  // REQUIRES: mu held. Arms the timer for `when` unless it is armed for
  // an earlier time.
  void ArmLocked(nrs::TimePoint when);
  void OnTimer();
  // The policy is through with its epoch early: start the next one now,
  // or once nrs::kMinEpochSpan has passed. REQUIRES: mu held.
  void EndEarlyIfDoneLocked(nrs::TimePoint now);
  void ArmEpochTimerLocked(nrs::TimePoint when);
  // Starts the next epoch if this one's length has passed or the policy is
  // through with it, else waits for the rest of its length.
  void OnEpochTimer(uint64_t generation);
  // Posts a Pump on the service's thread (a change may have made a held
  // request ready before the armed time).
  void WakeLater() {
    boost::asio::post(io, [this] {
      std::unique_lock<AdaptiveMutex> lock(mu);
      Pump(lock, /*by_service=*/true);
    });
  }

  const size_t max_active;
  boost::asio::io_context io;
  // Keeps io.run() from returning while idle; reset by ~Service.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  // max_active of them: one serving a slow request must not keep another
  // held request, come due meanwhile, from a free place in service.
  std::vector<std::thread> threads;

  // A leaf lock: never held while a request is served. Adaptive: on the
  // locked way in every FUSE worker takes it twice per operation, each time
  // for a few hundred nanoseconds, so a waiter spins rather than sleeps
  // (before the door, a std::mutex here made 5,300 futex calls in one
  // uncached mdtest run of 2 x 2,000 files, this one 550).
  mutable AdaptiveMutex mu;
  // Notified when a request completes while draining: only ~Service waits.
  std::condition_variable_any idle;
  nrs::Nrs nrs;                  // GUARDED_BY(mu)
  // Requests in service, either way in. Atomic: the door takes and gives
  // back places without mu (TakePlace's compare-and-swap keeps the bound).
  std::atomic<size_t> active{0};
  uint64_t completed = 0;        // GUARDED_BY(mu), door requests once folded

  // Open only while nrs.ServesEveryArrivalAtOnce() and not draining
  // (so never while anything is queued): written under mu, read without.
  // Sequentially consistent with `active`: a door request that finishes
  // and finds it closed takes mu and pumps, and whoever closed it reads
  // `active` after, so a queued request never misses a freed place.
  std::atomic<bool> door_open{false};
  // Door requests past ReleasePlace that may still touch this service
  // (the door re-check, mu): ~Service waits for none after `active` is 0,
  // as a caller's filesystem counts its op finished inside Serve.
  std::atomic<uint32_t> door_tails{0};
  // nrs.hp_ops(), for the door to count a request in its head.
  std::atomic<nrs::OpSet> high_ops{nrs::kDefaultHpOps};
  // What door requests would have left in the heads' statistics, per
  // head, until FoldTalliesLocked moves it there: their service times
  // (the histogram's count is the number served) and the sum of those.
  // Relaxed atomics, two per request: a shard is written by its own
  // thread (mostly) and read by a folding one.
  struct HeadTally {
    std::atomic<uint64_t> service_ns{0};
    nrs::AtomicLatencyHistogram service;
  };
  struct alignas(64) DoorTally {
    std::array<HeadTally, 2> heads;  // by nrs::Head
  };
  std::array<DoorTally, kDoorShards> tallies;

  uint64_t served_by_service = 0;  // GUARDED_BY(mu)
  uint64_t cancelled = 0;          // GUARDED_BY(mu): requests Cancel took back
  bool draining = false;         // GUARDED_BY(mu): Drain(), dequeue ignoring throttles
  std::optional<nrs::TimePoint> armed_for;  // GUARDED_BY(mu): the timer's expiry, if waiting
  boost::asio::steady_timer timer;          // GUARDED_BY(mu): every call on it

  boost::asio::steady_timer epoch_timer;    // GUARDED_BY(mu): every call on it
  // Bumped on every arming: a wait that completed before it was re-armed
  // (its handler already queued, so cancel cannot stop it) is stale.
  uint64_t epoch_timer_generation = 0;      // GUARDED_BY(mu)
  std::chrono::nanoseconds epoch_length;    // GUARDED_BY(mu)
  nrs::Epoch epoch = nrs::kFirstEpoch;      // GUARDED_BY(mu)
  nrs::TimePoint epoch_started{};           // GUARDED_BY(mu)
  bool early_end_armed = false;             // GUARDED_BY(mu)
  // Fifo alone has no epoch data, so its epochs would only wake a thread
  // 20 times a second (about 4 % of mdtest's creates on 2 busy cores):
  // the timer sleeps until a primary policy starts.
  bool epoch_timer_asleep = false;          // GUARDED_BY(mu)
  bool epochs_stopped = false;              // GUARDED_BY(mu)
};

bool Service::Impl::TakePlace() {
  size_t now = active.load(std::memory_order_relaxed);
  while (now < max_active) {
    if (active.compare_exchange_weak(now, now + 1, std::memory_order_seq_cst)) return true;
  }
  return false;
}

bool Service::Impl::ServeThroughDoor(MdRequest& request) {
  if (!door_open.load(std::memory_order_seq_cst) || !TakePlace()) return false;
  // The door may close from here on (a policy starts, a request queues):
  // this request came before that change and is served as fifo would.
  const nrs::TimePoint start = nrs::Clock::now();
  if (request.info.arrival == nrs::TimePoint{}) request.info.arrival = start;
  const bool high = (high_ops.load(std::memory_order_relaxed) & nrs::OpBit(request.info.op)) != 0;
  request.Serve();
  const nrs::TimePoint done = nrs::Clock::now();
  const uint64_t service_ns = NanosBetween(start, done);
  HeadTally& tally = tallies[ThisThreadsShard()].heads[high ? 1 : 0];
  // The sum first: a fold takes the sum only when it finds a count.
  tally.service_ns.fetch_add(service_ns, std::memory_order_relaxed);
  tally.service.Add(service_ns);
  // Closed: something may be queued for the place this frees, or a drain
  // waits for it. The place is given back under mu then, so this thread
  // serves what is queued before another takes the place (no hand-off).
  const bool closed = !door_open.load(std::memory_order_seq_cst);
  {
    std::unique_lock<AdaptiveMutex> lock(mu, std::defer_lock);
    if (closed) lock.lock();
    // Counted before the place is given back, so ~Service, which waits
    // for no place taken, then waits for this tail too.
    door_tails.fetch_add(1, std::memory_order_seq_cst);
    ReleasePlace();
    // Checked again after the release: a door closed meanwhile by a
    // request that queued for want of this place is served here.
    if (!closed && !door_open.load(std::memory_order_seq_cst)) lock.lock();
    if (lock.owns_lock()) {
      Pump(lock, /*by_service=*/false, done);
      if (draining) idle.notify_all();
    }
  }
  // The last touch of the service.
  door_tails.fetch_sub(1, std::memory_order_seq_cst);
  return true;
}

void Service::Impl::RefreshDoorLocked() {
  door_open.store(!draining && nrs.ServesEveryArrivalAtOnce(), std::memory_order_seq_cst);
}

void Service::Impl::FoldTalliesLocked() {
  for (DoorTally& shard : tallies) {
    for (nrs::Head head : {nrs::Head::kRegular, nrs::Head::kHighPriority}) {
      HeadTally& tally = shard.heads[head == nrs::Head::kRegular ? 0 : 1];
      nrs::LatencyHistogram service;
      const uint64_t served = tally.service.MoveInto(&service);
      // The sum stays for a fold that finds a count: a request adds to it
      // before its histogram. One finishing meanwhile may leave its time
      // in this fold and its count in the next: each lands exactly once.
      if (served == 0) continue;
      const uint64_t service_ns = tally.service_ns.exchange(0, std::memory_order_relaxed);
      nrs.head(head).CountServedAtOnce(served, service_ns, service);
      completed += served;
    }
  }
}

uint64_t Service::Impl::DoorActiveLocked() const {
  // Places are taken by the door and by requests the heads handed out
  // (counted there); read apart, so clamped should one finish in between.
  const uint64_t places = active.load(std::memory_order_relaxed);
  const uint64_t handed_out = nrs.Active();
  return places > handed_out ? places - handed_out : 0;
}

void Service::Impl::Pump(std::unique_lock<AdaptiveMutex>& lock, bool by_service,
                         std::optional<nrs::TimePoint> known_now) {
  while (nrs.Queued() > 0 && TakePlace()) {
    // The time read last (by the caller, or when the previous request
    // finished, just before this thread took mu again) stands for now.
    const nrs::TimePoint now = known_now.has_value() ? *known_now : nrs::Clock::now();
    nrs::Pick pick = nrs.Dequeue(now, draining);
    if (pick.request == nullptr) {
      ReleasePlace();
      if (pick.not_before.has_value()) ArmLocked(*pick.not_before);
      break;
    }
    EndEarlyIfDoneLocked(now);
    if (by_service) served_by_service++;
    // Others wait and no timer is armed for them: another thread looks
    // (and serves or arms) while this one serves, so a deadline that
    // passes meanwhile is not missed. Never the case under fifo.
    if (nrs.Queued() > 0 && !armed_for.has_value() &&
        active.load(std::memory_order_relaxed) < max_active) {
      WakeLater();
    }
    // Enqueue was given a released MdRequest; ownership comes back here.
    // It dies under mu: it holds nothing but its own fields.
    const std::unique_ptr<MdRequest> request(static_cast<MdRequest*>(pick.request));
    known_now = ServeLocked(lock, *request);
  }
  RefreshDoorLocked();
}

nrs::TimePoint Service::Impl::ServeLocked(std::unique_lock<AdaptiveMutex>& lock,
                                          MdRequest& request) {
  lock.unlock();
  request.Serve();
  const nrs::TimePoint done = nrs::Clock::now();
  lock.lock();
  nrs.Complete(&request, done);
  ReleasePlace();
  completed++;
  EndEarlyIfDoneLocked(done);
  if (draining) idle.notify_all();
  return done;
}

void Service::Impl::ArmLocked(nrs::TimePoint when) {
  if (armed_for.has_value() && *armed_for <= when) return;
  armed_for = when;
  // Re-arming cancels the previous wait; its handler sees operation_aborted.
  timer.expires_at(when);
  timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) OnTimer();
  });
}

void Service::Impl::OnTimer() {
  std::unique_lock<AdaptiveMutex> lock(mu);
  armed_for.reset();
  Pump(lock, /*by_service=*/true);
}

void Service::Impl::EndEarlyIfDoneLocked(nrs::TimePoint now) {
  if (early_end_armed || epochs_stopped || !nrs.EpochDone(now)) return;
  early_end_armed = true;
  ArmEpochTimerLocked(std::max(now, epoch_started + nrs::kMinEpochSpan));
}

void Service::Impl::ArmEpochTimerLocked(nrs::TimePoint when) {
  const uint64_t generation = ++epoch_timer_generation;
  epoch_timer.expires_at(when);
  epoch_timer.async_wait([this, generation](const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) OnEpochTimer(generation);
  });
}

void Service::Impl::OnEpochTimer(uint64_t generation) {
  std::unique_lock<AdaptiveMutex> lock(mu);
  if (epochs_stopped || generation != epoch_timer_generation) return;
  early_end_armed = false;
  const nrs::TimePoint now = nrs::Clock::now();
  const nrs::TimePoint end = epoch_started + nrs.EpochLength(epoch_length);
  if (epoch != nrs::kFirstEpoch && now < epoch_started + nrs::kMinEpochSpan) {
    ArmEpochTimerLocked(epoch_started + nrs::kMinEpochSpan);
    return;
  }
  if (epoch != nrs::kFirstEpoch && now < end && !nrs.EpochDone(now)) {
    // Brought forward for an early end that no longer holds: runs on.
    ArmEpochTimerLocked(end);
    return;
  }
  // A lone scheduler: the reduction of every participant's data is its own.
  const nrs::EpochData data = nrs.ReportEpoch(now);
  epoch++;
  nrs.StartEpoch(epoch, data, now);
  epoch_started = now;
  if (nrs.head(nrs::Head::kRegular).ServesEveryArrivalAtOnce() &&
      nrs.head(nrs::Head::kHighPriority).ServesEveryArrivalAtOnce()) {
    epoch_timer_asleep = true;
    Pump(lock, /*by_service=*/true);
    return;
  }
  ArmEpochTimerLocked(now + nrs.EpochLength(epoch_length));
  EndEarlyIfDoneLocked(now);
  // New shares or a new group may make a held request ready.
  Pump(lock, /*by_service=*/true);
}

Service::Service(const ServiceOptions& options) : impl_(std::make_unique<Impl>(options)) {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->ArmEpochTimerLocked(nrs::Clock::now());  // the first epoch starts at once
    impl_->RefreshDoorLocked();
  }
  for (size_t i = 0; i < impl_->max_active; ++i) {
    impl_->threads.emplace_back([impl = impl_.get()] {
      pthread_setname_np(pthread_self(), "mdt-service");
      impl->io.run();
    });
  }
}

Service::~Service() {
  {
    std::unique_lock<AdaptiveMutex> lock(impl_->mu);
    impl_->draining = true;
    impl_->RefreshDoorLocked();  // closed: door requests still in service count in `active`
    impl_->epochs_stopped = true;
    impl_->epoch_timer.cancel();
    impl_->timer.cancel();
    impl_->armed_for.reset();
    // Whatever is still queued is served here; callers' threads serving
    // now finish theirs (and serve the rest if they come first).
    impl_->Pump(lock, /*by_service=*/true);
    impl_->idle.wait(lock, [&] {
      return impl_->active.load(std::memory_order_seq_cst) == 0 && impl_->nrs.Queued() == 0;
    });
  }
  // A door request that gave its place back may still be on its way out
  // (a few instructions, or waiting for mu that this thread just released).
  while (impl_->door_tails.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  impl_->work.reset();
  for (std::thread& t : impl_->threads) t.join();
}

void Service::Submit(std::unique_ptr<MdRequest> request) {
  if (impl_->ServeThroughDoor(*request)) return;
  // The locked way: queued, then whatever the policies hand out next is
  // served here while a place is free (this request too, if it is first).
  std::unique_lock<AdaptiveMutex> lock(impl_->mu);
  // One clock read for arrival, enqueue and the first dequeue; read under
  // mu so the times the policies see never go back.
  const nrs::TimePoint now = nrs::Clock::now();
  if (request->info.arrival == nrs::TimePoint{}) request->info.arrival = now;
  // Nothing may pass the door while a request waits (Pump reopens it).
  impl_->door_open.store(false, std::memory_order_seq_cst);
  impl_->nrs.Enqueue(request.release(), now);
  impl_->EndEarlyIfDoneLocked(now);
  impl_->Pump(lock, /*by_service=*/false, now);
}

bool Service::ServeIfAdmitted(MdRequest& request) {
  return impl_->ServeThroughDoor(request);
}

bool Service::Cancel(MdRequest& request) {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  if (!impl_->nrs.Remove(&request, nrs::Clock::now())) return false;
  impl_->cancelled++;
  // The queue may be empty now: the door opens again. A timer armed for
  // it finds nothing and arms no more.
  impl_->RefreshDoorLocked();
  return true;
}

void Service::Drain() {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->draining = true;
    impl_->RefreshDoorLocked();
  }
  impl_->WakeLater();
}

void Service::StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->nrs.head(head).StartPrimary(std::move(policy));
    impl_->RefreshDoorLocked();  // every later arrival meets the new policy
    if (impl_->epoch_timer_asleep && !impl_->epochs_stopped) {
      impl_->epoch_timer_asleep = false;
      impl_->ArmEpochTimerLocked(nrs::Clock::now());  // a new epoch for the new policy
    }
  }
  impl_->WakeLater();
}

void Service::StopPolicy(nrs::Head head) {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->nrs.head(head).StopPrimary();
    impl_->RefreshDoorLocked();
  }
  impl_->WakeLater();
}

void Service::Retune(nrs::Head head, const nrs::Tunables& tunables) {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->nrs.head(head).Retune(tunables, nrs::Clock::now());
  }
  impl_->WakeLater();
}

void Service::SetHighPriority(nrs::OpSet ops, uint32_t ratio) {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  impl_->nrs.SetHighPriority(ops, ratio);
  impl_->high_ops.store(ops, std::memory_order_relaxed);
}

void Service::SetEpochLength(std::chrono::nanoseconds length) {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  impl_->epoch_length = length;
}

std::vector<nrs::PolicyStatus> Service::PolicyStatus(nrs::Head head,
                                                     const std::vector<std::string>& registered,
                                                     bool with_classes) const {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  impl_->FoldTalliesLocked();
  std::vector<nrs::PolicyStatus> status = impl_->nrs.head(head).Status(registered, with_classes);
  // Door requests in service now are fifo's too. Which head they belong
  // to is known only once they finish, so the regular head shows them all
  // while in service (ops in the high-priority set included).
  if (head == nrs::Head::kRegular) {
    for (nrs::PolicyStatus& policy : status) {
      if (policy.fallback) policy.stats.active += impl_->DoorActiveLocked();
    }
  }
  return status;
}

nrs::HeadStats Service::HeadStats(nrs::Head head) const {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  impl_->FoldTalliesLocked();
  return impl_->nrs.head(head).head_stats();
}

std::string Service::PrimaryName(nrs::Head head) const {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  return impl_->nrs.head(head).PrimaryName();
}

nrs::Epoch Service::epoch() const {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  return impl_->epoch;
}

ServiceCounters Service::Counters() const {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  impl_->FoldTalliesLocked();
  ServiceCounters counters;
  counters.queued = impl_->nrs.Queued();
  counters.active = impl_->active.load(std::memory_order_relaxed);
  counters.completed = impl_->completed;
  counters.served_by_service = impl_->served_by_service;
  counters.cancelled = impl_->cancelled;
  return counters;
}

}  // namespace sfs::mdt
