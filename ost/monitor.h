// Keeps an eye on every OST: calls Service::Tick on each every `interval`,
// and EpochHub::Tick on the filesystem's epoch hub (an OSS's: each of its
// filesystems') every kHubTick (so a
// participant that misses eh_timeout is evicted within 10 ms of it),
// on a thread of its own that never touches an OST's disk, so it keeps
// going whatever the OSTs do (ost/service.h: unresponsive OSTs, expiry of
// requests queued on them, background space samples).
//
// Thread safety: construct and destroy from one thread; Add from any
// thread; Tick runs on the monitor's thread only.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "ost/service.h"

namespace sfs::ost {

class Monitor {
 public:
  static constexpr std::chrono::milliseconds kHubTick{10};

  // Borrows the services, which must outlive the monitor. Ticks once at once.
  Monitor(std::vector<Service*> services, std::chrono::nanoseconds interval,
          std::shared_ptr<nrs::EpochHub> hub = nullptr);
  // Stops the thread (a tick under way finishes first).
  ~Monitor();
  Monitor(const Monitor&) = delete;
  Monitor& operator=(const Monitor&) = delete;

  // How often to tick for a given timeout: often enough that an OST is seen
  // unresponsive soon after `timeout`, at most once a second, at least every
  // 10 ms.
  static std::chrono::nanoseconds IntervalFor(std::chrono::nanoseconds timeout);

  // Ticks `service` too from now on (an OST added to a mounted filesystem;
  // its health listener set already). Borrowed like the others.
  void Add(Service* service);
  // Ticks `hub` too from now on.
  void AddHub(std::shared_ptr<nrs::EpochHub> hub);

 private:
  void Arm();
  void ArmHub();

  std::vector<Service*> services_;  // used on the monitor's thread only
  const std::chrono::nanoseconds interval_;
  std::vector<std::shared_ptr<nrs::EpochHub>> hubs_;  // used on the monitor's thread only
  // The Asio loop and its timers (ost/monitor.cc): out of this header, so
  // what includes it does not compile Asio.
  struct Loop;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace sfs::ost
