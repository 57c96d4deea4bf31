// CRR-N weight rules (nrs/crrn_weights.h) and the shares they give in the
// policy, with an injected clock.
#include "nrs/crrn_weights.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nrs/policy.h"
#include "tests/nrs/test_requests.h"

namespace sfs::nrs {
namespace {

using testing::T0;

std::shared_ptr<const CrrnWeights> Apply(std::shared_ptr<const CrrnWeights> set,
                                         const std::string& command) {
  auto next = set->Apply(command);
  EXPECT_TRUE(next.ok()) << command << ": " << next.status().ToString();
  return next.ok() ? *next : set;
}

RequestInfo Info(uint32_t uid, uint32_t gid = 0, const std::string& jobid = "") {
  RequestInfo info;
  info.uid = uid;
  info.gid = gid;
  info.jobid = std::make_shared<const std::string>(jobid);
  return info;
}

TEST(CrrnWeightsTest, FirstMatchingRuleGivesTheWeightElseOne) {
  auto set = CrrnWeights::Empty();
  set = Apply(set, "start big uid={1001} weight=4");
  set = Apply(set, "start team gid={50},jobid={ior*} weight=2");  // goes first
  EXPECT_EQ(set->WeightOf(Info(1001)), 4u);
  EXPECT_EQ(set->WeightOf(Info(1001, 50)), 2u);
  EXPECT_EQ(set->WeightOf(Info(7, 0, "ior.42")), 2u);
  EXPECT_EQ(set->WeightOf(Info(7)), 1u);
  set = Apply(set, "change team weight=8");
  EXPECT_EQ(set->WeightOf(Info(1001, 50)), 8u);
  set = Apply(set, "stop team");
  EXPECT_EQ(set->WeightOf(Info(1001, 50)), 4u);
  EXPECT_EQ(set->Serialize(), "start big uid={1001} weight=4\n");
}

TEST(CrrnWeightsTest, UidAndGidRanges) {
  auto set = Apply(CrrnWeights::Empty(), "start team uid={7 1000-1999}&gid={100-199} weight=3");
  EXPECT_EQ(set->WeightOf(Info(1500, 150)), 3u);
  EXPECT_EQ(set->WeightOf(Info(7, 100)), 3u);
  EXPECT_EQ(set->WeightOf(Info(2000, 150)), 1u);
  EXPECT_EQ(set->WeightOf(Info(1500, 200)), 1u);
  EXPECT_EQ(set->Serialize(), "start team uid={7 1000-1999}&gid={100-199} weight=3\n");
  EXPECT_FALSE(CrrnWeights::Empty()->Apply("start bad uid={9-1} weight=2").ok());
}

TEST(CrrnWeightsTest, SerializeRoundTripsInMatchOrder) {
  auto set = CrrnWeights::Empty();
  set = Apply(set, "start a uid={1} weight=2");
  set = Apply(set, "start b uid={1 2} weight=3");
  auto back = CrrnWeights::Deserialize(set->Serialize());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ((*back)->Serialize(), set->Serialize());
  EXPECT_EQ((*back)->WeightOf(Info(1)), 3u);
}

TEST(CrrnWeightsTest, RefusesBadCommandsAndLeavesTheSetAlone) {
  auto set = Apply(CrrnWeights::Empty(), "start a uid={1} weight=2");
  const std::map<std::string, int> bad = {
      {"start b uid={2}", EINVAL},
      {"start b uid={2} weight=0", EINVAL},
      {"start b uid={2} weight=65", EINVAL},
      {"start b uid={2} weight=2 rate=5", EINVAL},
      {"start b opcode={write} weight=2", EINVAL},
      {"start b weight=2", EINVAL},
      {"start a uid={3} weight=2", EEXIST},
      {"change zz weight=2", ENOENT},
      {"stop zz", ENOENT},
      {"stop a now", EINVAL},
      {"begin b uid={2} weight=2", EINVAL},
      {"start b\x01 uid={2} weight=2", EINVAL},
      {"start this_name_is_too_long uid={2} weight=2", EINVAL},
  };
  for (const auto& [command, err] : bad) {
    auto next = set->Apply(command);
    EXPECT_EQ(next.err(), err) << command;
  }
  EXPECT_EQ(set->Serialize(), "start a uid={1} weight=2\n");
  for (size_t i = 1; i < kMaxCrrnWeightRules; ++i) {
    set = Apply(set, "start r" + std::to_string(i) + " uid={" + std::to_string(100 + i) + "} weight=1");
  }
  EXPECT_EQ(set->Apply("start one_more uid={9} weight=1").err(), EINVAL);
}

// Three clients backlogged with weights 1:2:4 get 1/7, 2/7, 4/7 of what
// is served, exactly, whatever the quantum; an idle one's share goes to the
// others.
class WeightedShareTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  std::unique_ptr<Policy> Make(const std::string& args) {
    Tunables tunables;
    tunables.crrn_quantum = GetParam();
    auto weights = CrrnWeights::Empty();
    weights = Apply(weights, "start w2 uid={2} weight=2");
    weights = Apply(weights, "start w4 uid={4} weight=4");
    tunables.crrn_weights = weights;
    auto policy = NewCrrnPolicy(args, tunables);
    EXPECT_TRUE(policy.ok());
    return std::move(policy).value();
  }
  void Add(Policy& policy, uint32_t uid, int count) {
    for (int i = 0; i < count; ++i) {
      auto r = std::make_unique<Request>();
      r->info = Info(uid, 0, "job" + std::to_string(uid));
      ASSERT_TRUE(policy.Enqueue(r.get(), T0()));
      requests_.push_back(std::move(r));
    }
  }
  std::map<uint32_t, int> Serve(Policy& policy, int count) {
    std::map<uint32_t, int> served;
    for (int i = 0; i < count; ++i) {
      Pick pick = policy.Dequeue(T0());
      if (pick.request == nullptr) break;
      served[pick.request->info.uid]++;
    }
    return served;
  }
  std::vector<std::unique_ptr<Request>> requests_;
};

TEST_P(WeightedShareTest, BackloggedClientsShareByWeight) {
  for (const std::string args : {"uid", "jobid"}) {
    auto policy = Make(args);
    const int q = static_cast<int>(GetParam());
    for (uint32_t uid : {1u, 2u, 4u}) Add(*policy, uid, 70 * q * 4);
    auto served = Serve(*policy, 490 * q);  // 70 rounds
    EXPECT_EQ(served[1], 70 * q) << args;
    EXPECT_EQ(served[2], 140 * q) << args;
    EXPECT_EQ(served[4], 280 * q) << args;
  }
}

TEST_P(WeightedShareTest, AnIdleClientsShareGoesToTheOthers) {
  auto policy = Make("uid");
  const int q = static_cast<int>(GetParam());
  for (uint32_t uid : {1u, 4u}) Add(*policy, uid, 50 * q * 4);
  auto served = Serve(*policy, 50 * q * 5);
  EXPECT_EQ(served[1], 50 * q);
  EXPECT_EQ(served[4], 200 * q);
  EXPECT_EQ(served.count(2), 0u);
}

// Requests are tagged with their batch on arrival, so a new weight holds
// for requests that arrive after the change.
TEST_P(WeightedShareTest, ARetunedWeightAppliesToRequestsArrivingAfter) {
  Tunables tunables;
  tunables.crrn_quantum = GetParam();
  auto policy = NewCrrnPolicy("uid", tunables);
  ASSERT_TRUE(policy.ok());
  const int q = static_cast<int>(GetParam());
  Add(**policy, 1, 100 * q);
  Add(**policy, 3, 100 * q);
  auto even = Serve(**policy, 100 * q);
  EXPECT_EQ(even[1], even[3]);
  tunables.crrn_weights = Apply(CrrnWeights::Empty(), "start w3 uid={3} weight=3");
  (*policy)->Retune(tunables, T0());
  Serve(**policy, 100 * q);  // what arrived before the change drains
  ASSERT_EQ((*policy)->Queued(), 0u);
  Add(**policy, 1, 400 * q);
  Add(**policy, 3, 400 * q);
  auto weighted = Serve(**policy, 400 * q);
  EXPECT_EQ(weighted[1], 100 * q);
  EXPECT_EQ(weighted[3], 300 * q);
}

INSTANTIATE_TEST_SUITE_P(Quanta, WeightedShareTest, ::testing::Values(1u, 8u));

}  // namespace
}  // namespace sfs::nrs
