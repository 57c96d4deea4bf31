// Switching the primary policy while requests are queued: a switch drains
// what the old policy holds first, and nothing is lost or served twice, also
// when threads enqueue during the switch.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nrs/registry.h"
#include "nrs/scheduler.h"
#include "nrs/tbf_rules.h"
#include "tests/nrs/test_policies.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::Entries;
using testing::EvenLifoPolicy;
using testing::MakeRequests;
using testing::PrimaryOf;
using testing::T0;

TEST(PolicySwitchTest, OldPrimaryDrainsFirstAndLeavesWhenCompleted) {
  Scheduler sched;
  auto requests = MakeRequests(10);
  sched.StartPrimary(NewFifoPolicy());
  for (int i = 0; i < 5; i++) sched.Enqueue(requests[i].get(), T0());
  sched.StartPrimary(NewFifoPolicy());
  for (int i = 5; i < 10; i++) sched.Enqueue(requests[i].get(), T0());

  auto status = sched.Status({"fifo"});
  ASSERT_EQ(status.size(), 3u);  // fallback, new primary, stopping old one
  auto stopping = Entries(status, "fifo", PolicyState::kStopping);
  ASSERT_EQ(stopping.size(), 1u);
  EXPECT_EQ(stopping[0].stats.queued, 5u);
  EXPECT_FALSE(stopping[0].primary);
  EXPECT_EQ(PrimaryOf(status).stats.queued, 5u);

  std::vector<Request *> out;
  for (int i = 0; i < 10; i++) {
    Request *r = sched.Dequeue(At(1s)).request;
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r, requests[i].get()) << "position " << i;
    out.push_back(r);
  }
  EXPECT_EQ(sched.Dequeue(At(1s)).request, nullptr);

  // Drained but still serving: the stopping policy is still reported.
  stopping = Entries(sched.Status({}), "fifo", PolicyState::kStopping);
  ASSERT_EQ(stopping.size(), 1u);
  EXPECT_EQ(stopping[0].stats.queued, 0u);
  EXPECT_EQ(stopping[0].stats.active, 5u);

  for (int i = 0; i < 4; i++) sched.Complete(out[i], At(2s));
  stopping = Entries(sched.Status({}), "fifo", PolicyState::kStopping);
  ASSERT_EQ(stopping.size(), 1u);
  EXPECT_EQ(stopping[0].stats.active, 1u);
  EXPECT_EQ(stopping[0].stats.completed, 4u);

  sched.Complete(out[4], At(2s));
  EXPECT_TRUE(Entries(sched.Status({}), "fifo", PolicyState::kStopping).empty());
  EXPECT_EQ(sched.Status({"fifo"}).size(), 2u);

  for (int i = 5; i < 10; i++) sched.Complete(out[i], At(3s));
  EXPECT_EQ(PrimaryOf(sched.Status({})).stats.completed, 5u);
  EXPECT_EQ(sched.Active(), 0u);
}

TEST(PolicySwitchTest, IdlePrimaryIsDestroyedAtOnce) {
  Scheduler sched;
  sched.StartPrimary(std::make_unique<EvenLifoPolicy>());
  sched.StartPrimary(NewFifoPolicy());
  auto status = sched.Status({});
  ASSERT_EQ(status.size(), 2u);
  EXPECT_EQ(PrimaryOf(status).name, "fifo");
  sched.StopPrimary();
  EXPECT_EQ(sched.Status({}).size(), 1u);
  EXPECT_EQ(sched.PrimaryName(), "fifo");
}

TEST(PolicySwitchTest, StopPrimaryWithoutPrimaryIsHarmless) {
  Scheduler sched;
  sched.StopPrimary();
  sched.StopPrimary();
  EXPECT_EQ(sched.Status({}).size(), 1u);
}

TEST(PolicySwitchTest, StopPrimaryDrainsThenFallbackServes) {
  Scheduler sched;
  auto requests = MakeRequests(8);
  sched.StartPrimary(std::make_unique<EvenLifoPolicy>());
  for (int i : {0, 2, 4}) sched.Enqueue(requests[i].get(), T0());
  sched.StopPrimary();
  EXPECT_EQ(sched.PrimaryName(), "fifo");
  for (int i : {6, 7}) sched.Enqueue(requests[i].get(), T0());

  auto status = sched.Status({"evenlifo"});
  ASSERT_EQ(status.size(), 2u);  // running as stopping, so not also "stopped"
  EXPECT_EQ(Entries(status, "evenlifo", PolicyState::kStopping).size(), 1u);

  std::vector<uint64_t> order;
  while (Request *r = sched.Dequeue(T0()).request) {
    order.push_back(r->info.object_id);
    sched.Complete(r, T0());
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{4, 2, 0, 6, 7}));
  status = sched.Status({"evenlifo"});
  ASSERT_EQ(status.size(), 2u);
  EXPECT_EQ(Entries(status, "evenlifo", PolicyState::kStopped).size(), 1u);
}

TEST(PolicySwitchTest, SeveralStoppingPoliciesDrainOldestFirst) {
  Scheduler sched;
  auto requests = MakeRequests(6);
  for (int generation = 0; generation < 3; generation++) {
    sched.StartPrimary(NewFifoPolicy());
    sched.Enqueue(requests[2 * generation].get(), T0());
    sched.Enqueue(requests[2 * generation + 1].get(), T0());
  }
  EXPECT_EQ(Entries(sched.Status({}), "fifo", PolicyState::kStopping).size(), 2u);
  for (int i = 0; i < 6; i++) {
    Request *r = sched.Dequeue(T0()).request;
    ASSERT_EQ(r, requests[i].get()) << "position " << i;
    sched.Complete(r, T0());
  }
  EXPECT_TRUE(Entries(sched.Status({}), "fifo", PolicyState::kStopping).empty());
}

// Mirrors ost::Service: every scheduler call under one mutex, producers on
// their own threads, policy changes from another (`next(n)` builds the n-th
// primary; null means stop the primary), a service thread that dequeues,
// serves without the lock, then completes. Returns whether any Dequeue said
// "nothing until t".
bool RunSwitchesUnderLoad(const std::function<std::unique_ptr<Policy>(int)> &make_next) {
  constexpr int kProducers = 4;
  constexpr int kPerProducer = 20000;
  constexpr int kTotal = kProducers * kPerProducer;
  constexpr int kMinSwitches = 300;

  auto requests = MakeRequests(kTotal);
  // Several uids, job ids, objects and ops, so every policy sees classes.
  std::vector<std::shared_ptr<const std::string>> jobids;
  for (int j = 0; j < 5; j++) {
    jobids.push_back(std::make_shared<const std::string>("job" + std::to_string(j)));
  }
  for (int i = 0; i < kTotal; i++) {
    RequestInfo &info = requests[i]->info;
    info.uid = static_cast<uint32_t>(i % 7);
    info.jobid = jobids[i % 5];
    info.op = i % 2 == 0 ? Op::kRead : Op::kWrite;
    info.offset = static_cast<uint64_t>(i % 97) * 4096;
    info.length = 4096;
  }
  std::vector<std::atomic<int>> seen(kTotal);

  std::mutex mu;           // guards sched and clock
  Scheduler sched;         // GUARDED_BY(mu)
  TimePoint clock = T0();  // GUARDED_BY(mu); a tick per call
  auto tick = [&clock] { return clock += 1us; };

  std::atomic<int> producers_left{kProducers};
  std::atomic<bool> switcher_done{false};
  std::atomic<bool> saw_until{false};

  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; p++) {
    producers.emplace_back([&, p] {
      for (int i = p * kPerProducer; i < (p + 1) * kPerProducer; i++) {
        std::lock_guard<std::mutex> lock(mu);
        sched.Enqueue(requests[i].get(), tick());
      }
      producers_left--;
    });
  }

  std::thread switcher([&] {
    for (int n = 0; producers_left > 0 || n < kMinSwitches; n++) {
      // Built outside the lock, published under it, as a live change would be.
      std::unique_ptr<Policy> next = make_next(n);
      std::lock_guard<std::mutex> lock(mu);
      if (next != nullptr) {
        sched.StartPrimary(std::move(next));
      } else {
        sched.StopPrimary();
      }
    }
    switcher_done = true;
  });

  int served = 0;
  std::thread consumer([&] {
    while (served < kTotal) {
      Request *r = nullptr;
      bool drained = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        Pick pick = sched.Dequeue(tick());
        r = pick.request;
        if (pick.not_before.has_value()) saw_until = true;
        drained = r == nullptr && producers_left == 0 && switcher_done && sched.Queued() == 0;
      }
      if (drained) break;  // something was lost; the checks below say what
      if (r == nullptr) {
        std::this_thread::yield();
        continue;
      }
      seen[r->info.object_id]++;
      std::lock_guard<std::mutex> lock(mu);
      sched.Complete(r, tick());
      served++;
    }
  });

  for (auto &t : producers) t.join();
  switcher.join();
  consumer.join();

  EXPECT_EQ(served, kTotal);
  int wrong = 0;
  for (int i = 0; i < kTotal; i++) {
    if (seen[i] != 1) {
      if (wrong++ < 10) ADD_FAILURE() << "request " << i << " dequeued " << seen[i] << " times";
    }
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(sched.Queued(), 0u);
  EXPECT_EQ(sched.Active(), 0u);
  for (const PolicyStatus &s : sched.Status({})) {
    EXPECT_NE(s.state, PolicyState::kStopping) << s.name;
  }
  return saw_until;
}

TEST(PolicySwitchTest, ConcurrentEnqueueDuringSwitchesLosesNothing) {
  const bool saw_until = RunSwitchesUnderLoad([](int n) -> std::unique_ptr<Policy> {
    if (n % 3 == 0) return NewFifoPolicy();
    if (n % 3 == 1) return std::make_unique<EvenLifoPolicy>();
    return nullptr;
  });
  EXPECT_FALSE(saw_until);
}

// The same with every shipped policy, throttling ones included: TBF at
// 200,000 requests/s for two uids against a clock that ticks 1 us per call,
// and delay holding half the requests for 1-20 us.
TEST(PolicySwitchTest, SwitchingAmongEveryShippedPolicyLosesNothing) {
  const PolicyRegistry registry = BuiltinPolicies();
  Tunables tunables;
  tunables.orr_supported = OrrSupported::kReadsAndWrites;
  tunables.crrn_quantum = 3;
  tunables.orr_quantum = 5;
  tunables.delay_pct = 50;
  tunables.delay_min = std::chrono::microseconds(1);
  tunables.delay_max = std::chrono::microseconds(20);
  tunables.random_seed = 7;
  auto rules = TbfRuleSet::Empty()->Apply("start slow uid={1 2} rate=200000 depth=2");
  ASSERT_TRUE(rules.ok());
  tunables.tbf_rules = *rules;
  const char *specs[] = {"crrn", "orr", "tbf uid", "delay", "epoch", "crrn uid", "tbf", "fifo", "epoch uid", ""};
  constexpr int kSpecs = sizeof(specs) / sizeof(specs[0]);
  RunSwitchesUnderLoad([&](int n) -> std::unique_ptr<Policy> {
    const std::string spec = specs[n % kSpecs];
    if (spec.empty()) return nullptr;
    auto policy = registry.Create(spec, tunables);
    EXPECT_TRUE(policy.ok()) << spec;
    return policy.ok() ? std::move(policy).value() : NewFifoPolicy();
  });
}

}  // namespace
}  // namespace sfs::nrs
