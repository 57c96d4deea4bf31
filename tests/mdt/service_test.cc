// mdt::Service: where each metadata request is served (the caller's thread
// or the service's), what a throttling policy holds back, the bound on
// requests in service, policy switches under load, drain at destruction,
// and the local epochs.
#include "mdt/service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "nrs/policy.h"
#include "nrs/tbf_rules.h"

namespace sfs::mdt {
namespace {

using nrs::Op;
using namespace std::chrono_literals;

// What each request saw when it was served, by its id.
struct Log {
  std::mutex mu;
  std::condition_variable changed;
  std::map<int, std::thread::id> served_on;  // GUARDED_BY(mu)
  std::vector<int> order;                    // GUARDED_BY(mu)

  void Served(int id) {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(served_on.emplace(id, std::this_thread::get_id()).second) << "served twice: " << id;
    order.push_back(id);
    changed.notify_all();
  }
  bool WaitFor(size_t count, std::chrono::seconds patience = 20s) {
    std::unique_lock<std::mutex> lock(mu);
    return changed.wait_for(lock, patience, [&] { return served_on.size() >= count; });
  }
  bool Has(int id) {
    std::lock_guard<std::mutex> lock(mu);
    return served_on.count(id) != 0;
  }
  std::thread::id ThreadOf(int id) {
    std::lock_guard<std::mutex> lock(mu);
    return served_on.at(id);
  }
};

class TestRequest : public MdRequest {
 public:
  TestRequest(Log* log, int id, Op op, const char* jobid, std::function<void()> during = {})
      : log_(log), id_(id), during_(std::move(during)) {
    info.op = op;
    info.object_id = 1;
    info.jobid = std::make_shared<const std::string>(jobid);
  }
  void Serve() override {
    if (during_) during_();
    log_->Served(id_);
  }

 private:
  Log* const log_;
  const int id_;
  const std::function<void()> during_;
};

std::unique_ptr<MdRequest> Req(Log* log, int id, const char* jobid = "free",
                               Op op = Op::kCreate, std::function<void()> during = {}) {
  return std::make_unique<TestRequest>(log, id, op, jobid, std::move(during));
}

// A request body that stays in service until released: holds a place.
class Gate {
 public:
  std::function<void()> Body() {
    return [this] {
      std::unique_lock<std::mutex> lock(mu_);
      entered_ = true;
      changed_.notify_all();
      changed_.wait(lock, [&] { return released_; });
    };
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return entered_; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool entered_ = false;   // GUARDED_BY(mu_)
  bool released_ = false;  // GUARDED_BY(mu_)
};

nrs::Tunables TbfTunables(std::initializer_list<const char*> commands) {
  nrs::Tunables tunables;
  auto rules = nrs::TbfRuleSet::Empty();
  for (const char* command : commands) {
    auto next = rules->Apply(command);
    EXPECT_TRUE(next.ok()) << command;
    rules = *next;
  }
  tunables.tbf_rules = rules;
  // The default rule holds every other class to this rate; high enough
  // that the tests' unruled jobs are never held.
  tunables.tbf_default_rate = nrs::kTbfMaxRate;
  return tunables;
}

std::unique_ptr<nrs::Policy> Tbf(const char* type, const nrs::Tunables& tunables) {
  auto policy = nrs::NewTbfPolicy(type, tunables);
  EXPECT_TRUE(policy.ok());
  return std::move(policy).value();
}

TEST(MdtServiceTest, FifoServesEachRequestOnItsCallersThreadBeforeSubmitReturns) {
  Service service(ServiceOptions{});
  Log log;
  for (int id = 0; id < 100; ++id) {
    service.Submit(Req(&log, id));
    ASSERT_TRUE(log.Has(id)) << id;
    EXPECT_EQ(log.ThreadOf(id), std::this_thread::get_id());
  }
  const ServiceCounters counters = service.Counters();
  EXPECT_EQ(counters.completed, 100u);
  EXPECT_EQ(counters.queued, 0u);
  EXPECT_EQ(counters.served_by_service, 0u);
  const auto status = service.PolicyStatus(nrs::Head::kRegular, {});
  ASSERT_FALSE(status.empty());
  EXPECT_EQ(status[0].stats.completed, 100u);
}

TEST(MdtServiceTest, ServeIfAdmittedServesACallerOwnedRequestUnderFifo) {
  Service service(ServiceOptions{});
  Log log;
  for (int id = 0; id < 10; ++id) {
    TestRequest request(&log, id, Op::kGetattr, "free");
    ASSERT_TRUE(service.ServeIfAdmitted(request)) << id;
    ASSERT_TRUE(log.Has(id));
    EXPECT_EQ(log.ThreadOf(id), std::this_thread::get_id());
    EXPECT_NE(request.info.arrival, nrs::TimePoint{});
  }
  // Counted as every other request is.
  EXPECT_EQ(service.Counters().completed, 10u);
  EXPECT_EQ(service.Counters().active, 0u);
  const auto status = service.PolicyStatus(nrs::Head::kRegular, {});
  ASSERT_FALSE(status.empty());
  EXPECT_EQ(status[0].stats.completed, 10u);
  EXPECT_EQ(status[0].stats.active, 0u);
  EXPECT_EQ(service.HeadStats(nrs::Head::kRegular).dequeued, 10u);
}

TEST(MdtServiceTest, ServeIfAdmittedRefusesWhatAPolicyMayHoldAndSchedulesNothing) {
  Service service(ServiceOptions{});
  const nrs::Tunables tunables = TbfTunables({"start slow jobid={slow} rate=1 depth=1"});
  service.StartPolicy(nrs::Head::kRegular, Tbf("jobid", tunables));
  Log log;
  // TBF may hold any request, so none is admitted past it, not even one
  // with a token; the caller then Submits it, and only then is it counted.
  TestRequest request(&log, 1, Op::kCreate, "free");
  EXPECT_FALSE(service.ServeIfAdmitted(request));
  EXPECT_FALSE(log.Has(1));
  EXPECT_EQ(service.Counters().queued, 0u);
  EXPECT_EQ(service.Counters().completed, 0u);
  service.Submit(Req(&log, 2, "free"));
  EXPECT_TRUE(log.Has(2));
}

TEST(MdtServiceTest, ServeIfAdmittedRefusesWhenAllPlacesAreTaken) {
  Service service(ServiceOptions{.max_active = 1});
  Log log;
  Gate gate;
  std::thread first([&] { service.Submit(Req(&log, 1, "a", Op::kCreate, gate.Body())); });
  gate.WaitEntered();
  TestRequest request(&log, 2, Op::kGetattr, "free");
  EXPECT_FALSE(service.ServeIfAdmitted(request));
  EXPECT_FALSE(log.Has(2));
  EXPECT_EQ(service.Counters().queued, 0u);
  EXPECT_EQ(service.Counters().active, 1u);
  gate.Release();
  first.join();
  EXPECT_TRUE(service.ServeIfAdmitted(request));
  EXPECT_TRUE(log.Has(2));
}

TEST(MdtServiceTest, RequestsPastTheDoorAreCountedExactlyInFifosStatistics) {
  Service service(ServiceOptions{});
  service.SetHighPriority(nrs::OpBit(Op::kUnlink), 4);
  Log log;
  constexpr int kThreads = 4, kPerThread = 500;
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int id = t * kPerThread + i;
        service.Submit(Req(&log, id, "a", i % 4 == 0 ? Op::kUnlink : Op::kGetattr));
      }
    });
  }
  for (auto& t : submitters) t.join();
  ASSERT_TRUE(log.WaitFor(kThreads * kPerThread));
  const uint64_t total = kThreads * kPerThread, high = total / 4;
  EXPECT_EQ(service.Counters().completed, total);
  EXPECT_EQ(service.Counters().active, 0u);
  EXPECT_EQ(service.HeadStats(nrs::Head::kRegular).dequeued, total - high);
  EXPECT_EQ(service.HeadStats(nrs::Head::kHighPriority).dequeued, high);
  for (nrs::Head head : {nrs::Head::kRegular, nrs::Head::kHighPriority}) {
    const uint64_t expected = head == nrs::Head::kRegular ? total - high : high;
    const auto status = service.PolicyStatus(head, {});
    ASSERT_FALSE(status.empty());
    EXPECT_TRUE(status[0].fallback);
    EXPECT_EQ(status[0].stats.completed, expected);
    EXPECT_EQ(status[0].stats.active, 0u);
    EXPECT_EQ(status[0].stats.wait_ns, 0u);  // nothing ever waited
    ASSERT_EQ(status[0].classes.size(), 1u);
    EXPECT_EQ(status[0].classes[0].requests, expected);
    EXPECT_EQ(status[0].classes[0].wait.count(), expected);
    EXPECT_EQ(status[0].classes[0].service.count(), expected);
    EXPECT_EQ(status[0].classes[0].wait.Percentile(100), 0u);
  }
  // Read again: nothing counted twice.
  EXPECT_EQ(service.Counters().completed, total);
  EXPECT_EQ(service.PolicyStatus(nrs::Head::kRegular, {})[0].stats.completed, total - high);
}

TEST(MdtServiceTest, ARequestInServiceCountsAsActiveWhicheverWayItCame) {
  Service service(ServiceOptions{});
  Log log;
  Gate gate;
  std::thread first([&] { service.Submit(Req(&log, 1, "a", Op::kGetattr, gate.Body())); });
  gate.WaitEntered();
  EXPECT_EQ(service.Counters().active, 1u);
  EXPECT_EQ(service.PolicyStatus(nrs::Head::kRegular, {})[0].stats.active, 1u);
  gate.Release();
  first.join();
  EXPECT_EQ(service.Counters().active, 0u);
  EXPECT_EQ(service.PolicyStatus(nrs::Head::kRegular, {})[0].stats.active, 0u);
  EXPECT_EQ(service.Counters().completed, 1u);
}

TEST(MdtServiceTest, NeverMoreThanMaxActiveInServiceAndNoQueuedRequestIsForgotten) {
  // One place, many callers: each finds it taken now and then and queues,
  // and whoever frees the place (door or not) must serve what queued.
  Service service(ServiceOptions{.max_active = 1});
  Log log;
  std::atomic<int> in_service{0}, most{0};
  auto body = [&] {
    const int now = ++in_service;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::yield();
    --in_service;
  };
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        service.Submit(Req(&log, t * kPerThread + i, "a", Op::kLookup, body));
      }
    });
  }
  for (auto& t : submitters) t.join();
  ASSERT_TRUE(log.WaitFor(kThreads * kPerThread)) << "a queued request was never served";
  EXPECT_EQ(most.load(), 1);
  EXPECT_EQ(service.Counters().completed, static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(service.Counters().queued, 0u);
}

// An interrupted caller takes its held request back (Cancel): it is never
// served, the others are, and once nothing is queued the door opens again.
TEST(MdtServiceTest, CancelTakesBackAHeldRequestWhichIsNeverServed) {
  Log log;
  std::unique_ptr<MdRequest> taken;
  {
    Service service(ServiceOptions{});
    nrs::Tunables tunables;
    tunables.delay_pct = 100;  // every request held 10 s, or until drained
    tunables.delay_min = 10s;
    tunables.delay_max = 10s;
    auto delay = nrs::NewDelayPolicy("", tunables);
    ASSERT_TRUE(delay.ok());
    service.StartPolicy(nrs::Head::kRegular, std::move(delay).value());
    std::vector<MdRequest*> submitted;
    for (int id = 0; id < 3; ++id) {
      auto request = Req(&log, id, "a", Op::kMkdir);
      submitted.push_back(request.get());
      service.Submit(std::move(request));
    }
    EXPECT_EQ(service.Counters().queued, 3u);
    ASSERT_TRUE(service.Cancel(*submitted[1]));
    taken.reset(submitted[1]);  // the caller's again
    EXPECT_FALSE(service.Cancel(*taken));  // not queued any more
    EXPECT_EQ(service.Counters().queued, 2u);
    EXPECT_EQ(service.Counters().cancelled, 1u);
  }  // drains the other two
  EXPECT_TRUE(log.Has(0));
  EXPECT_FALSE(log.Has(1));
  EXPECT_TRUE(log.Has(2));
}

TEST(MdtServiceTest, APolicyStartedWhileTheDoorIsOpenHoldsEveryLaterRequest) {
  Service service(ServiceOptions{});
  Log log;
  service.Submit(Req(&log, 0, "slow", Op::kMkdir));  // through the door
  ASSERT_TRUE(log.Has(0));
  const nrs::Tunables tunables = TbfTunables({"start slow jobid={slow} rate=1 depth=1"});
  service.StartPolicy(nrs::Head::kRegular, Tbf("jobid", tunables));
  service.Submit(Req(&log, 1, "slow", Op::kMkdir));  // the bucket's token
  service.Submit(Req(&log, 2, "slow", Op::kMkdir));  // held for about a second
  EXPECT_FALSE(log.Has(2));
  EXPECT_EQ(service.Counters().queued, 1u);
  // Back to fifo alone: the held one is served, and the door opens again.
  service.StopPolicy(nrs::Head::kRegular);
  ASSERT_TRUE(log.WaitFor(3));
  service.Submit(Req(&log, 3, "slow", Op::kMkdir));
  EXPECT_TRUE(log.Has(3));
  EXPECT_EQ(log.ThreadOf(3), std::this_thread::get_id());
}

TEST(MdtServiceTest, DestructionWaitsForARequestInServicePastTheDoor) {
  auto service = std::make_unique<Service>(ServiceOptions{});
  Log log;
  Gate gate;
  std::thread first([&] { service->Submit(Req(&log, 1, "a", Op::kGetattr, gate.Body())); });
  gate.WaitEntered();
  std::atomic<bool> destroyed{false};
  std::thread destroyer([&] {
    service.reset();
    destroyed = true;
  });
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(destroyed.load()) << "destroyed with a request still in service";
  gate.Release();
  first.join();
  destroyer.join();
  EXPECT_TRUE(destroyed.load());
  EXPECT_TRUE(log.Has(1));
}

TEST(MdtServiceTest, DestructionRightAfterADoorRequestIsServedWaitsForItsWayOut) {
  // A filesystem counts an op finished inside Serve, so it may destroy the
  // service while the door request is still leaving (under ASan or TSan a
  // use after free shows here).
  for (int round = 0; round < 300; ++round) {
    auto service = std::make_unique<Service>(ServiceOptions{});
    Service* raw = service.get();
    Log log;
    std::atomic<bool> served{false};
    std::thread caller([&] { raw->Submit(Req(&log, round, "a", Op::kGetattr, [&] { served = true; })); });
    while (!served.load()) std::this_thread::yield();
    if (round % 2 == 1) service->Drain();  // as an unmount does first
    service.reset();
    caller.join();
    EXPECT_TRUE(log.Has(round));
  }
}

TEST(MdtServiceTest, AThrottledJobWaitsQueuedWhileAnotherJobIsServedAtOnce) {
  Service service(ServiceOptions{});
  const nrs::Tunables tunables = TbfTunables({"start slow jobid={slow} rate=20 depth=1"});
  service.StartPolicy(nrs::Head::kRegular, Tbf("jobid", tunables));
  Log log;
  constexpr int kSlow = 10;
  for (int id = 0; id < kSlow; ++id) service.Submit(Req(&log, id, "slow"));
  // At most the bucket's one token was there: the rest wait, and their
  // callers were not held.
  EXPECT_GE(service.Counters().queued, static_cast<uint64_t>(kSlow - 1));
  for (int id = 100; id < 110; ++id) {
    service.Submit(Req(&log, id, "free"));
    EXPECT_TRUE(log.Has(id)) << "a job with no rule waited: " << id;
  }
  ASSERT_TRUE(log.WaitFor(kSlow + 10));
  // The held ones were served by the service's own thread as tokens came,
  // in their arrival order.
  std::vector<int> slow_order;
  {
    std::lock_guard<std::mutex> lock(log.mu);
    for (int id : log.order) {
      if (id < kSlow) slow_order.push_back(id);
    }
  }
  for (int i = 0; i < kSlow; ++i) EXPECT_EQ(slow_order[i], i);
  EXPECT_NE(log.ThreadOf(kSlow - 1), std::this_thread::get_id());
  EXPECT_GE(service.Counters().served_by_service, static_cast<uint64_t>(kSlow - 1));
}

TEST(MdtServiceTest, OpcodeRulesHoldOnlyTheirOps) {
  Service service(ServiceOptions{});
  const nrs::Tunables tunables = TbfTunables({"start mk opcode={mkdir} rate=1 depth=1"});
  service.StartPolicy(nrs::Head::kRegular, Tbf("opcode", tunables));
  Log log;
  service.Submit(Req(&log, 0, "a", Op::kMkdir));  // the bucket's token
  service.Submit(Req(&log, 1, "a", Op::kMkdir));  // held for about a second
  EXPECT_FALSE(log.Has(1));
  for (Op op : {Op::kLookup, Op::kGetattr, Op::kCreate, Op::kUnlink, Op::kRename}) {
    service.Submit(Req(&log, 10 + static_cast<int>(op), "a", op));
    EXPECT_TRUE(log.Has(10 + static_cast<int>(op))) << nrs::OpName(op);
  }
  ASSERT_TRUE(log.WaitFor(7));
}

TEST(MdtServiceTest, BeyondMaxActiveARequestQueuesAndTheFinishingThreadServesIt) {
  Service service(ServiceOptions{.max_active = 1});
  Log log;
  Gate gate;
  std::thread first([&] { service.Submit(Req(&log, 1, "a", Op::kCreate, gate.Body())); });
  gate.WaitEntered();
  // The one place is taken: this request queues and Submit returns.
  service.Submit(Req(&log, 2));
  EXPECT_FALSE(log.Has(2));
  EXPECT_EQ(service.Counters().queued, 1u);
  EXPECT_EQ(service.Counters().active, 1u);
  gate.Release();
  first.join();
  // Served by the first caller's thread before its Submit returned.
  ASSERT_TRUE(log.Has(2));
  EXPECT_EQ(log.ThreadOf(2), log.ThreadOf(1));
}

TEST(MdtServiceTest, DestructionServesWhatARateStillHolds) {
  Log log;
  {
    Service service(ServiceOptions{});
    const nrs::Tunables tunables = TbfTunables({"start slow jobid={slow} rate=1 depth=1"});
    service.StartPolicy(nrs::Head::kRegular, Tbf("jobid", tunables));
    for (int id = 0; id < 50; ++id) service.Submit(Req(&log, id, "slow"));
    EXPECT_GE(service.Counters().queued, 49u);
  }
  // At one per second these would take 49 s; destruction drains them now.
  std::lock_guard<std::mutex> lock(log.mu);
  EXPECT_EQ(log.served_on.size(), 50u);
}

TEST(MdtServiceTest, SwitchingPoliciesUnderLoadServesEachRequestOnce) {
  Service service(ServiceOptions{.max_active = 2});
  Log log;
  constexpr int kThreads = 4, kPerThread = 400;
  std::atomic<int> running{kThreads};
  std::vector<std::thread> submitters;
  const char* jobs[] = {"a", "b", "c"};
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int id = t * kPerThread + i;
        service.Submit(Req(&log, id, jobs[id % 3], i % 2 ? Op::kLookup : Op::kCreate));
      }
      running--;
    });
  }
  const nrs::Tunables tbf = TbfTunables({"start b jobid={b} rate=2000"});
  int switches = 0;
  while (running.load() > 0 || switches < 8) {
    switch (switches % 4) {
      case 0: service.StartPolicy(nrs::Head::kRegular, Tbf("jobid", tbf)); break;
      case 1: service.StartPolicy(nrs::Head::kRegular, std::move(nrs::NewCrrnPolicy("jobid", {})).value()); break;
      case 2: service.StartPolicy(nrs::Head::kRegular, std::move(nrs::NewEpochPolicy("jobid", {})).value()); break;
      default: service.StopPolicy(nrs::Head::kRegular);
    }
    switches++;
    std::this_thread::sleep_for(1ms);
  }
  for (auto& t : submitters) t.join();
  ASSERT_TRUE(log.WaitFor(kThreads * kPerThread));
  std::lock_guard<std::mutex> lock(log.mu);
  EXPECT_EQ(log.served_on.size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST(MdtServiceTest, HighPriorityOpsGoToTheirOwnHead) {
  Service service(ServiceOptions{});
  service.SetHighPriority(nrs::OpBit(Op::kUnlink), 4);
  Log log;
  service.Submit(Req(&log, 1, "a", Op::kUnlink));
  service.Submit(Req(&log, 2, "a", Op::kCreate));
  ASSERT_TRUE(log.WaitFor(2));
  EXPECT_EQ(service.HeadStats(nrs::Head::kHighPriority).dequeued, 1u);
  EXPECT_EQ(service.HeadStats(nrs::Head::kRegular).dequeued, 1u);
}

TEST(MdtServiceTest, UnderFifoAloneEpochsRestUntilAPolicyStarts) {
  Service service(ServiceOptions{.epoch_length = 2ms});
  // The first epoch starts at once; with fifo alone the timer then sleeps.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (service.epoch() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  const nrs::Epoch resting = service.epoch();
  std::this_thread::sleep_for(50ms);  // 25 epoch lengths
  EXPECT_EQ(service.epoch(), resting);
  service.StartPolicy(nrs::Head::kRegular, std::move(nrs::NewCrrnPolicy("jobid", {})).value());
  while (service.epoch() < resting + 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_GE(service.epoch(), resting + 5);
}

TEST(MdtServiceTest, EpochsAdvanceOnTheirOwn) {
  Service service(ServiceOptions{.epoch_length = 2ms});
  service.StartPolicy(nrs::Head::kRegular, std::move(nrs::NewCrrnPolicy("jobid", {})).value());
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (service.epoch() < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_GE(service.epoch(), 5);
}

}  // namespace
}  // namespace sfs::mdt
