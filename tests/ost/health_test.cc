// An OST that stops answering (ost/service.h Tick, ost/monitor.h,
// ost/late_backend.h), with a backend that hangs on demand. Time is injected
// into Tick as "now plus an offset", so no test waits out a timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "ost/late_backend.h"
#include "ost/monitor.h"
#include "ost/local_service.h"
#include "tests/ost/recorder.h"

namespace sfs::ost {
namespace {

using namespace std::chrono_literals;
using nrs::Op;
using testing::MakeIo;
using testing::Recorder;

constexpr auto kTimeout = 1s;

struct Events {
  std::mutex mu;
  std::vector<bool> seen;  // GUARDED_BY(mu)
  void Listen(Service& service) {
    service.SetHealthListener([this](uint32_t, bool responsive) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(responsive);
    });
  }
  std::vector<bool> Seen() {
    std::lock_guard<std::mutex> lock(mu);
    return seen;
  }
};

bool WaitUntil(const std::function<bool()>& done) {
  for (int i = 0; i < 3000; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

ServiceOptions OneThread() {
  ServiceOptions options;
  options.index = 3;
  options.threads = 1;
  options.timeout = kTimeout;
  return options;
}

TEST(HealthTest, HungOstTurnsUnresponsiveFailsQueuedRequestsAndComesBack) {
  std::shared_ptr<FaultInjector> faults;
  LocalService service(OneThread(), NewFaultBackend(NewMemBackend(), &faults));
  Events events;
  events.Listen(service);
  Recorder rec;
  std::string buf(4096, 'a');
  faults->Hang(true);
  service.Submit(MakeIo(Op::kWrite, service.Object(1), 0, &buf, &rec, 0));  // stuck in service
  ASSERT_TRUE(WaitUntil([&] { return faults->Hung() == 1; }));
  service.Submit(MakeIo(Op::kRead, service.Object(2), 0, &buf, &rec, 1));
  service.Submit(MakeIo(Op::kWrite, service.Object(3), 0, &buf, &rec, 2));
  // Arrives "later": still within the timeout at the ticks below.
  auto late = MakeIo(Op::kWrite, service.Object(4), 0, &buf, &rec, 3);
  late->info.arrival = nrs::Clock::now() + 1s;
  service.Submit(std::move(late));

  service.Tick(nrs::Clock::now());  // in service for a moment: fine
  EXPECT_TRUE(service.responsive());
  EXPECT_TRUE(events.Seen().empty());
  EXPECT_TRUE(rec.Results().empty());

  service.Tick(nrs::Clock::now() + 1500ms);
  EXPECT_FALSE(service.responsive());
  EXPECT_EQ(events.Seen(), (std::vector<bool>{false}));
  ASSERT_EQ(rec.Results().size(), 2u);
  EXPECT_EQ(rec.Only(1).err, EIO);
  EXPECT_EQ(rec.Only(2).err, EIO);
  ServiceCounters counters = service.Counters();
  EXPECT_FALSE(counters.responsive);
  EXPECT_EQ(counters.queued, 1u);  // the late one
  EXPECT_EQ(counters.active, 1u);  // the stuck one
  EXPECT_EQ(counters.io_errors, 2u);
  // Nothing of the expired ones reached the object store.
  faults->Hang(false);
  ASSERT_TRUE(rec.WaitFor(4));
  EXPECT_EQ(rec.Only(0).err, 0);  // the stuck write finishes after all
  EXPECT_EQ(rec.Only(3).err, 0);
  auto never = service.backend().Open(3, false);
  EXPECT_EQ(never.err(), ENOENT);

  service.Tick(nrs::Clock::now());
  EXPECT_TRUE(service.responsive());
  EXPECT_EQ(events.Seen(), (std::vector<bool>{false, true}));
}

TEST(HealthTest, AtShutdownEverythingQueuedOnAnUnresponsiveOstFailsAtOnce) {
  std::shared_ptr<FaultInjector> faults;
  LocalService service(OneThread(), NewFaultBackend(NewMemBackend(), &faults));
  Recorder rec;
  std::string buf(4096, 'b');
  faults->Hang(true);
  service.Submit(MakeIo(Op::kWrite, service.Object(1), 0, &buf, &rec, 0));
  ASSERT_TRUE(WaitUntil([&] { return faults->Hung() == 1; }));
  auto fresh = MakeIo(Op::kRead, service.Object(2), 0, &buf, &rec, 1);
  fresh->info.arrival = nrs::Clock::now() + 1s;
  service.Submit(std::move(fresh));
  service.Tick(nrs::Clock::now() + 1500ms);
  EXPECT_TRUE(rec.Results().empty());  // within its timeout
  service.Drain();
  service.Tick(nrs::Clock::now() + 1500ms);
  ASSERT_EQ(rec.Results().size(), 1u);
  EXPECT_EQ(rec.Only(1).err, EIO);
  faults->Hang(false);  // lets ~Service join
  ASSERT_TRUE(rec.WaitFor(2));
}

TEST(HealthTest, SpaceSamplesNeverWaitOnAHungOst) {
  std::shared_ptr<FaultInjector> faults;
  LocalService service(OneThread(), NewFaultBackend(NewMemBackend(1 << 20), &faults));
  EXPECT_FALSE(service.LastSpace().space.has_value());
  service.Tick(nrs::Clock::now());
  ASSERT_TRUE(WaitUntil([&] { return service.LastSpace().space.has_value(); }));
  const SpaceSample first = service.LastSpace();
  EXPECT_EQ(first.space->total_blocks, (1u << 20) / 4096);
  faults->Hang(true);
  service.Tick(nrs::Clock::now());  // a new sample: it hangs on the service thread
  ASSERT_TRUE(WaitUntil([&] { return faults->Hung() == 1; }));
  for (int i = 0; i < 5; ++i) service.Tick(nrs::Clock::now());  // piles up nothing
  const SpaceSample stale = service.LastSpace();                // at once, the old one
  EXPECT_EQ(stale.at, first.at);
  EXPECT_EQ(faults->Hung(), 1u);
  // The hung sample counts as a task in service.
  service.Tick(nrs::Clock::now() + 2s);
  EXPECT_FALSE(service.responsive());
  faults->Hang(false);
  ASSERT_TRUE(WaitUntil([&] { return service.LastSpace().at != first.at; }));
  service.Tick(nrs::Clock::now());
  EXPECT_TRUE(service.responsive());
}

TEST(HealthTest, MonitorNoticesAndSeesTheOstComeBack) {
  std::shared_ptr<FaultInjector> faults;
  ServiceOptions options = OneThread();
  options.timeout = 30ms;
  LocalService service(options, NewFaultBackend(NewMemBackend(), &faults));
  {
    Monitor monitor({&service}, Monitor::IntervalFor(options.timeout));
    faults->Hang(true);  // the next space sample hangs
    EXPECT_TRUE(WaitUntil([&] { return !service.responsive(); }));
    faults->Hang(false);
    EXPECT_TRUE(WaitUntil([&] { return service.responsive(); }));
  }
  EXPECT_EQ(Monitor::IntervalFor(30s), 1s);
  EXPECT_EQ(Monitor::IntervalFor(1ms), 10ms);
}

TEST(LateBackendTest, CallsWaitForTheAttachAndFollowIt) {
  std::shared_ptr<LateAttach> control;
  auto backend = NewLateBackend("/late", 30s, &control);
  EXPECT_EQ(backend->Describe(), "/late");
  EXPECT_FALSE(backend->Available());
  std::atomic<bool> opened{false};
  std::thread caller([&] {
    auto file = backend->Open(1, /*create=*/true);
    opened = file.ok();
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(opened.load());  // still waiting
  EXPECT_TRUE(control->Attach(NewMemBackend()));
  caller.join();
  EXPECT_TRUE(opened.load());
  EXPECT_TRUE(backend->Available());
  EXPECT_EQ(backend->Describe(), "mem");
  control->Fail(Status::Error(EIO, "too late"));  // settled already: nothing changes
  EXPECT_TRUE(backend->Open(1, false).ok());
}

// A call waits for the directory at most the timeout (nothing was started),
// and meanwhile the service counts the OST as unresponsive.
TEST(LateBackendTest, CallsGiveUpAfterTheTimeoutAndTheServiceIsUnresponsive) {
  std::shared_ptr<LateAttach> control;
  ServiceOptions options;
  options.threads = 1;
  options.timeout = 50ms;
  LocalService service(options, NewLateBackend("/late", options.timeout, &control));
  Events events;
  events.Listen(service);
  service.Tick(nrs::Clock::now());
  EXPECT_FALSE(service.responsive());
  EXPECT_EQ(events.Seen(), (std::vector<bool>{false}));
  Recorder rec;
  std::string buf(4096, 'c');
  service.Submit(MakeIo(Op::kRead, service.Object(1), 0, &buf, &rec, 0));
  ASSERT_TRUE(rec.WaitFor(1));
  EXPECT_EQ(rec.Only(0).err, EIO);
  EXPECT_TRUE(control->Attach(NewMemBackend()));
  // The space sample the first Tick asked for may still be in its own wait
  // for the directory (up to the timeout), and a call in service that long
  // keeps the OST unresponsive until it returns: tick until it has.
  for (int i = 0; i < 500 && !service.responsive(); ++i) {
    service.Tick(nrs::Clock::now());
    if (!service.responsive()) std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(service.responsive());
  EXPECT_EQ(events.Seen(), (std::vector<bool>{false, true}));
  service.Submit(MakeIo(Op::kWrite, service.Object(1), 0, &buf, &rec, 1));
  ASSERT_TRUE(rec.WaitFor(2));
  EXPECT_EQ(rec.Only(1).err, 0);
}

TEST(LateBackendTest, WrongLabelFailsAndAbandonReleasesWaiters) {
  std::shared_ptr<LateAttach> wrong;
  auto mislabeled = NewLateBackend("/wrong", 30s, &wrong);
  wrong->Fail(Status::Error(ENOENT, "no stripefs label"));
  EXPECT_EQ(mislabeled->Space().err(), EIO);
  EXPECT_EQ(mislabeled->Open(1, false).err(), EIO);  // not ENOENT: that would read as a hole

  std::shared_ptr<LateAttach> never;
  auto silent = NewLateBackend("/silent", 30s, &never);
  std::thread caller([&] { EXPECT_EQ(silent->Remove(1).err(), EIO); });
  std::this_thread::sleep_for(20ms);
  never->Abandon();
  caller.join();
  EXPECT_FALSE(never->Attach(NewMemBackend()));  // after shutdown: ignored
  EXPECT_EQ(silent->Open(1, true).err(), EIO);
}

}  // namespace
}  // namespace sfs::ost
