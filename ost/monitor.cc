#include "ost/monitor.h"

#include <pthread.h>

#include <algorithm>

namespace sfs::ost {

std::chrono::nanoseconds Monitor::IntervalFor(std::chrono::nanoseconds timeout) {
  return std::clamp<std::chrono::nanoseconds>(timeout / 4, std::chrono::milliseconds(10),
                                              std::chrono::seconds(1));
}

Monitor::Monitor(std::vector<Service*> services, std::chrono::nanoseconds interval,
                 std::shared_ptr<nrs::EpochHub> hub)
    : services_(std::move(services)),
      interval_(interval),
      work_(io_.get_executor()) {
  if (hub != nullptr) hubs_.push_back(std::move(hub));
  boost::asio::post(io_, [this] {
    for (Service* service : services_) service->Tick(nrs::Clock::now());
    Arm();
    if (!hubs_.empty()) ArmHub();
  });
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "ost-monitor");
    io_.run();
  });
}

void Monitor::Add(Service* service) {
  boost::asio::post(io_, [this, service] {
    services_.push_back(service);
    service->Tick(nrs::Clock::now());
  });
}

void Monitor::AddHub(std::shared_ptr<nrs::EpochHub> hub) {
  boost::asio::post(io_, [this, hub = std::move(hub)] {
    hubs_.push_back(hub);
    if (hubs_.size() == 1 && work_.has_value()) ArmHub();
  });
}

Monitor::~Monitor() {
  boost::asio::post(io_, [this] {
    timer_.cancel();
    hub_timer_.cancel();
    work_.reset();
  });
  thread_.join();
}

void Monitor::Arm() {
  timer_.expires_after(interval_);
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted || !work_.has_value()) return;
    for (Service* service : services_) service->Tick(nrs::Clock::now());
    Arm();
  });
}

}  // namespace sfs::ost

namespace sfs::ost {

void Monitor::ArmHub() {
  hub_timer_.expires_after(kHubTick);
  hub_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted || !work_.has_value()) return;
    for (const auto& hub : hubs_) hub->Tick(nrs::Clock::now());
    ArmHub();
  });
}

}  // namespace sfs::ost
