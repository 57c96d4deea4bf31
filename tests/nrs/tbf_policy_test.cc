#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "nrs/policy.h"
#include "nrs/tbf_rules.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using testing::At;
using testing::T0;

std::shared_ptr<const TbfRuleSet> Rules(std::initializer_list<std::string_view> commands) {
  std::shared_ptr<const TbfRuleSet> set = TbfRuleSet::Empty();
  for (std::string_view command : commands) {
    auto next = set->Apply(command);
    EXPECT_TRUE(next.ok()) << command << ": " << next.status().message();
    if (next.ok()) set = *next;
  }
  return set;
}

Tunables WithRules(std::initializer_list<std::string_view> commands, uint64_t default_rate = 10) {
  Tunables tunables;
  tunables.tbf_default_rate = default_rate;
  tunables.tbf_rules = Rules(commands);
  return tunables;
}

std::unique_ptr<Policy> NewTbf(std::string_view type, const Tunables& tunables) {
  auto policy = NewTbfPolicy(type, tunables);
  EXPECT_TRUE(policy.ok()) << policy.status().message();
  return policy.ok() ? std::move(*policy) : nullptr;
}

// Requests owned by the test; ids number them in creation order.
class Requests {
 public:
  Request* Make(uint32_t uid, Op op = Op::kRead, uint64_t length = 0, const char* jobid = nullptr) {
    auto r = std::make_unique<Request>();
    r->info.object_id = all_.size();
    r->info.uid = uid;
    r->info.op = op;
    r->info.length = length;
    r->info.arrival = T0();
    if (jobid != nullptr) r->info.jobid = std::make_shared<const std::string>(jobid);
    all_.push_back(std::move(r));
    return all_.back().get();
  }
  // `count` requests of one class, enqueued at `now`.
  std::vector<Request*> Enqueue(Policy& policy, size_t count, uint32_t uid, uint64_t length = 0,
                                TimePoint now = T0()) {
    std::vector<Request*> out;
    for (size_t i = 0; i < count; i++) {
      out.push_back(Make(uid, Op::kRead, length));
      EXPECT_TRUE(policy.Enqueue(out.back(), now));
    }
    return out;
  }

 private:
  std::vector<std::unique_ptr<Request>> all_;
};

// Everything Dequeue hands out at `now`, in order.
std::vector<Request*> DrainAt(Policy& policy, TimePoint now) {
  std::vector<Request*> out;
  for (Pick pick = policy.Dequeue(now); pick.request != nullptr; pick = policy.Dequeue(now)) {
    out.push_back(pick.request);
  }
  return out;
}

struct Served {
  Request* request;
  TimePoint at;
};

// Serves like an ideal service thread: dequeues until told to wait, then
// sleeps exactly until the time Until() gave, up to `end`. Checks that an
// Until(t) is never followed by nothing at t (no busy polling).
std::vector<Served> Simulate(Policy& policy, TimePoint start, TimePoint end) {
  std::vector<Served> out;
  TimePoint now = start;
  bool woke = false;
  while (now <= end) {
    Pick pick = policy.Dequeue(now);
    if (pick.request != nullptr) {
      out.push_back({pick.request, now});
      woke = false;
      continue;
    }
    EXPECT_FALSE(woke) << "Until() woke the service at a time with nothing to serve";
    if (!pick.not_before.has_value()) break;
    EXPECT_GT(*pick.not_before, now);
    now = *pick.not_before;
    woke = true;
  }
  return out;
}

size_t CountUid(const std::vector<Served>& served, uint32_t uid) {
  return std::count_if(served.begin(), served.end(),
                       [&](const Served& s) { return s.request->info.uid == uid; });
}

// The value of `key=` in the line of Describe() that starts with `prefix`.
uint64_t Stat(const Policy& policy, const std::string& prefix, const std::string& key) {
  const std::string text = policy.Describe();
  size_t line = text.rfind("\n" + prefix, std::string::npos);
  line = text.compare(0, prefix.size(), prefix) == 0 ? 0 : line;
  EXPECT_NE(line, std::string::npos) << prefix << " in:\n" << text;
  const size_t end = std::min(text.find('\n', line + 1), text.size());
  const size_t at = text.find(" " + key + "=", line);
  EXPECT_LT(at, end) << key << " in " << text.substr(line, end - line);
  return std::stoull(text.substr(at + key.size() + 2));
}

TEST(TbfPolicyTest, BurstOfDepthThenOnePerInterval) {
  auto tbf = NewTbf("uid", WithRules({}, /*default_rate=*/10));
  Requests requests;
  auto queued = requests.Enqueue(*tbf, 10, 1);
  EXPECT_EQ(tbf->Queued(), 10u);

  EXPECT_EQ(DrainAt(*tbf, T0()), (std::vector<Request*>{queued[0], queued[1], queued[2]}));
  Pick pick = tbf->Dequeue(T0());
  EXPECT_EQ(pick.request, nullptr);
  EXPECT_EQ(pick.not_before, At(milliseconds(100)));
  EXPECT_EQ(tbf->Dequeue(At(milliseconds(99))).not_before, At(milliseconds(100)));
  EXPECT_EQ(DrainAt(*tbf, At(milliseconds(100))), (std::vector<Request*>{queued[3]}));
  EXPECT_EQ(tbf->Dequeue(At(milliseconds(100))).not_before, At(milliseconds(200)));
  EXPECT_EQ(tbf->Queued(), 6u);
}

TEST(TbfPolicyTest, IdleTimeRefillsAtMostDepth) {
  auto tbf = NewTbf("uid", WithRules({"start r uid={1} rate=10 depth=5"}));
  Requests requests;
  requests.Enqueue(*tbf, 1, 1);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);
  requests.Enqueue(*tbf, 20, 1, 0, At(seconds(100)));
  EXPECT_EQ(DrainAt(*tbf, At(seconds(100))).size(), 5u);
  // Refill is lazy and exact: after 250 ms, 2.5 tokens -> 2 requests.
  EXPECT_EQ(DrainAt(*tbf, At(seconds(100) + milliseconds(250))).size(), 2u);
  EXPECT_EQ(tbf->Dequeue(At(seconds(100) + milliseconds(250))).not_before,
            At(seconds(100) + milliseconds(300)));
}

TEST(TbfPolicyTest, UntilIsExactlyTheNextConformanceTime) {
  auto tbf = NewTbf("uid", WithRules({"start r uid={1} rate=3 depth=1"}));
  Requests requests;
  requests.Enqueue(*tbf, 3, 1);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);
  const TimePoint due = At(nanoseconds(333'333'334));  // 10^9 / 3, rounded up
  EXPECT_EQ(tbf->Dequeue(T0()).not_before, due);
  EXPECT_EQ(tbf->Dequeue(due - nanoseconds(1)).not_before, due);
  EXPECT_NE(tbf->Dequeue(due).request, nullptr);
  // No token fraction is lost to rounding: the next one is due at 2/3 s.
  EXPECT_EQ(tbf->Dequeue(due).not_before, At(nanoseconds(666'666'667)));
}

TEST(TbfPolicyTest, RateIsAccurateOverSimulatedSeconds) {
  for (uint64_t rate : {1u, 7u, 1000u, 12345u}) {
    auto tbf = NewTbf("uid", WithRules({}, rate));
    Requests requests;
    requests.Enqueue(*tbf, rate * 10 + 100, 1);
    auto served = Simulate(*tbf, T0(), At(seconds(10)));
    EXPECT_NEAR(double(served.size()), double(rate * 10), 3.0) << "rate " << rate;
    EXPECT_EQ(served.size(), rate * 10 + 3) << "rate " << rate;  // depth + rate * 10 s
  }
}

// A class whose head is taken back (Policy::Remove, a raise) from inside
// the heap gets the newest order and must move to its new place there,
// not stay above classes that are now before it: seven classes that all
// conform at T0 are served in (deadline, order) order, class 2 (head
// removed, so newest) last; then each second request (a full bucket holds
// depth 3), class 2 having none left. Before the fix, PopHead re-sifted
// the root only and class 2 came out ahead of the classes below it in the
// heap: 1 3 6 7 2 4 5 ...
TEST(TbfPolicyTest, AClassWhoseHeadIsRemovedMovesToItsNewPlaceInTheHeap) {
  auto tbf = NewTbf("uid", WithRules({}, /*default_rate=*/1));
  Requests requests;
  std::map<uint32_t, std::vector<Request*>> of;
  for (uint32_t uid = 1; uid <= 7; uid++) of[uid] = requests.Enqueue(*tbf, 2, uid);
  ASSERT_TRUE(tbf->Remove(of[2][0], T0()));
  std::vector<uint32_t> order;
  for (Request* r : DrainAt(*tbf, T0())) order.push_back(r->info.uid);
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 3, 4, 5, 6, 7, 2, 1, 3, 4, 5, 6, 7}));
}

TEST(TbfPolicyTest, FifoWithinAClass) {
  auto tbf = NewTbf("uid", WithRules({}, 1000));
  Requests requests;
  auto queued = requests.Enqueue(*tbf, 50, 7);
  auto served = Simulate(*tbf, T0(), At(seconds(1)));
  ASSERT_EQ(served.size(), queued.size());
  for (size_t i = 0; i < queued.size(); i++) EXPECT_EQ(served[i].request, queued[i]);
}

TEST(TbfPolicyTest, BigRequestsPassWhenTheByteBucketIsFullAndLeaveDebt) {
  // Byte capacity = 1 MiB/s * 3 / min(1000, 100) = 31457 bytes, far below 1 MiB.
  auto tbf = NewTbf("uid", WithRules({"start io uid={1} rate=1000 bps=1M"}));
  Requests requests;
  requests.Enqueue(*tbf, 20, 1, 1 << 20);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);
  // The debt of 1 MiB - 31457 bytes plus a full bucket again: exactly 1 s.
  EXPECT_EQ(tbf->Dequeue(T0()).not_before, At(seconds(1)));
  auto served = Simulate(*tbf, T0(), At(seconds(10)));
  ASSERT_EQ(served.size(), 10u);
  for (size_t i = 0; i < served.size(); i++) EXPECT_EQ(served[i].at, At(seconds(i + 1)));
}

TEST(TbfPolicyTest, BpsOnlyRuleLimitsBytesNotRequests) {
  // No request limit; byte capacity = 100 KiB * 3 / 100 = 3072 bytes.
  auto tbf = NewTbf("uid", WithRules({"start io uid={1} bps=100K"}));
  Requests requests;
  requests.Enqueue(*tbf, 5000, 1, 1024);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 3u);
  auto served = Simulate(*tbf, T0(), At(seconds(10)));
  EXPECT_EQ(served.size(), 1000u);  // 100 KiB/s of 1 KiB requests for 10 s
  EXPECT_NE(tbf->Describe().find("rule io uid={1} rate=0 bps=102400 depth=3"), std::string::npos);
}

TEST(TbfPolicyTest, BothLimitsTogetherTheTighterWins) {
  // Byte capacity = 10 KiB * 3 / 100 = 307 bytes.
  auto tbf = NewTbf("uid", WithRules({"start r uid={1 2} rate=100 bps=10K"}));
  Requests requests;
  requests.Enqueue(*tbf, 2000, 1, 1024);  // bytes bind: 10 requests/s
  requests.Enqueue(*tbf, 2000, 2, 10);    // requests bind: 100/s (bytes would allow 1024/s)
  auto served = Simulate(*tbf, T0(), At(seconds(10)));
  EXPECT_NEAR(double(CountUid(served, 1)), 100.0, 3.0);
  EXPECT_NEAR(double(CountUid(served, 2)), 1000.0, 3.0);
}

TEST(TbfPolicyTest, ClassesInterleaveByDeadline) {
  auto tbf = NewTbf(
      "uid", WithRules({"start one uid={1} rate=1 depth=1", "start two uid={2} rate=2 depth=1",
                        "start four uid={4} rate=4 depth=1"}));
  Requests requests;
  for (uint32_t uid : {1u, 2u, 4u}) requests.Enqueue(*tbf, 100, uid);
  auto served = Simulate(*tbf, T0(), At(seconds(2)));
  EXPECT_EQ(CountUid(served, 1), 3u);  // at 0, 1, 2 s
  EXPECT_EQ(CountUid(served, 2), 5u);
  EXPECT_EQ(CountUid(served, 4), 9u);
  std::map<uint32_t, TimePoint> last;
  for (size_t i = 0; i < served.size(); i++) {
    if (i > 0) {
      EXPECT_GE(served[i].at, served[i - 1].at);
    }
    const uint32_t uid = served[i].request->info.uid;
    if (last.count(uid) != 0) {
      EXPECT_EQ(served[i].at - last[uid], milliseconds(1000 / uid));
    }
    last[uid] = served[i].at;
  }
  // Until() names the earliest class: after serving all due at 0, uid 4 at 250 ms.
  auto again = NewTbf(
      "uid", WithRules({"start one uid={1} rate=1 depth=1", "start four uid={4} rate=4 depth=1"}));
  requests.Enqueue(*again, 2, 1);
  requests.Enqueue(*again, 2, 4);
  EXPECT_EQ(DrainAt(*again, T0()).size(), 2u);
  EXPECT_EQ(again->Dequeue(T0()).not_before, At(milliseconds(250)));
}

TEST(TbfPolicyTest, RaisingTheRateReschedulesWaitingRequests) {
  Tunables tunables = WithRules({"start slow uid={1} rate=1 depth=1"});
  auto tbf = NewTbf("uid", tunables);
  Requests requests;
  auto queued = requests.Enqueue(*tbf, 5, 1);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);
  EXPECT_EQ(tbf->Dequeue(T0()).not_before, At(seconds(1)));

  auto changed = tunables.tbf_rules->Apply("change slow rate=10");
  ASSERT_TRUE(changed.ok());
  tunables.tbf_rules = *changed;
  tbf->Retune(tunables, At(milliseconds(100)));
  // 0.1 token earned at the old rate; 0.9 more at 10/s takes 90 ms.
  EXPECT_EQ(tbf->Dequeue(At(milliseconds(100))).not_before, At(milliseconds(190)));
  auto served = Simulate(*tbf, At(milliseconds(100)), At(seconds(1)));
  ASSERT_EQ(served.size(), 4u);
  EXPECT_EQ(served.back().at, At(milliseconds(490)));
  for (size_t i = 0; i < served.size(); i++) EXPECT_EQ(served[i].request, queued[i + 1]);
  EXPECT_EQ(Stat(*tbf, "rule slow", "rate"), 10u);
  EXPECT_EQ(Stat(*tbf, "rule slow", "served"), 5u);  // counters survive the change
}

TEST(TbfPolicyTest, StoppingARuleWhileRequestsWaitMovesThemToTheDefault) {
  Tunables tunables = WithRules({"start slow uid={1} rate=1 depth=1"}, /*default_rate=*/1000);
  auto tbf = NewTbf("uid", tunables);
  Requests requests;
  auto queued = requests.Enqueue(*tbf, 5, 1);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);

  auto stopped = tunables.tbf_rules->Apply("stop slow");
  ASSERT_TRUE(stopped.ok());
  tunables.tbf_rules = *stopped;
  tbf->Retune(tunables, At(milliseconds(10)));
  tunables.tbf_rules.reset();  // the policy must not depend on the caller's copy
  stopped = Status::Error(EINVAL, "dropped");

  // 0.01 token from the old rule; 0.99 more at 1000/s.
  EXPECT_EQ(tbf->Dequeue(At(milliseconds(10))).not_before, At(nanoseconds(10'990'000)));
  auto served = Simulate(*tbf, At(milliseconds(10)), At(seconds(1)));
  ASSERT_EQ(served.size(), 4u);
  for (size_t i = 0; i < served.size(); i++) EXPECT_EQ(served[i].request, queued[i + 1]);
  EXPECT_EQ(tbf->Queued(), 0u);
  EXPECT_EQ(tbf->Describe().find("rule slow"), std::string::npos);
  EXPECT_EQ(Stat(*tbf, "rule default", "classes"), 1u);
  EXPECT_EQ(Stat(*tbf, "rule default", "served"), 4u);
}

TEST(TbfPolicyTest, IdleClassesRematchWhenNextUsed) {
  Tunables tunables = WithRules({"start a uid={1} rate=10"});
  auto tbf = NewTbf("uid", tunables);
  Requests requests;
  requests.Enqueue(*tbf, 1, 1);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);
  EXPECT_EQ(Stat(*tbf, "rule a", "classes"), 1u);

  tunables.tbf_rules = *tunables.tbf_rules->Apply("start b uid={1} rate=1 depth=1");
  tbf->Retune(tunables, At(seconds(1)));
  requests.Enqueue(*tbf, 3, 1, 0, At(seconds(2)));
  EXPECT_EQ(Stat(*tbf, "rule b", "classes"), 1u);
  EXPECT_EQ(Stat(*tbf, "rule a", "classes"), 0u);
  EXPECT_EQ(DrainAt(*tbf, At(seconds(2))).size(), 1u);  // b's depth, not a's
  EXPECT_EQ(tbf->Dequeue(At(seconds(2))).not_before, At(seconds(3)));
}

TEST(TbfPolicyTest, RuleChangesWhileManyClassesWaitLoseNothing) {
  Tunables tunables = WithRules({"start odd uid={1 3 5 7 9 11 13 15 17 19} rate=20",
                                 "start low uid={0 1 2 3 4} rate=5 depth=1"},
                                /*default_rate=*/50);
  auto tbf = NewTbf("uid", tunables);
  Requests requests;
  std::set<Request*> all;
  for (uint32_t uid = 0; uid < 20; uid++) {
    for (Request* r : requests.Enqueue(*tbf, 30, uid)) all.insert(r);
  }
  std::vector<Served> served = Simulate(*tbf, T0(), At(seconds(1)));
  tunables.tbf_rules = *tunables.tbf_rules->Apply("change odd rate=100 rank=default");
  tbf->Retune(tunables, At(seconds(1)));
  auto more = Simulate(*tbf, At(seconds(1)), At(seconds(2)));
  served.insert(served.end(), more.begin(), more.end());
  tunables.tbf_rules = *tunables.tbf_rules->Apply("stop low");
  tunables.tbf_default_rate = 7;
  tbf->Retune(tunables, At(seconds(2)));
  more = Simulate(*tbf, At(seconds(2)), At(seconds(100)));
  served.insert(served.end(), more.begin(), more.end());

  EXPECT_EQ(tbf->Queued(), 0u);
  std::set<Request*> seen;
  for (size_t i = 0; i < served.size(); i++) {
    EXPECT_TRUE(seen.insert(served[i].request).second) << "served twice";
    if (i > 0) {
      EXPECT_GE(served[i].at, served[i - 1].at);
    }
  }
  EXPECT_EQ(seen, all);
}

TEST(TbfPolicyTest, RealtimePaysBackTokensMissedByALateService) {
  for (bool realtime : {false, true}) {
    auto tbf = NewTbf("uid", WithRules({realtime ? "start r uid={1} rate=10 realtime=1"
                                                 : "start r uid={1} rate=10 realtime=0"}));
    Requests requests;
    requests.Enqueue(*tbf, 100, 1);
    EXPECT_EQ(DrainAt(*tbf, T0()).size(), 3u);
    // The service comes back 1 s late: 10 tokens were earned since.
    EXPECT_EQ(DrainAt(*tbf, At(seconds(1))).size(), realtime ? 10u : 3u) << realtime;
    EXPECT_EQ(tbf->Dequeue(At(seconds(1))).not_before, At(milliseconds(1100)));
    auto served = Simulate(*tbf, At(seconds(1)), At(seconds(2)));
    EXPECT_EQ(served.size(), 10u);
    // Realtime keeps the long-run count at depth + rate * t despite the gap.
    EXPECT_EQ(Stat(*tbf, "rule r", "served"), realtime ? 23u : 16u);
  }
}

TEST(TbfPolicyTest, LateRealtimeClassIsServedByItsOwnSchedule) {
  auto tbf = NewTbf("uid", WithRules({"start rt uid={1} rate=10 depth=1 realtime=1",
                                      "start plain uid={2} rate=10 depth=1"}));
  Requests requests;
  requests.Enqueue(*tbf, 10, 1);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);
  requests.Enqueue(*tbf, 1, 2, 0, At(milliseconds(450)));
  // The service is late until 500 ms. rt is owed the requests due at 100,
  // 200, 300, 400 and 500 ms; plain's one is due at 450 ms, so earliest
  // deadline first puts it between rt's fourth and fifth.
  std::vector<uint32_t> uids;
  for (Request* r : DrainAt(*tbf, At(milliseconds(500)))) uids.push_back(r->info.uid);
  EXPECT_EQ(uids, (std::vector<uint32_t>{1, 1, 1, 1, 2, 1}));
}

TEST(TbfPolicyTest, ThrottledTimeCountsOnlyWaitingForTokens) {
  auto tbf = NewTbf("uid", WithRules({"start r uid={1} rate=10 depth=1"}));
  Requests requests;
  requests.Enqueue(*tbf, 3, 1);
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 1u);                   // no wait
  EXPECT_EQ(DrainAt(*tbf, At(milliseconds(100))).size(), 1u);  // waited 100 ms for tokens
  EXPECT_EQ(DrainAt(*tbf, At(milliseconds(300))).size(), 1u);  // 100 ms tokens + 100 ms late
  EXPECT_EQ(Stat(*tbf, "rule r", "throttled_ms"), 200u);
  EXPECT_EQ(Stat(*tbf, "rule r", "served"), 3u);
}

TEST(TbfPolicyTest, IdleClassesAreReclaimedLeastRecentlyUsedFirst) {
  Tunables tunables;
  tunables.tbf_default_rate = kTbfMaxRate;
  tunables.tbf_idle_class_limit = 100;
  auto tbf = NewTbf("jobid", tunables);
  Request request;
  for (int i = 0; i < 100'000; i++) {
    request.info.jobid = std::make_shared<const std::string>("job." + std::to_string(i));
    const TimePoint now = At(nanoseconds(i * 10));
    ASSERT_TRUE(tbf->Enqueue(&request, now));
    ASSERT_EQ(tbf->Dequeue(now).request, &request);
    if (i % 1000 == 0) {
      EXPECT_LE(Stat(*tbf, "type", "classes"), 100u);
    }
  }
  EXPECT_EQ(Stat(*tbf, "type", "classes"), 100u);
  EXPECT_EQ(Stat(*tbf, "rule default", "classes"), 100u);

  // Backlogged classes are never reclaimed; they become idle one by one.
  Requests requests;
  for (int i = 0; i < 300; i++) {
    tbf->Enqueue(requests.Make(0, Op::kRead, 0, ("busy." + std::to_string(i)).c_str()),
                 At(seconds(1)));
  }
  EXPECT_EQ(Stat(*tbf, "type", "classes"), 400u);
  tunables.tbf_idle_class_limit = 10;
  tbf->Retune(tunables, At(seconds(1)));
  EXPECT_EQ(Stat(*tbf, "type", "classes"), 310u);
  EXPECT_EQ(DrainAt(*tbf, At(seconds(1))).size(), 300u);
  // The 10 older idle classes (full buckets) go; the 300 just spent a token
  // and are kept until their buckets are full again, so that freeing them
  // forgives nothing.
  EXPECT_EQ(Stat(*tbf, "type", "classes"), 300u);
  tbf->Retune(tunables, At(seconds(2)));
  EXPECT_EQ(Stat(*tbf, "type", "classes"), 10u);
}

TEST(TbfPolicyTest, TakeAnyIgnoresTokensForShutdown) {
  auto tbf = NewTbf("uid", WithRules({"start slow uid={1} rate=1 depth=1"}));
  Requests requests;
  auto queued = requests.Enqueue(*tbf, 5, 1);
  EXPECT_EQ(tbf->Dequeue(T0()).request, queued[0]);
  EXPECT_EQ(tbf->Dequeue(T0()).not_before, At(seconds(1)));
  for (size_t i = 1; i < 5; i++) EXPECT_EQ(tbf->TakeAny(), queued[i]);
  EXPECT_EQ(tbf->TakeAny(), nullptr);
  EXPECT_EQ(tbf->Queued(), 0u);
}

TEST(TbfPolicyTest, ReclaimingIdleClassesDoesNotHandOutFreshTokens) {
  // Two synchronous clients (one request at a time) under rate 1/s with a
  // class limit of 1: each goes idle after every request. Were an idle
  // class freed with an empty bucket, it would come back full each time.
  Tunables tunables = WithRules({"start slow uid={1 2} rate=1 depth=1"});
  tunables.tbf_idle_class_limit = 1;
  auto tbf = NewTbf("uid", tunables);
  Requests requests;
  TimePoint now = T0();
  int served = 0;
  Request* waiting[2] = {requests.Make(1), requests.Make(2)};
  tbf->Enqueue(waiting[0], now);
  tbf->Enqueue(waiting[1], now);
  while (now < At(seconds(10))) {
    Pick pick = tbf->Dequeue(now);
    if (pick.request == nullptr) {
      ASSERT_TRUE(pick.not_before.has_value());
      now = *pick.not_before;
      continue;
    }
    served++;
    const uint32_t uid = pick.request->info.uid;
    tbf->Enqueue(requests.Make(uid), now);  // the client's next request at once
  }
  // Per uid: 1 at once (depth) + 1 per second for 10 s.
  EXPECT_LE(served, 2 * 11);
  EXPECT_GE(served, 2 * 10);
}

TEST(TbfPolicyTest, ClassifiesByTheTypeFieldsOnly) {
  Requests requests;
  auto by_uid = NewTbf("uid", WithRules({}));
  by_uid->Enqueue(requests.Make(1, Op::kRead, 0, "a"), T0());
  by_uid->Enqueue(requests.Make(1, Op::kWrite, 0, "b"), T0());
  by_uid->Enqueue(requests.Make(2, Op::kWrite, 0, "b"), T0());
  EXPECT_EQ(Stat(*by_uid, "type", "classes"), 2u);

  auto by_opcode = NewTbf("opcode", WithRules({}));
  by_opcode->Enqueue(requests.Make(1, Op::kTruncate), T0());
  by_opcode->Enqueue(requests.Make(2, Op::kPunch), T0());
  by_opcode->Enqueue(requests.Make(3, Op::kSync), T0());
  EXPECT_EQ(Stat(*by_opcode, "type", "classes"), 2u);

  auto by_jobid = NewTbf("jobid", WithRules({}));
  by_jobid->Enqueue(requests.Make(1, Op::kRead, 0, nullptr), T0());
  by_jobid->Enqueue(requests.Make(2, Op::kRead, 0, ""), T0());
  by_jobid->Enqueue(requests.Make(3, Op::kRead, 0, "dd"), T0());
  EXPECT_EQ(Stat(*by_jobid, "type", "classes"), 2u);
  EXPECT_EQ(by_jobid->Queued(), 3u);
}

TEST(TbfPolicyTest, ClassOfLabels) {
  Requests requests;
  Request* r = requests.Make(1000, Op::kWrite, 0, "dd.0");
  r->info.gid = 50;
  EXPECT_EQ(NewTbf("uid+opcode", WithRules({}))->ClassOf(*r), "uid=1000+opcode=write");
  EXPECT_EQ(NewTbf("opcode+uid", WithRules({}))->ClassOf(*r), "uid=1000+opcode=write");
  EXPECT_EQ(NewTbf("jobid", WithRules({}))->ClassOf(*r), "jobid=dd.0");
  EXPECT_EQ(NewTbf("", WithRules({}))->ClassOf(*r), "uid=1000+gid=50+jobid=dd.0+opcode=write");
  Request* truncate = requests.Make(1, Op::kTruncate);
  EXPECT_EQ(NewTbf("gid+jobid+opcode", WithRules({}))->ClassOf(*truncate),
            "gid=0+jobid=+opcode=punch");
}

TEST(TbfPolicyTest, DescribeListsRulesInMatchOrder) {
  auto tbf =
      NewTbf("uid+opcode", WithRules({"start w opcode={write} rate=5 bps=1K depth=2 realtime=1",
                                      "start u uid={1000} rate=100"},
                                     /*default_rate=*/42));
  Requests requests;
  tbf->Enqueue(requests.Make(1000, Op::kRead), T0());
  tbf->Enqueue(requests.Make(1000, Op::kWrite, 10), T0());
  tbf->Enqueue(requests.Make(1, Op::kWrite, 10), T0());
  EXPECT_EQ(
      tbf->Describe(),
      "type=uid+opcode scope=fs classes=3 queued=3\n"
      "rule u uid={1000} rate=100 bps=0 depth=3 realtime=0 classes=2 throttled_ms=0 served=0\n"
      "rule w opcode={write} rate=5 bps=1024 depth=2 realtime=1 classes=1 throttled_ms=0 "
      "served=0\n"
      "rule default * rate=42 bps=0 depth=3 realtime=0 classes=0 throttled_ms=0 served=0");
  EXPECT_EQ(DrainAt(*tbf, T0()).size(), 3u);
  EXPECT_EQ(Stat(*tbf, "rule u", "served"), 2u);
  EXPECT_EQ(Stat(*tbf, "type", "queued"), 0u);
  EXPECT_EQ(tbf->Name(), "tbf");
}

TEST(TbfPolicyTest, FactoryRejectsRulesOutsideTheTypeAndBadArguments) {
  Tunables tunables = WithRules({"start io jobid={dd*} rate=10"});
  auto policy = NewTbfPolicy("uid", tunables);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.err(), EINVAL);
  EXPECT_EQ(policy.status().message(), "tbf uid cannot use rule 'io': it tests jobid");
  EXPECT_TRUE(NewTbfPolicy("jobid+uid", tunables).ok());
  EXPECT_TRUE(NewTbfPolicy("", tunables).ok());

  Tunables mixed = WithRules({"start m uid={1}&opcode={read},gid={3} rate=10"});
  policy = NewTbfPolicy("uid", mixed);
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.status().message(), "tbf uid cannot use rule 'm': it tests gid+opcode");

  for (const char* type : {"nid", "client", "uid+uid", "uid,gid"}) {
    EXPECT_EQ(NewTbfPolicy(type, Tunables{}).err(), EINVAL) << type;
  }
  Tunables zero;
  zero.tbf_default_rate = 0;
  EXPECT_EQ(NewTbfPolicy("uid", zero).err(), EINVAL);
  zero.tbf_rules = Rules({"change default rate=5"});
  EXPECT_TRUE(NewTbfPolicy("uid", zero).ok());  // the default rule has its own rate
}

}  // namespace
}  // namespace sfs::nrs
