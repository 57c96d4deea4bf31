#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "nrs/policy.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using testing::At;
using testing::MakeRequests;
using testing::T0;

Tunables DelayTunables(uint32_t pct, nanoseconds min, nanoseconds max, uint64_t seed = 1) {
  Tunables tunables;
  tunables.delay_pct = pct;
  tunables.delay_min = min;
  tunables.delay_max = max;
  tunables.random_seed = seed;
  return tunables;
}

std::unique_ptr<Policy> MakeDelay(const Tunables& tunables) {
  auto policy = NewDelayPolicy("", tunables);
  EXPECT_TRUE(policy.ok()) << policy.status().message();
  return std::move(policy).value();
}

// What a server would see: requests in the order served and when, following
// every Until to its time. Also checks that a request is never handed out
// before that time: one nanosecond earlier the answer is the same Until.
std::vector<std::pair<Request*, TimePoint>> Serve(Policy& policy, TimePoint now) {
  std::vector<std::pair<Request*, TimePoint>> served;
  for (;;) {
    Pick pick = policy.Dequeue(now);
    if (pick.request != nullptr) {
      served.emplace_back(pick.request, now);
      continue;
    }
    if (!pick.not_before.has_value()) break;
    const TimePoint until = *pick.not_before;
    EXPECT_GT(until, now);
    if (until <= now) break;
    Pick early = policy.Dequeue(until - nanoseconds(1));
    EXPECT_EQ(early.request, nullptr);
    EXPECT_EQ(early.not_before, until);
    now = until;
  }
  return served;
}

TEST(DelayPolicyTest, FactoryArgumentsAndTunables) {
  auto policy = NewDelayPolicy("", Tunables());
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_EQ((*policy)->Name(), "delay");
  EXPECT_EQ((*policy)->Describe(), "pct=100 min_ms=10 max_ms=100");

  auto args = NewDelayPolicy("50", Tunables());
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.err(), EINVAL);

  const Tunables bad[] = {
      DelayTunables(101, milliseconds(1), milliseconds(2)),
      DelayTunables(50, milliseconds(3), milliseconds(2)),
      DelayTunables(50, milliseconds(-1), milliseconds(2)),
      DelayTunables(50, milliseconds(0), std::chrono::hours(24)),
  };
  for (const Tunables& t : bad) {
    auto policy = NewDelayPolicy("", t);
    ASSERT_FALSE(policy.ok()) << t.delay_pct << " " << t.delay_min.count() << " "
                              << t.delay_max.count();
    EXPECT_EQ(policy.err(), EINVAL);
    EXPECT_FALSE(policy.status().message().empty());
  }
  // The edges are allowed: no delay at all, and a fixed delay.
  EXPECT_TRUE(NewDelayPolicy("", DelayTunables(0, nanoseconds(0), nanoseconds(0))).ok());
  EXPECT_TRUE(NewDelayPolicy("", DelayTunables(100, milliseconds(5), milliseconds(5))).ok());
}

TEST(DelayPolicyTest, DescribeShowsSettings) {
  auto delay = MakeDelay(DelayTunables(30, std::chrono::microseconds(500), milliseconds(2)));
  EXPECT_EQ(delay->Describe(), "pct=30 min_ms=0.500 max_ms=2");
  delay->Retune(DelayTunables(5, milliseconds(1), milliseconds(7)), T0());
  EXPECT_EQ(delay->Describe(), "pct=5 min_ms=1 max_ms=7");
}

TEST(DelayPolicyTest, EmptyDequeueIsEmptyNotUntil) {
  auto delay = MakeDelay(Tunables());
  Pick pick = delay->Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_FALSE(pick.not_before.has_value());
}

TEST(DelayPolicyTest, PctZeroServesInArrivalOrderAtOnce) {
  auto delay = MakeDelay(DelayTunables(0, milliseconds(10), milliseconds(100)));
  auto requests = MakeRequests(100);
  for (size_t i = 0; i < requests.size(); i++) {
    ASSERT_TRUE(delay->Enqueue(requests[i].get(), At(milliseconds(i))));
  }
  EXPECT_EQ(delay->Queued(), 100u);
  // Each is due from its own arrival: serving at the last arrival is FIFO.
  for (auto& r : requests) ASSERT_EQ(delay->Dequeue(At(milliseconds(99))).request, r.get());
  EXPECT_EQ(delay->Queued(), 0u);

  ASSERT_TRUE(delay->Enqueue(requests[0].get(), At(milliseconds(500))));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(500))).request, requests[0].get());
}

TEST(DelayPolicyTest, PctHundredDelaysEveryRequestWithinRange) {
  const milliseconds kMin(10), kMax(100);
  auto delay = MakeDelay(DelayTunables(100, kMin, kMax, 7));
  auto requests = MakeRequests(1000);
  for (auto& r : requests) ASSERT_TRUE(delay->Enqueue(r.get(), T0()));

  Pick first = delay->Dequeue(T0());
  EXPECT_EQ(first.request, nullptr);
  ASSERT_TRUE(first.not_before.has_value());

  auto served = Serve(*delay, T0());
  ASSERT_EQ(served.size(), requests.size());
  TimePoint previous = T0();
  for (const auto& [request, when] : served) {
    EXPECT_GE(when, T0() + kMin);
    EXPECT_LE(when, T0() + kMax);
    EXPECT_GE(when, previous) << "served in start-time order";
    previous = when;
  }
  EXPECT_EQ(served.front().second, *first.not_before);
  // The delays spread over the range, not all at one end.
  EXPECT_LT(served.front().second, T0() + milliseconds(20));
  EXPECT_GT(served.back().second, T0() + milliseconds(90));
}

TEST(DelayPolicyTest, FixedDelayKeepsArrivalOrder) {
  auto delay = MakeDelay(DelayTunables(100, milliseconds(10), milliseconds(10)));
  auto requests = MakeRequests(3);
  delay->Enqueue(requests[0].get(), At(milliseconds(0)));
  delay->Enqueue(requests[1].get(), At(milliseconds(5)));
  delay->Enqueue(requests[2].get(), At(milliseconds(5)));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(9))).not_before, At(milliseconds(10)));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(10))).request, requests[0].get());
  EXPECT_EQ(delay->Dequeue(At(milliseconds(10))).not_before, At(milliseconds(15)));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(15))).request, requests[1].get());
  EXPECT_EQ(delay->Dequeue(At(milliseconds(15))).request, requests[2].get());
  EXPECT_FALSE(delay->Dequeue(At(milliseconds(15))).not_before.has_value());
}

TEST(DelayPolicyTest, SameSeedSameSchedule) {
  auto run = [](uint64_t seed) {
    auto delay = MakeDelay(DelayTunables(50, milliseconds(1), milliseconds(1000), seed));
    auto requests = MakeRequests(500);
    for (size_t i = 0; i < requests.size(); i++) {
      delay->Enqueue(requests[i].get(), At(std::chrono::microseconds(i)));
    }
    std::vector<std::pair<uint64_t, TimePoint>> schedule;
    for (const auto& [request, when] : Serve(*delay, T0())) {
      schedule.emplace_back(request->info.object_id, when);
    }
    EXPECT_EQ(schedule.size(), 500u);
    return schedule;
  };
  EXPECT_EQ(run(99), run(99));
  EXPECT_NE(run(99), run(100));
}

TEST(DelayPolicyTest, PctDelaysThatShareOfRequests) {
  auto delay = MakeDelay(DelayTunables(25, milliseconds(1), milliseconds(2), 3));
  auto requests = MakeRequests(10000);
  for (auto& r : requests) delay->Enqueue(r.get(), T0());
  size_t immediate = 0;
  while (delay->Dequeue(T0()).request != nullptr) immediate++;
  // A fixed seed makes this exact; the bounds only say "about 75%".
  EXPECT_GT(immediate, 7200u);
  EXPECT_LT(immediate, 7800u);
  EXPECT_EQ(Serve(*delay, T0()).size(), 10000 - immediate);
}

TEST(DelayPolicyTest, HeldRequestDoesNotBlockADueOne) {
  auto delay = MakeDelay(DelayTunables(100, milliseconds(50), milliseconds(50)));
  auto requests = MakeRequests(2);
  delay->Enqueue(requests[0].get(), T0());
  // Retune applies to later arrivals; requests[0] keeps its start time.
  delay->Retune(DelayTunables(0, milliseconds(50), milliseconds(50)), T0());
  delay->Enqueue(requests[1].get(), At(milliseconds(1)));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(1))).request, requests[1].get());
  EXPECT_EQ(delay->Dequeue(At(milliseconds(1))).not_before, At(milliseconds(50)));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(50))).request, requests[0].get());
}

TEST(DelayPolicyTest, RetuneRangeAppliesToLaterArrivals) {
  auto delay = MakeDelay(DelayTunables(100, milliseconds(10), milliseconds(10)));
  auto requests = MakeRequests(2);
  delay->Enqueue(requests[0].get(), T0());
  delay->Retune(DelayTunables(100, milliseconds(1), milliseconds(1)), T0());
  delay->Enqueue(requests[1].get(), T0());
  EXPECT_EQ(delay->Dequeue(T0()).not_before, At(milliseconds(1)));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(1))).request, requests[1].get());
  EXPECT_EQ(delay->Dequeue(At(milliseconds(1))).not_before, At(milliseconds(10)));
  EXPECT_EQ(delay->Dequeue(At(milliseconds(10))).request, requests[0].get());
}

TEST(DelayPolicyTest, HandlesEveryOp) {
  auto delay = MakeDelay(DelayTunables(0, milliseconds(1), milliseconds(1)));
  auto requests = MakeRequests(7);
  const Op ops[] = {Op::kRead,     Op::kWrite, Op::kTruncate, Op::kPunch,
                    Op::kAllocate, Op::kSync,  Op::kDestroy};
  for (size_t i = 0; i < 7; i++) {
    requests[i]->info.op = ops[i];
    EXPECT_TRUE(delay->Enqueue(requests[i].get(), T0())) << OpName(ops[i]);
  }
  EXPECT_EQ(delay->Queued(), 7u);
}

}  // namespace
}  // namespace sfs::nrs
