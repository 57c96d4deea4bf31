#include "layout/rtds_placement.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "layout/layout.h"
#include "tests/layout/chi_square.h"

namespace sfs::layout {
namespace {

using testing::ChiSquare;
using testing::ChiSquareBound;
using testing::DegreesOfFreedom;

PlacementConfig Weighted(const std::vector<double>& weights) {
  PlacementConfig config;
  config.weights = weights;
  return config;
}

std::unique_ptr<RtdsPlacement> Make(PlacementConfig config, uint64_t seed = 1) {
  auto placement = NewRtdsPlacement(std::move(config), seed);
  EXPECT_TRUE(placement.ok()) << placement.status().message();
  return std::move(placement).value();
}

PlacementContext Uid(uint32_t uid) {
  PlacementContext context;
  context.uid = uid;
  return context;
}

// Objects per OST over `files` creates of `stripes` stripes each.
std::vector<uint64_t> Histogram(RtdsPlacement& placement, int files, uint32_t stripes,
                                const PlacementContext& context = {}) {
  std::vector<uint64_t> counts(placement.config()->ost_count());
  for (int i = 0; i < files; ++i) {
    auto osts = placement.ChooseOsts(stripes, context);
    EXPECT_TRUE(osts.ok());
    if (!osts.ok()) break;
    for (uint32_t ost : *osts) counts[ost]++;
  }
  return counts;
}

Status Edit(RtdsPlacement& placement, const std::function<void(PlacementConfig*)>& edit) {
  return placement.Reconfigure(
      [&](PlacementConfig* config) {
        edit(config);
        return Status::Ok();
      },
      {});
}

TEST(RtdsPlacementTest, SingleStripePicksFollowWeights) {
  const std::vector<double> weights = {1, 2, 3, 4};
  auto placement = Make(Weighted(weights));
  const auto counts = Histogram(*placement, 100000, 1);
  EXPECT_LT(ChiSquare(counts, weights), ChiSquareBound(DegreesOfFreedom(weights)));
}

TEST(RtdsPlacementTest, ZeroWeightNeverChosenAndShortFilesReported) {
  const std::vector<double> weights = {1, 0, 3, 4};
  auto placement = Make(Weighted(weights));
  const auto counts = Histogram(*placement, 50000, 1);
  EXPECT_EQ(counts[1], 0u);
  EXPECT_LT(ChiSquare(counts, weights), ChiSquareBound(DegreesOfFreedom(weights)));
  // Four stripes asked, three usable OSTs: three distinct stripes.
  for (int i = 0; i < 200; ++i) {
    auto choice = placement->Choose(4, {});
    ASSERT_TRUE(choice.ok());
    EXPECT_EQ(std::set<uint32_t>(choice->osts.begin(), choice->osts.end()),
              (std::set<uint32_t>{0, 2, 3}));
    EXPECT_TRUE(choice->short_count());
    EXPECT_EQ(choice->wanted, 4u);
  }
  // "All stripes" means every usable OST of the pool, so it is not short.
  auto all = placement->Choose(kAllStripes, {});
  EXPECT_EQ(all->osts.size(), 3u);
  EXPECT_EQ(all->wanted, 3u);
  EXPECT_FALSE(all->short_count());
}

TEST(RtdsPlacementTest, AllZeroWeightsIsEnospc) {
  EXPECT_EQ(NewRtdsPlacement(Weighted({0, 0, 0}), 1).err(), ENOSPC);
  auto placement = Make(Weighted({1, 1}));
  ASSERT_TRUE(placement->SetAutoFactors({0, 0}).ok());
  EXPECT_EQ(placement->ChooseOsts(1, {}).err(), ENOSPC);
  ASSERT_TRUE(placement->SetAutoFactor(1, 0.5).ok());
  EXPECT_EQ(*placement->ChooseOsts(2, {}), (std::vector<uint32_t>{1}));
  EXPECT_EQ(placement->ChooseOsts(0, {}).err(), EINVAL);
}

TEST(RtdsPlacementTest, DefaultRelativeWeightsGiveDistinctOsts) {
  auto placement = Make(Weighted({1, 2, 3, 4, 5, 6, 7, 8}));
  for (int i = 0; i < 2000; ++i) {
    auto osts = placement->ChooseOsts(1 + i % 8, {});
    ASSERT_TRUE(osts.ok());
    ASSERT_EQ(osts->size(), 1u + i % 8);
    ASSERT_EQ(std::set<uint32_t>(osts->begin(), osts->end()).size(), osts->size());
  }
}

TEST(RtdsPlacementTest, RelativeWeightOneAllowsTwoStripesOnOneOst) {
  PlacementConfig config = Weighted({1, 0});
  config.relative[{0, 0}] = 1;
  auto placement = Make(config);
  auto choice = placement->Choose(3, {});
  EXPECT_EQ(choice->osts, (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_FALSE(choice->short_count());
}

// Four equal OSTs, two stripes per file: the second stripe's OST given that
// the first went to OST 0.
std::vector<uint64_t> SecondAfterZero(RtdsPlacement& placement) {
  std::vector<uint64_t> counts(4);
  for (int i = 0; i < 120000; ++i) {
    auto osts = placement.ChooseOsts(2, {});
    if ((*osts)[0] == 0) counts[(*osts)[1]]++;
  }
  return counts;
}

TEST(RtdsPlacementTest, RelativeWeightBelowOnePushesTheNextStripeAway) {
  PlacementConfig config = Weighted({1, 1, 1, 1});
  // OSTs 0 and 1 share a server: avoid putting two stripes there.
  config.relative[{0, 1}] = 0.25;
  config.relative[{1, 0}] = 0.25;
  auto placement = Make(config, 5);
  const auto counts = SecondAfterZero(*placement);
  const std::vector<double> expected = {0, 0.25, 1, 1};
  EXPECT_EQ(counts[0], 0u);
  EXPECT_LT(ChiSquare(counts, expected), ChiSquareBound(DegreesOfFreedom(expected)));

  auto plain = Make(Weighted({1, 1, 1, 1}), 5);
  const auto before = SecondAfterZero(*plain);
  EXPECT_LT(ChiSquare(before, {0, 1, 1, 1}), ChiSquareBound(2));
  // 1/9 of the second stripes land on OST 1 instead of 1/3.
  EXPECT_LT(counts[1] * 2, before[1]);
}

TEST(RtdsPlacementTest, RelativeWeightAboveOnePullsAndNeverRevivesZero) {
  PlacementConfig config = Weighted({1, 1, 1, 0});
  config.relative[{0, 2}] = 3;
  config.relative[{0, 3}] = INFINITY;  // weight 0 stays 0
  auto placement = Make(config, 6);
  std::vector<uint64_t> counts(4);
  for (int i = 0; i < 60000; ++i) {
    auto osts = *placement->ChooseOsts(3, {});
    ASSERT_EQ(osts.size(), 3u);
    if (osts[0] == 0) counts[osts[1]]++;
    for (uint32_t ost : osts) ASSERT_NE(ost, 3u);
  }
  EXPECT_LT(ChiSquare(counts, {0, 1, 3, 0}), ChiSquareBound(1));
}

PlacementConfig Pools() {
  PlacementConfig config = DefaultPlacementConfig(6);
  config.pools["fast"] = {0, 1};
  config.pools["slow"] = {2, 3};
  config.pools["mid"] = {1, 2, 4};
  config.rules["r1"] = *ParsePoolRule("rank=10 uid={1000,1001} pool=fast");
  config.rules["r2"] = *ParsePoolRule("rank=20 jobid={ior.*} & gid={100} pool=slow");
  return config;
}

std::set<uint32_t> Used(RtdsPlacement& placement, const PlacementContext& context,
                        uint32_t stripes = 2) {
  std::set<uint32_t> used;
  for (int i = 0; i < 300; ++i) {
    auto osts = placement.ChooseOsts(stripes, context);
    EXPECT_TRUE(osts.ok()) << osts.status().message();
    if (osts.ok()) used.insert(osts->begin(), osts->end());
  }
  return used;
}

TEST(RtdsPlacementTest, RulesPickThePoolInRankOrder) {
  auto placement = Make(Pools());
  auto choice = placement->Choose(2, Uid(1000));
  EXPECT_EQ(choice->pool, "fast");
  EXPECT_EQ(choice->rule, "r1");
  EXPECT_EQ(Used(*placement, Uid(1001)), (std::set<uint32_t>{0, 1}));

  PlacementContext ior;
  ior.gid = 100;
  ior.jobid = "ior.500";
  EXPECT_EQ(Used(*placement, ior), (std::set<uint32_t>{2, 3}));
  ior.uid = 1000;  // both rules match: rank 10 wins
  EXPECT_EQ(placement->Choose(1, ior)->rule, "r1");
  ior.gid = 101;  // r2 no longer matches, r1 still does
  ior.uid = 7;
  EXPECT_EQ(placement->Choose(1, ior)->rule, "");
  EXPECT_EQ(placement->Choose(1, ior)->pool, "");

  // Equal ranks: the rule name breaks the tie.
  ASSERT_TRUE(Edit(*placement, [](PlacementConfig* c) {
                c->rules["a0"] = *ParsePoolRule("rank=10 uid={1000} pool=mid");
              }).ok());
  EXPECT_EQ(placement->Choose(1, Uid(1000))->rule, "a0");
  EXPECT_EQ(placement->Choose(1, Uid(1001))->rule, "r1");
}

TEST(RtdsPlacementTest, PrecedenceExplicitRuleFallbackAll) {
  auto placement = Make(Pools());
  PlacementContext context = Uid(1000);
  context.fallback_pool = "mid";
  EXPECT_EQ(placement->Choose(1, context)->pool, "fast");  // rule beats directory
  context.pool = "slow";
  EXPECT_EQ(Used(*placement, context), (std::set<uint32_t>{2, 3}));  // file's own layout first
  EXPECT_EQ(placement->Choose(1, context)->rule, "");

  context = Uid(5);
  context.fallback_pool = "mid";
  EXPECT_EQ(Used(*placement, context, 3), (std::set<uint32_t>{1, 2, 4}));
  context.fallback_pool = "gone";
  auto choice = placement->Choose(1, context);
  EXPECT_TRUE(choice->fallback_pool_missing);
  EXPECT_EQ(choice->pool, "");
  EXPECT_EQ(Used(*placement, context).size(), 6u);

  context.pool = "gone";
  EXPECT_EQ(placement->Choose(1, context).err(), EINVAL);
}

TEST(RtdsPlacementTest, ExplicitOstList) {
  auto placement = Make(Pools());
  PlacementContext context;
  context.osts = {4, 1, 5};
  EXPECT_EQ(*placement->ChooseOsts(2, context), (std::vector<uint32_t>{4, 1}));
  ASSERT_TRUE(placement->SetAutoFactor(1, 0).ok());
  EXPECT_EQ(*placement->ChooseOsts(2, context), (std::vector<uint32_t>{4, 5}));
  context.pool = "mid";
  EXPECT_EQ(placement->ChooseOsts(2, context).err(), EINVAL);  // OST 5 is not in mid
  context.osts = {4, 4};
  EXPECT_EQ(placement->ChooseOsts(2, context).err(), EINVAL);
  context.osts = {9};
  context.pool.clear();
  EXPECT_EQ(placement->ChooseOsts(1, context).err(), EINVAL);
  context.osts = {1};
  EXPECT_EQ(placement->ChooseOsts(1, context).err(), ENOSPC);
}

TEST(RtdsPlacementTest, PoolMembershipChanges) {
  auto placement = Make(Pools());
  PlacementContext context;
  context.pool = "fast";
  ASSERT_TRUE(Edit(*placement, [](PlacementConfig* c) { c->pools["fast"] = {3, 4, 5}; }).ok());
  EXPECT_EQ(Used(*placement, context), (std::set<uint32_t>{3, 4, 5}));
  EXPECT_EQ(Used(*placement, Uid(1000)), (std::set<uint32_t>{3, 4, 5}));
  // An OST in two pools takes a weight change in both.
  ASSERT_TRUE(Edit(*placement, [](PlacementConfig* c) { c->weights[4] = 0; }).ok());
  EXPECT_EQ(Used(*placement, context), (std::set<uint32_t>{3, 5}));
  context.pool = "mid";
  EXPECT_EQ(Used(*placement, context), (std::set<uint32_t>{1, 2}));
  // Removing a pool still named by a rule is refused, and nothing changes.
  const auto before = placement->config();
  Status s = Edit(*placement, [](PlacementConfig* c) { c->pools.erase("slow"); });
  EXPECT_EQ(s.err(), EINVAL);
  EXPECT_EQ(*placement->config(), *before);
  // Without the rule it may go.
  ASSERT_TRUE(Edit(*placement, [](PlacementConfig* c) {
                c->rules.erase("r2");
                c->pools.erase("slow");
              }).ok());
  context.pool = "slow";
  EXPECT_EQ(placement->Choose(1, context).err(), EINVAL);
}

TEST(RtdsPlacementTest, BadReconfigurationChangesNothing) {
  auto placement = Make(Pools());
  const auto before = placement->config();
  int commits = 0;
  auto commit = [&](const PlacementConfig& c) {
    ++commits;
    EXPECT_TRUE(ValidatePlacementConfig(c).ok());
    return Status::Ok();
  };
  // A pool left with no OST of positive weight.
  Status s = placement->Reconfigure(
      [](PlacementConfig* c) { return ApplyWeights(c, *ParseWeightList("0=0,1=0")); }, commit);
  EXPECT_EQ(s.err(), ENOSPC);
  // Unknown OST, from the edit itself.
  s = placement->Reconfigure(
      [](PlacementConfig* c) { return ApplyWeights(c, *ParseWeightList("9=1")); }, commit);
  EXPECT_EQ(s.err(), EINVAL);
  // The persistence step fails.
  s = placement->Reconfigure(
      [](PlacementConfig* c) {
        c->weights[0] = 5;
        return Status::Ok();
      },
      [](const PlacementConfig&) { return Status::Error(EIO, "disk"); });
  EXPECT_EQ(s.err(), EIO);
  EXPECT_EQ(commits, 0);
  EXPECT_EQ(placement->config(), before);  // the very same snapshot
  const auto counts = Histogram(*placement, 30000, 1);
  EXPECT_LT(ChiSquare(counts, {1, 1, 1, 1, 1, 1}), ChiSquareBound(5));

  ASSERT_TRUE(
      placement
          ->Reconfigure(
              [](PlacementConfig* c) { return ApplyWeights(c, *ParseWeightList("0=4,2=0")); },
              commit)
          .ok());
  EXPECT_EQ(commits, 1);
  const std::vector<double> now = {4, 1, 0, 1, 1, 1};
  EXPECT_LT(ChiSquare(Histogram(*placement, 30000, 1), now), ChiSquareBound(DegreesOfFreedom(now)));
}

TEST(RtdsPlacementTest, AutomaticFactorMultipliesAdminWeight) {
  auto placement = Make(Weighted({1, 2, 0, 1}));
  ASSERT_TRUE(placement->SetAutoFactors({0.5, 0.5, 1, 2}).ok());
  EXPECT_EQ(placement->EffectiveWeights(), (std::vector<double>{0.5, 1, 0, 2}));
  const std::vector<double> now = {0.5, 1, 0, 2};
  EXPECT_LT(ChiSquare(Histogram(*placement, 60000, 1), now), ChiSquareBound(2));
  EXPECT_EQ(placement->SetAutoFactor(4, 1).err(), EINVAL);
  EXPECT_EQ(placement->SetAutoFactor(0, -1).err(), EINVAL);
  EXPECT_EQ(placement->SetAutoFactor(0, NAN).err(), EINVAL);
  EXPECT_EQ(placement->SetAutoFactors({1, 1}).err(), EINVAL);
  EXPECT_EQ(placement->AutoFactors(), (std::vector<double>{0.5, 0.5, 1, 2}));
  // Factors survive a reconfiguration, and new OSTs start at 1.
  ASSERT_TRUE(Edit(*placement, [](PlacementConfig* c) { c->weights.push_back(3); }).ok());
  EXPECT_EQ(placement->AutoFactors(), (std::vector<double>{0.5, 0.5, 1, 2, 1}));
  EXPECT_EQ(placement->EffectiveWeights(), (std::vector<double>{0.5, 1, 0, 2, 3}));
}

// Pickers run against two writers. Each writer change is atomic, so every
// file must see one state: the pool wholly before or wholly after a
// membership change, one parity of automatic factors, never an OST of
// admin weight 0. No timing is asserted.
TEST(RtdsPlacementConcurrencyTest, PicksSeeWholeChangesOnly) {
  constexpr uint32_t kOsts = 16;
  const std::vector<uint32_t> a = {4, 5, 6, 7, 8, 9}, b = {10, 11, 12, 13, 14, 15};
  PlacementConfig config = DefaultPlacementConfig(kOsts);
  for (uint32_t ost = 0; ost < 4; ++ost) config.weights[ost] = 0;  // never usable
  config.pools["p"] = a;
  auto placement = Make(config, 9);
  auto parity = [&](int round) {  // every other OST at factor 0
    std::vector<double> f(kOsts);
    for (uint32_t ost = 0; ost < kOsts; ++ost) f[ost] = (ost + round) % 2 ? 0 : 0.5 + ost % 3;
    return f;
  };
  ASSERT_TRUE(placement->SetAutoFactors(parity(0)).ok());

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> files{0};
  auto picker = [&](int id) {
    PlacementContext in_pool;
    in_pool.pool = "p";
    for (int i = 0; i < 20000; ++i) {
      const bool pool = (i + id) % 2 == 0;
      auto osts = placement->ChooseOsts(4, pool ? in_pool : PlacementContext{});
      ASSERT_TRUE(osts.ok()) << osts.status().message();
      ASSERT_FALSE(osts->empty());
      std::set<uint32_t> distinct(osts->begin(), osts->end());
      ASSERT_EQ(distinct.size(), osts->size());
      const bool in_a = *distinct.begin() <= a.back();
      for (uint32_t ost : *osts) {
        ASSERT_GE(ost, 4u) << "an OST of weight 0 was chosen";
        ASSERT_EQ(ost % 2, (*osts)[0] % 2) << "half of an automatic factor change seen";
        if (pool) {
          ASSERT_EQ(ost <= a.back(), in_a) << "half of a pool change seen";
        }
      }
      files++;
    }
  };
  std::thread factors([&] {
    for (int round = 0; !stop; ++round) {
      ASSERT_TRUE(placement->SetAutoFactors(parity(round)).ok());
      ASSERT_TRUE(placement->SetAutoFactor(round % 4, 7).ok());  // admin weight 0 wins
    }
  });
  std::thread pools([&] {
    for (int round = 0; !stop; ++round) {
      ASSERT_TRUE(Edit(*placement, [&](PlacementConfig* c) {
                    if (round % 2) {
                      c->pools["p"] = round % 4 == 1 ? b : a;  // trees rebuilt
                    } else {
                      c->weights[4 + round % 12] = 1 + round % 3;  // trees patched in place
                    }
                  }).ok());
      EXPECT_EQ(Edit(*placement, [](PlacementConfig* c) { c->weights.assign(kOsts, 0); }).err(),
                ENOSPC);
    }
  });
  std::vector<std::thread> pickers;
  for (int id = 0; id < 3; ++id) pickers.emplace_back(picker, id);
  for (auto& t : pickers) t.join();
  stop = true;
  factors.join();
  pools.join();
  EXPECT_EQ(files.load(), 60000u);
}

}  // namespace
}  // namespace sfs::layout
