#include "ost/monitor.h"

#include <pthread.h>

#include <algorithm>
#include <optional>

#include <boost/asio.hpp>

namespace sfs::ost {

struct Monitor::Loop {
  boost::asio::io_context io;
  boost::asio::steady_timer timer{io};      // used on the monitor's thread only
  boost::asio::steady_timer hub_timer{io};  // likewise
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
};

std::chrono::nanoseconds Monitor::IntervalFor(std::chrono::nanoseconds timeout) {
  return std::clamp<std::chrono::nanoseconds>(timeout / 4, std::chrono::milliseconds(10),
                                              std::chrono::seconds(1));
}

Monitor::Monitor(std::vector<Service*> services, std::chrono::nanoseconds interval,
                 std::shared_ptr<nrs::EpochHub> hub)
    : services_(std::move(services)),
      interval_(interval),
      loop_(std::make_unique<Loop>()) {
  loop_->work.emplace(loop_->io.get_executor());
  if (hub != nullptr) hubs_.push_back(std::move(hub));
  boost::asio::post(loop_->io, [this] {
    for (Service* service : services_) service->Tick(nrs::Clock::now());
    Arm();
    if (!hubs_.empty()) ArmHub();
  });
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ost-monitor");
    loop_->io.run();
  });
}

void Monitor::Add(Service* service) {
  boost::asio::post(loop_->io, [this, service] {
    services_.push_back(service);
    service->Tick(nrs::Clock::now());
  });
}

void Monitor::AddHub(std::shared_ptr<nrs::EpochHub> hub) {
  boost::asio::post(loop_->io, [this, hub = std::move(hub)] {
    hubs_.push_back(hub);
    if (hubs_.size() == 1 && loop_->work.has_value()) ArmHub();
  });
}

Monitor::~Monitor() {
  boost::asio::post(loop_->io, [this] {
    loop_->timer.cancel();
    loop_->hub_timer.cancel();
    loop_->work.reset();
  });
  thread_.join();
}

void Monitor::Arm() {
  loop_->timer.expires_after(interval_);
  loop_->timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted || !loop_->work.has_value()) return;
    for (Service* service : services_) service->Tick(nrs::Clock::now());
    Arm();
  });
}

}  // namespace sfs::ost

namespace sfs::ost {

void Monitor::ArmHub() {
  loop_->hub_timer.expires_after(kHubTick);
  loop_->hub_timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted || !loop_->work.has_value()) return;
    for (const auto& hub : hubs_) hub->Tick(nrs::Clock::now());
    ArmHub();
  });
}

}  // namespace sfs::ost
