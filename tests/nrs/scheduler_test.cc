#include "nrs/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "tests/nrs/test_policies.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::EvenLifoPolicy;
using testing::FallbackOf;
using testing::HoldPolicy;
using testing::MakeRequests;
using testing::PrimaryOf;
using testing::T0;

TEST(SchedulerTest, FallbackOnlyWhenNoPrimary) {
  Scheduler sched;
  EXPECT_EQ(sched.PrimaryName(), "fifo");
  Pick pick = sched.Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_FALSE(pick.not_before.has_value());

  auto status = sched.Status({});
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].name, "fifo");
  EXPECT_EQ(status[0].state, PolicyState::kStarted);
  EXPECT_TRUE(status[0].fallback);
  EXPECT_FALSE(status[0].primary);

  auto requests = MakeRequests(3);
  for (auto& r : requests) sched.Enqueue(r.get(), T0());
  EXPECT_EQ(sched.Queued(), 3u);
  for (auto& r : requests) EXPECT_EQ(sched.Dequeue(T0()).request, r.get());
  EXPECT_EQ(sched.Active(), 3u);
  EXPECT_EQ(sched.Queued(), 0u);
}

TEST(SchedulerTest, RefusedRequestsGoToFallbackAndAllComeOutOnce) {
  Scheduler sched;
  int served = 0;
  sched.StartPrimary(std::make_unique<EvenLifoPolicy>(&served));
  EXPECT_EQ(sched.PrimaryName(), "evenlifo");

  auto requests = MakeRequests(10);
  for (auto& r : requests) sched.Enqueue(r.get(), T0());
  auto status = sched.Status({});
  EXPECT_EQ(PrimaryOf(status).stats.queued, 5u);
  EXPECT_EQ(PrimaryOf(status).description, "parity=even");
  EXPECT_EQ(FallbackOf(status).stats.queued, 5u);

  // Primary (newest first) and fallback (arrival order) take turns.
  std::vector<uint64_t> order;
  for (int i = 0; i < 10; i++) {
    Pick pick = sched.Dequeue(T0());
    ASSERT_NE(pick.request, nullptr);
    order.push_back(pick.request->info.object_id);
    sched.Complete(pick.request, T0());
  }
  EXPECT_EQ(order, (std::vector<uint64_t>{8, 1, 6, 3, 4, 5, 2, 7, 0, 9}));
  EXPECT_EQ(sched.Dequeue(T0()).request, nullptr);
  EXPECT_EQ(served, 5);  // only the primary's own requests

  status = sched.Status({});
  EXPECT_EQ(PrimaryOf(status).stats.completed, 5u);
  EXPECT_EQ(FallbackOf(status).stats.completed, 5u);
  EXPECT_EQ(sched.Queued(), 0u);
  EXPECT_EQ(sched.Active(), 0u);
}

TEST(SchedulerTest, StatsAreExactWithFakeClock) {
  Scheduler sched;
  auto requests = MakeRequests(3);
  Request* r0 = requests[0].get();
  Request* r1 = requests[1].get();
  Request* r2 = requests[2].get();
  r0->info.arrival = At(0ms);
  r0->info.length = 100;
  r1->info.arrival = At(1ms);
  r1->info.length = 200;
  r2->info.arrival = At(2ms);
  r2->info.length = 4096;
  sched.Enqueue(r0, At(0ms));
  sched.Enqueue(r1, At(1ms));
  sched.Enqueue(r2, At(2ms));

  PolicyStats s = FallbackOf(sched.Status({})).stats;
  EXPECT_EQ(s.queued, 3u);
  EXPECT_EQ(s.active, 0u);

  ASSERT_EQ(sched.Dequeue(At(10ms)).request, r0);
  EXPECT_EQ(r0->sched.dequeued, At(10ms));
  s = FallbackOf(sched.Status({})).stats;
  EXPECT_EQ(s.queued, 2u);
  EXPECT_EQ(s.active, 1u);
  EXPECT_EQ(s.completed, 0u);

  sched.Complete(r0, At(15ms));
  s = FallbackOf(sched.Status({})).stats;
  EXPECT_EQ(s.active, 0u);
  EXPECT_EQ(s.completed, 1u);
  EXPECT_EQ(s.bytes, 100u);
  EXPECT_EQ(s.wait_ns, 10'000'000u);
  EXPECT_EQ(s.service_ns, 5'000'000u);

  ASSERT_EQ(sched.Dequeue(At(20ms)).request, r1);  // waited 19 ms
  ASSERT_EQ(sched.Dequeue(At(21ms)).request, r2);  // waited 19 ms
  EXPECT_EQ(sched.Active(), 2u);
  sched.Complete(r2, At(30ms));  // served 9 ms
  sched.Complete(r1, At(40ms));  // served 20 ms

  s = FallbackOf(sched.Status({})).stats;
  EXPECT_EQ(s.queued, 0u);
  EXPECT_EQ(s.active, 0u);
  EXPECT_EQ(s.completed, 3u);
  EXPECT_EQ(s.bytes, 4396u);
  EXPECT_EQ(s.wait_ns, 48'000'000u);
  EXPECT_EQ(s.service_ns, 34'000'000u);
}

TEST(SchedulerTest, UntilOnlyWhenNothingElseIsReady) {
  Scheduler sched;
  auto requests = MakeRequests(2);
  Request* free_request = requests[0].get();
  Request* held = requests[1].get();
  sched.Enqueue(free_request, T0());  // no primary yet: fallback
  sched.StartPrimary(std::make_unique<HoldPolicy>(At(5s)));
  sched.Enqueue(held, T0());

  // The primary is throttled, but the fallback's request is not held back.
  Pick pick = sched.Dequeue(T0());
  EXPECT_EQ(pick.request, free_request);

  pick = sched.Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  ASSERT_TRUE(pick.not_before.has_value());
  EXPECT_EQ(*pick.not_before, At(5s));
  pick = sched.Dequeue(At(4s));
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_EQ(pick.not_before, At(5s));

  ASSERT_NE(held->policy_data, nullptr);
  pick = sched.Dequeue(At(5s));
  EXPECT_EQ(pick.request, held);
  EXPECT_EQ(held->policy_data, nullptr);

  pick = sched.Dequeue(At(5s));
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_FALSE(pick.not_before.has_value());
}

TEST(SchedulerTest, EarliestUntilWinsAcrossPolicies) {
  Scheduler sched;
  auto requests = MakeRequests(2);
  sched.StartPrimary(std::make_unique<HoldPolicy>(At(9s)));
  sched.Enqueue(requests[0].get(), T0());
  sched.StartPrimary(std::make_unique<HoldPolicy>(At(3s)));  // old one stops
  sched.Enqueue(requests[1].get(), T0());

  Pick pick = sched.Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_EQ(pick.not_before, At(3s));
  // The stopping policy is asked first but is still held; the primary is not.
  EXPECT_EQ(sched.Dequeue(At(3s)).request, requests[1].get());
  pick = sched.Dequeue(At(3s));
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_EQ(pick.not_before, At(9s));
  EXPECT_EQ(sched.Dequeue(At(9s)).request, requests[0].get());
}

TEST(SchedulerTest, CompleteReachesThePolicyThatServedIt) {
  Scheduler sched;
  int served_a = 0;
  int served_b = 0;
  auto requests = MakeRequests(1);
  sched.StartPrimary(std::make_unique<EvenLifoPolicy>(&served_a));
  sched.Enqueue(requests[0].get(), T0());
  ASSERT_EQ(sched.Dequeue(T0()).request, requests[0].get());

  // A is empty but still serving one request, so it must stay alive.
  sched.StartPrimary(std::make_unique<EvenLifoPolicy>(&served_b));
  auto stopping = testing::Entries(sched.Status({}), "evenlifo", PolicyState::kStopping);
  ASSERT_EQ(stopping.size(), 1u);
  EXPECT_EQ(stopping[0].stats.active, 1u);
  EXPECT_EQ(stopping[0].stats.queued, 0u);

  sched.Complete(requests[0].get(), At(1s));
  EXPECT_EQ(served_a, 1);
  EXPECT_EQ(served_b, 0);
  EXPECT_TRUE(testing::Entries(sched.Status({}), "evenlifo", PolicyState::kStopping).empty());
  EXPECT_EQ(PrimaryOf(sched.Status({})).stats.completed, 0u);
}

TEST(SchedulerTest, StatusListsRegisteredNamesNotRunningAsStopped) {
  Scheduler sched;
  sched.StartPrimary(NewFifoPolicy());
  auto status = sched.Status({"fifo", "tbf", "hold", "tbf"});
  ASSERT_EQ(status.size(), 4u);
  EXPECT_EQ(status[0].name, "fifo");
  EXPECT_TRUE(status[0].fallback);
  EXPECT_EQ(status[0].state, PolicyState::kStarted);
  EXPECT_EQ(status[1].name, "fifo");
  EXPECT_TRUE(status[1].primary);
  EXPECT_FALSE(status[1].fallback);
  EXPECT_EQ(status[1].state, PolicyState::kStarted);
  EXPECT_EQ(status[2].name, "tbf");
  EXPECT_EQ(status[2].state, PolicyState::kStopped);
  EXPECT_FALSE(status[2].primary || status[2].fallback);
  EXPECT_EQ(status[3].name, "hold");
  EXPECT_EQ(status[3].state, PolicyState::kStopped);
}

TEST(SchedulerTest, PolicyStateNames) {
  EXPECT_STREQ(PolicyStateName(PolicyState::kStopped), "stopped");
  EXPECT_STREQ(PolicyStateName(PolicyState::kStarting), "starting");
  EXPECT_STREQ(PolicyStateName(PolicyState::kStarted), "started");
  EXPECT_STREQ(PolicyStateName(PolicyState::kStopping), "stopping");
}

}  // namespace
}  // namespace sfs::nrs

namespace sfs::nrs {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::EvenLifoPolicy;
using testing::MakeRequests;
using testing::PrimaryOf;
using testing::T0;

// The requests of an OST that stopped answering: those that waited past the
// deadline leave unserved (not counted as served), the others stay, across
// the primary, the fallback and a stopping policy.
TEST(SchedulerTest, TakeArrivedBeforeRemovesOnlyTheOldAndKeepsTheRest) {
  Scheduler sched;
  int served = 0;
  sched.StartPrimary(std::make_unique<EvenLifoPolicy>(&served));
  std::vector<std::unique_ptr<Request>> requests;
  for (int i = 0; i < 12; ++i) {
    auto r = std::move(MakeRequests(1, At(std::chrono::seconds(i))).front());
    r->info.object_id = i;
    sched.Enqueue(r.get(), At(std::chrono::seconds(i)));
    requests.push_back(std::move(r));
    if (i == 5) sched.StartPrimary(std::make_unique<EvenLifoPolicy>(&served));  // old one stops
  }
  ASSERT_EQ(sched.Queued(), 12u);
  std::vector<Request*> expired = sched.TakeArrivedBefore(At(7s), At(20s));
  std::vector<uint64_t> ids;
  for (Request* r : expired) ids.push_back(r->info.object_id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(sched.Queued(), 5u);
  EXPECT_EQ(sched.Active(), 0u);
  // The rest come out once each, and only they were served.
  std::vector<uint64_t> rest;
  for (Pick pick = sched.Dequeue(At(21s)); pick.request != nullptr; pick = sched.Dequeue(At(21s))) {
    rest.push_back(pick.request->info.object_id);
    sched.Complete(pick.request, At(22s));
  }
  std::sort(rest.begin(), rest.end());
  EXPECT_EQ(rest, (std::vector<uint64_t>{7, 8, 9, 10, 11}));
  uint64_t completed = 0;
  for (const PolicyStatus& status : sched.Status({})) completed += status.stats.completed;
  EXPECT_EQ(completed, 5u);
  EXPECT_EQ(sched.Status({}).size(), 2u);  // the drained stopping policy is gone
  // Nothing left to take.
  EXPECT_TRUE(sched.TakeArrivedBefore(At(100s), At(100s)).empty());
}

TEST(SchedulerTest, ServesEveryArrivalAtOnceOnlyWithTheFallbackAlone) {
  Scheduler sched;
  EXPECT_TRUE(sched.ServesEveryArrivalAtOnce());
  sched.StartPrimary(std::make_unique<HoldPolicy>(At(10ms)));
  EXPECT_FALSE(sched.ServesEveryArrivalAtOnce());
  // A stopping primary still holding a request keeps it false until drained.
  auto requests = MakeRequests(1);
  sched.Enqueue(requests[0].get(), T0());
  sched.StopPrimary();
  EXPECT_FALSE(sched.ServesEveryArrivalAtOnce());
  Pick pick = sched.Dequeue(At(10ms));
  ASSERT_EQ(pick.request, requests[0].get());
  sched.Complete(pick.request, At(11ms));
  EXPECT_TRUE(sched.ServesEveryArrivalAtOnce());
}

TEST(SchedulerTest, CountServedAtOnceAddsToTheFallbackAsAdmittedRequestsWould) {
  Scheduler sched;
  LatencyHistogram service;
  service.Add(2'000, 3);
  service.Add(5'000);
  sched.CountServedAtOnce(4, 11'000, service);
  sched.CountServedAtOnce(0, 0, LatencyHistogram{});  // nothing: no change
  const PolicyStatus fifo = FallbackOf(sched.Status({}));
  EXPECT_EQ(fifo.stats.completed, 4u);
  EXPECT_EQ(fifo.stats.active, 0u);
  EXPECT_EQ(fifo.stats.wait_ns, 0u);
  EXPECT_EQ(fifo.stats.service_ns, 11'000u);
  EXPECT_EQ(sched.head_stats().dequeued, 4u);
  ASSERT_EQ(fifo.classes.size(), 1u);
  EXPECT_EQ(fifo.classes[0].requests, 4u);
  EXPECT_EQ(fifo.classes[0].wait.count(), 4u);
  EXPECT_EQ(fifo.classes[0].wait.Percentile(100), 0u);
  EXPECT_EQ(fifo.classes[0].service.count(), 4u);
  EXPECT_GE(fifo.classes[0].service.Percentile(100), 5'000u);
  EXPECT_LT(fifo.classes[0].service.Percentile(75), 5'000u);
  // A request queued and handed out the usual way lands in the same class.
  auto requests = MakeRequests(1);
  sched.Enqueue(requests[0].get(), T0());
  ASSERT_EQ(sched.Dequeue(T0()).request, requests[0].get());
  sched.Complete(requests[0].get(), At(1ms));
  const PolicyStatus after = FallbackOf(sched.Status({}));
  ASSERT_EQ(after.classes.size(), 1u);
  EXPECT_EQ(after.classes[0].requests, 5u);
  EXPECT_EQ(after.stats.completed, 5u);
}

}  // namespace
}  // namespace sfs::nrs
