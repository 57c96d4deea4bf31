// The per-OST service: Asio owns the threads and timers, nrs::Scheduler owns
// the order, and one "serve" token is posted per submitted request.
#include "ost/service.h"

#include <pthread.h>

#include <algorithm>
#include <cassert>
#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <fmt/format.h>

#include "common/log.h"
#include "ost/execute.h"

namespace sfs::ost {

struct Service::Impl {
  Impl(uint32_t index, Backend* backend)
      : index(index), backend(backend), log(Logger("ost")), work(io.get_executor()) {}

  void ServeOne();
  void WaitThenServe(nrs::TimePoint not_before);
  void Finish(IoRequest& request, const Outcome& outcome, Status* for_caller);

  const uint32_t index;
  Backend* const backend;  // borrowed from Service::backend_, which outlives Impl
  const std::shared_ptr<spdlog::logger> log;

  boost::asio::io_context io;
  // Keeps io.run() from returning while idle; reset by ~Service to drain.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;

  // Leaf lock (see service.h); never held across I/O or an observer call.
  mutable std::mutex mu;
  nrs::Scheduler scheduler;  // GUARDED_BY(mu)

  std::atomic<uint64_t> errors{0};
  std::atomic<uint64_t> last_error{0};
  std::atomic<bool> stopping{false};  // only to catch Submit after ~Service began
};

void Service::Impl::ServeOne() {
  nrs::Pick pick;
  {
    std::lock_guard<std::mutex> lock(mu);
    pick = scheduler.Dequeue(nrs::Clock::now());
  }
  if (pick.request == nullptr) {
    if (pick.not_before.has_value()) {
      WaitThenServe(*pick.not_before);
    } else {
      // Tokens equal queued requests, so this means another token took this
      // one's request; harmless, but worth seeing when debugging a policy.
      log->debug("ost {}: serve token found nothing queued", index);
    }
    return;
  }
  // Enqueue was given a released IoRequest; ownership comes back here.
  std::unique_ptr<IoRequest> request(static_cast<IoRequest*>(pick.request));
  Outcome outcome = Execute(*request, *backend);
  Status for_caller;
  Finish(*request, outcome, &for_caller);
  {
    std::lock_guard<std::mutex> lock(mu);
    // Before the observer hears of it, so stats already count it then.
    scheduler.Complete(request.get(), nrs::Clock::now());
  }
  if (request->observer != nullptr) {
    request->observer->PartDone(*request, for_caller, for_caller.ok() ? outcome.bytes : 0);
  }
  // The request dies only now: PartDone may free the buffers iov points at,
  // but never the request itself.
}

void Service::Impl::WaitThenServe(nrs::TimePoint not_before) {
  // The timer carries this token; its handler keeps the timer alive. A
  // pending timer is io_context work, so ~Service waits for it.
  auto timer = std::make_shared<boost::asio::steady_timer>(io, not_before);
  timer->async_wait([this, timer](const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) ServeOne();
  });
}

void Service::Impl::Finish(IoRequest& request, const Outcome& outcome, Status* for_caller) {
  if (outcome.status.ok()) {
    *for_caller = Status::Ok();
    return;
  }
  const nrs::RequestInfo& info = request.info;
  int err = outcome.status.err();
  errors.fetch_add(1, std::memory_order_relaxed);
  last_error.store(err, std::memory_order_relaxed);
  log->error("ost {} ({}): {} object {:#x} offset {} length {} failed: {}", index,
             backend->Describe(), nrs::OpName(info.op), request.object->object_id(), info.offset,
             info.length, outcome.status.ToString());
  *for_caller = Status::Error(
      CallerErrno(err), fmt::format("ost {}: {} object {:#x} failed", index, nrs::OpName(info.op),
                                    request.object->object_id()));
}

Service::Service(const ServiceOptions& options, std::unique_ptr<Backend> backend)
    : index_(options.index),
      backend_(std::move(backend)),
      impl_(std::make_unique<Impl>(options.index, backend_.get())) {
  int n = std::max(1, options.threads);
  impl_->threads.reserve(n);
  for (int i = 0; i < n; ++i) {
    impl_->threads.emplace_back([impl = impl_.get(), i] {
      // Names show up in top -H and gdb; truncated to 15 bytes by the kernel.
      pthread_setname_np(pthread_self(), fmt::format("ost{}-io{}", impl->index, i).c_str());
      impl->io.run();
    });
  }
}

Service::~Service() {
  // REQUIRES: no Submit() once destruction has begun. Dropping the guard
  // lets run() return once every token (posted or on a timer) has served.
  impl_->stopping.store(true);
  impl_->work.reset();
  for (std::thread& t : impl_->threads) t.join();
}

std::shared_ptr<ObjectHandle> Service::Object(uint64_t object_id) {
  return std::make_shared<ObjectHandle>(backend_.get(), object_id);
}

void Service::Submit(std::unique_ptr<IoRequest> request) {
  assert(!impl_->stopping.load() && "Submit() during ~Service");
  if (request->info.arrival == nrs::TimePoint{}) request->info.arrival = nrs::Clock::now();
  if (request->object == nullptr) request->object = Object(request->info.object_id);
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->scheduler.Enqueue(request.release(), nrs::Clock::now());
  }
  boost::asio::post(impl_->io, [impl = impl_.get()] { impl->ServeOne(); });
}

void Service::StartPolicy(std::unique_ptr<nrs::Policy> policy) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->scheduler.StartPrimary(std::move(policy));
}

void Service::StopPolicy() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->scheduler.StopPrimary();
}

std::vector<nrs::PolicyStatus> Service::PolicyStatus(
    const std::vector<std::string>& registered) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->scheduler.Status(registered);
}

ServiceCounters Service::Counters() const {
  ServiceCounters counters;
  counters.errors = impl_->errors.load(std::memory_order_relaxed);
  counters.last_error = impl_->last_error.load(std::memory_order_relaxed);
  return counters;
}

}  // namespace sfs::ost
