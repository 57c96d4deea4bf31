// Seed 000's nrs_priority: a queued request taken back from its policy
// (Policy::Remove, every shipped policy) and raised to the high-priority
// head (Nrs::Raise).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "nrs/nrs.h"
#include "nrs/policy.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using namespace std::chrono_literals;
using testing::At;
using testing::MakeRequests;
using testing::T0;

// A policy that holds every request a long time where it throttles.
Tunables Slow() {
  Tunables tunables;
  tunables.tbf_default_rate = 1;
  tunables.delay_pct = 100;
  tunables.delay_min = 10s;
  tunables.delay_max = 10s;
  return tunables;
}

std::unique_ptr<Policy> Make(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(' '));
  const std::string args = spec.find(' ') == std::string::npos ? "" : spec.substr(spec.find(' ') + 1);
  if (name == "fifo") return NewFifoPolicy();
  Result<std::unique_ptr<Policy>> made = Status::Error(EINVAL, "unknown");
  if (name == "crrn") made = NewCrrnPolicy(args, Slow());
  if (name == "orr") made = NewOrrPolicy(args, Slow());
  if (name == "tbf") made = NewTbfPolicy(args, Slow());
  if (name == "delay") made = NewDelayPolicy(args, Slow());
  if (name == "epoch") made = NewEpochPolicy(args, Slow());
  EXPECT_TRUE(made.ok()) << spec;
  return made.ok() ? std::move(made).value() : nullptr;
}

class RemoveTest : public ::testing::TestWithParam<std::string> {};

// Requests 0-2 of uid 1, 3-5 of uid 2, on two objects: the removed ones
// are a class's middle (1), tail (2) and head (3). What is left comes out
// once each, and a request enqueued after the removals (6, uid 1) too.
TEST_P(RemoveTest, ARemovedRequestLeavesAndTheOthersAreServedOnceEach) {
  std::unique_ptr<Policy> policy = Make(GetParam());
  ASSERT_NE(policy, nullptr);
  auto requests = MakeRequests(8);
  for (size_t i = 0; i < requests.size(); i++) {
    requests[i]->info.uid = i < 3 || i == 6 ? 1 : 2;
    requests[i]->info.object_id = i % 2;
    requests[i]->info.offset = i * 4096;
    requests[i]->info.length = 4096;
  }
  for (size_t i = 0; i < 6; i++) ASSERT_TRUE(policy->Enqueue(requests[i].get(), T0()));
  EXPECT_TRUE(policy->Remove(requests[1].get(), At(1ms)));
  EXPECT_TRUE(policy->Remove(requests[2].get(), At(1ms)));
  EXPECT_TRUE(policy->Remove(requests[3].get(), At(1ms)));
  EXPECT_FALSE(policy->Remove(requests[3].get(), At(1ms)));  // gone already
  EXPECT_FALSE(policy->Remove(requests[7].get(), At(1ms)));  // never queued
  EXPECT_EQ(policy->Queued(), 3u);
  ASSERT_TRUE(policy->Enqueue(requests[6].get(), At(2ms)));
  EXPECT_EQ(policy->Queued(), 4u);
  std::vector<uint64_t> served;
  while (Request* r = policy->TakeAny()) {
    served.push_back(r->info.offset / 4096);
    ASSERT_LE(served.size(), 4u);
  }
  std::sort(served.begin(), served.end());
  EXPECT_EQ(served, (std::vector<uint64_t>{0, 4, 5, 6}));
  EXPECT_EQ(policy->Queued(), 0u);
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, RemoveTest,
                         ::testing::Values("fifo", "crrn uid", "orr", "tbf uid", "delay",
                                           "epoch uid"),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.find(' '));
                           return name;
                         });

// A request held back by its policy (here: delayed 10 s) is raised: it is
// served at once from the high-priority head's FIFO, even though that head
// runs a throttling policy too, counted there, and only once.
TEST(RaiseTest, AHeldRequestIsServedAtOnceFromTheHighPriorityHeadOnce) {
  Nrs nrs;
  nrs.head(Head::kRegular).StartPrimary(Make("delay"));
  nrs.head(Head::kHighPriority).StartPrimary(Make("delay"));
  auto requests = MakeRequests(3);
  for (auto& r : requests) nrs.Enqueue(r.get(), T0());
  Pick held = nrs.Dequeue(At(1ms));
  ASSERT_EQ(held.request, nullptr);
  ASSERT_TRUE(held.not_before.has_value());

  ASSERT_TRUE(nrs.Raise(requests[1].get(), At(2ms)));
  EXPECT_FALSE(nrs.Raise(requests[1].get(), At(2ms)));  // once
  EXPECT_EQ(nrs.raised(), 1u);
  EXPECT_EQ(nrs.head(Head::kRegular).Queued(), 2u);
  EXPECT_EQ(nrs.head(Head::kHighPriority).Queued(), 1u);
  Pick raised = nrs.Dequeue(At(3ms));
  ASSERT_EQ(raised.request, requests[1].get());
  EXPECT_TRUE(raised.request->sched.high_priority);
  EXPECT_FALSE(nrs.Raise(requests[1].get(), At(3ms)));  // in service: nothing to move
  nrs.Complete(raised.request, At(4ms));
  // Counted on the high-priority head's fallback, its wait from its
  // arrival (T0), not from the raise.
  uint64_t completed = 0, wait_ns = 0;
  for (const PolicyStatus& s : nrs.head(Head::kHighPriority).Status({})) {
    completed += s.stats.completed;
    if (s.fallback) wait_ns = s.stats.wait_ns;
  }
  EXPECT_EQ(completed, 1u);
  EXPECT_EQ(wait_ns, static_cast<uint64_t>(std::chrono::nanoseconds(3ms).count()));
  // The others are still held by their policy.
  EXPECT_EQ(nrs.Dequeue(At(5ms)).request, nullptr);
  EXPECT_EQ(nrs.Queued(), 2u);
  // A high-priority request (fsync) is not raised again.
  auto sync = MakeRequests(1);
  sync[0]->info.op = Op::kSync;
  nrs.Enqueue(sync[0].get(), At(6ms));
  EXPECT_FALSE(nrs.Raise(sync[0].get(), At(6ms)));
}

// A caller interrupted (ost::Service::Cancel): a queued request leaves
// from whichever head holds it, raised or not, unserved and uncounted;
// one handed out already cannot.
TEST(RemoveFromNrsTest, AQueuedRequestLeavesFromEitherHeadOnce) {
  Nrs nrs;
  nrs.head(Head::kRegular).StartPrimary(Make("delay"));
  auto requests = MakeRequests(3);
  requests[2]->info.op = Op::kSync;  // high priority
  for (auto& r : requests) nrs.Enqueue(r.get(), T0());
  ASSERT_TRUE(nrs.Raise(requests[1].get(), At(1ms)));
  EXPECT_EQ(nrs.Queued(), 3u);
  EXPECT_TRUE(nrs.Remove(requests[0].get(), At(2ms)));   // regular, held by delay
  EXPECT_TRUE(nrs.Remove(requests[1].get(), At(2ms)));   // raised
  EXPECT_FALSE(nrs.Remove(requests[1].get(), At(2ms)));  // gone already
  EXPECT_EQ(nrs.Queued(), 1u);
  Pick sync = nrs.Dequeue(At(3ms));
  ASSERT_EQ(sync.request, requests[2].get());
  EXPECT_FALSE(nrs.Remove(requests[2].get(), At(3ms)));  // in service
  nrs.Complete(sync.request, At(4ms));
  EXPECT_EQ(nrs.Queued(), 0u);
  EXPECT_EQ(nrs.Dequeue(At(5ms)).request, nullptr);
  uint64_t completed = 0;
  for (Head head : {Head::kRegular, Head::kHighPriority}) {
    for (const PolicyStatus& s : nrs.head(head).Status({})) completed += s.stats.completed;
  }
  EXPECT_EQ(completed, 1u);
}

}  // namespace
}  // namespace sfs::nrs
