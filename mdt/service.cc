// The metadata service: nrs::Nrs owns the order, callers' threads serve
// what is ready, and the service's Asio threads (max_active of them) serve
// what a policy held back.
#include "mdt/service.h"

#include <pthread.h>

#include <algorithm>
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

namespace sfs::mdt {

struct Service::Impl {
  explicit Impl(const ServiceOptions& options)
      : max_active(std::max<size_t>(1, options.max_active)),
        work(io.get_executor()),
        timer(io),
        epoch_timer(io),
        epoch_length(options.epoch_length) {}

  // Serves ready requests on the calling thread while a place in service
  // is free; arms the timer when the policies hold the rest back.
  // `by_service`: the service's own thread (counted apart). `now`: the
  // time, when the caller has just read it (a clock read costs as much as
  // the rest of the head on some virtual machines).
  // REQUIRES: `lock` holds mu; holds it again on return.
  void Pump(std::unique_lock<AdaptiveMutex>& lock, bool by_service,
            std::optional<nrs::TimePoint> now = std::nullopt);
  // Stamps `request`'s arrival (if left at its default) and admits it
  // into service at once when nothing waits, a place is free and its
  // policy would hand it straight back (fifo), counting it as queued and
  // handed out. False: not admitted, nothing changed but the arrival.
  // REQUIRES: mu held.
  bool AdmitLocked(MdRequest& request, nrs::TimePoint now);
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

  // A leaf lock: never held while a request is served. Adaptive: every
  // FUSE worker takes it twice per operation, each time for a few hundred
  // nanoseconds, so a waiter spins rather than sleeps (a std::mutex here
  // made 5,300 futex calls in one mdtest run of 2 x 2,000 files, this 550).
  mutable AdaptiveMutex mu;
  // Notified when a request completes while draining: only ~Service waits.
  std::condition_variable_any idle;
  nrs::Nrs nrs;                  // GUARDED_BY(mu)
  size_t active = 0;             // GUARDED_BY(mu): requests in service
  uint64_t completed = 0;        // GUARDED_BY(mu)
  uint64_t served_by_service = 0;  // GUARDED_BY(mu)
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
  bool epochs_stopped = false;              // GUARDED_BY(mu)
};

void Service::Impl::Pump(std::unique_lock<AdaptiveMutex>& lock, bool by_service,
                         std::optional<nrs::TimePoint> known_now) {
  while (active < max_active) {
    // The time read last (by the caller, or when the previous request
    // finished, just before this thread took mu again) stands for now.
    const nrs::TimePoint now = known_now.has_value() ? *known_now : nrs::Clock::now();
    nrs::Pick pick = nrs.Dequeue(now, draining);
    if (pick.request == nullptr) {
      if (pick.not_before.has_value()) ArmLocked(*pick.not_before);
      return;
    }
    EndEarlyIfDoneLocked(now);
    active++;
    if (by_service) served_by_service++;
    // Others wait and no timer is armed for them: another thread looks
    // (and serves or arms) while this one serves, so a deadline that
    // passes meanwhile is not missed. Never the case under fifo.
    if (nrs.Queued() > 0 && !armed_for.has_value() && active < max_active) WakeLater();
    // Enqueue was given a released MdRequest; ownership comes back here.
    // It dies under mu: it holds nothing but its own fields.
    const std::unique_ptr<MdRequest> request(static_cast<MdRequest*>(pick.request));
    known_now = ServeLocked(lock, *request);
  }
}

bool Service::Impl::AdmitLocked(MdRequest& request, nrs::TimePoint now) {
  if (request.info.arrival == nrs::TimePoint{}) request.info.arrival = now;
  if (active >= max_active || draining || !nrs.AdmitNow(&request, now)) return false;
  active++;
  EndEarlyIfDoneLocked(now);
  return true;
}

nrs::TimePoint Service::Impl::ServeLocked(std::unique_lock<AdaptiveMutex>& lock,
                                          MdRequest& request) {
  lock.unlock();
  request.Serve();
  const nrs::TimePoint done = nrs::Clock::now();
  lock.lock();
  nrs.Complete(&request, done);
  active--;
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
  ArmEpochTimerLocked(now + nrs.EpochLength(epoch_length));
  EndEarlyIfDoneLocked(now);
  // New shares or a new group may make a held request ready.
  Pump(lock, /*by_service=*/true);
}

Service::Service(const ServiceOptions& options) : impl_(std::make_unique<Impl>(options)) {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->ArmEpochTimerLocked(nrs::Clock::now());  // the first epoch starts at once
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
    impl_->epochs_stopped = true;
    impl_->epoch_timer.cancel();
    impl_->timer.cancel();
    impl_->armed_for.reset();
    // Whatever is still queued is served here; callers' threads serving
    // now finish theirs (and serve the rest if they come first).
    impl_->Pump(lock, /*by_service=*/true);
    impl_->idle.wait(lock, [&] { return impl_->active == 0 && impl_->nrs.Queued() == 0; });
  }
  impl_->work.reset();
  for (std::thread& t : impl_->threads) t.join();
}

void Service::Submit(std::unique_ptr<MdRequest> request) {
  std::unique_lock<AdaptiveMutex> lock(impl_->mu);
  // One clock read for arrival, enqueue and the first dequeue; read under
  // mu so the times the policies see never go back.
  const nrs::TimePoint now = nrs::Clock::now();
  if (impl_->AdmitLocked(*request, now)) {
    // Served without a trip through the queue, then whatever others
    // queued meanwhile.
    const nrs::TimePoint done = impl_->ServeLocked(lock, *request);
    impl_->Pump(lock, /*by_service=*/false, done);
    return;
  }
  impl_->nrs.Enqueue(request.release(), now);
  impl_->EndEarlyIfDoneLocked(now);
  impl_->Pump(lock, /*by_service=*/false, now);
}

bool Service::ServeIfAdmitted(MdRequest& request) {
  std::unique_lock<AdaptiveMutex> lock(impl_->mu);
  const nrs::TimePoint now = nrs::Clock::now();
  if (!impl_->AdmitLocked(request, now)) return false;
  const nrs::TimePoint done = impl_->ServeLocked(lock, request);
  impl_->Pump(lock, /*by_service=*/false, done);
  return true;
}

void Service::Drain() {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->draining = true;
  }
  impl_->WakeLater();
}

void Service::StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->nrs.head(head).StartPrimary(std::move(policy));
  }
  impl_->WakeLater();
}

void Service::StopPolicy(nrs::Head head) {
  {
    std::lock_guard<AdaptiveMutex> lock(impl_->mu);
    impl_->nrs.head(head).StopPrimary();
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
}

void Service::SetEpochLength(std::chrono::nanoseconds length) {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  impl_->epoch_length = length;
}

std::vector<nrs::PolicyStatus> Service::PolicyStatus(nrs::Head head,
                                                     const std::vector<std::string>& registered,
                                                     bool with_classes) const {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
  return impl_->nrs.head(head).Status(registered, with_classes);
}

nrs::HeadStats Service::HeadStats(nrs::Head head) const {
  std::lock_guard<AdaptiveMutex> lock(impl_->mu);
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
  ServiceCounters counters;
  counters.queued = impl_->nrs.Queued();
  counters.active = impl_->active;
  counters.completed = impl_->completed;
  counters.served_by_service = impl_->served_by_service;
  return counters;
}

}  // namespace sfs::mdt
