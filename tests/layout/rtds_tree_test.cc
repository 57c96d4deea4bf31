#include "layout/rtds_tree.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/layout/chi_square.h"

namespace sfs::layout {
namespace {

using testing::ChiSquare;
using testing::ChiSquareBound;
using testing::DegreesOfFreedom;

// The definition: the first item whose prefix sum exceeds `point`.
size_t LinearFind(const std::vector<uint64_t>& weights, uint64_t point) {
  for (size_t i = 0; i < weights.size(); ++i) {
    if (point < weights[i]) return i;
    point -= weights[i];
  }
  return weights.size();
}

// Every point of [0, total) lands where the definition says.
void ExpectExhaustive(const std::vector<uint64_t>& weights, const RtdsTree& tree) {
  uint64_t total = 0;
  for (uint64_t w : weights) total += w;
  ASSERT_EQ(tree.total(), total);
  for (uint64_t point = 0; point < total; ++point) {
    ASSERT_EQ(tree.Find(point), LinearFind(weights, point)) << "point " << point;
  }
}

std::vector<uint64_t> Pick(const RtdsTree& tree, int picks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> point(0, tree.total() - 1);
  std::vector<uint64_t> counts(tree.size());
  for (int i = 0; i < picks; ++i) counts[tree.Find(point(rng))]++;
  return counts;
}

std::vector<uint64_t> Units(const std::vector<double>& weights) {
  std::vector<uint64_t> units;
  for (double w : weights) units.push_back(WeightToUnits(w));
  return units;
}

TEST(RtdsTreeTest, FindMatchesTheDefinitionForEveryPoint) {
  std::mt19937_64 rng(7);
  for (size_t n = 1; n <= 40; ++n) {
    std::vector<uint64_t> weights(n);
    for (auto& w : weights) w = rng() % 5;  // zeros included
    ExpectExhaustive(weights, RtdsTree(weights));
  }
}

TEST(RtdsTreeTest, PicksFollowWeights) {
  const std::vector<double> weights = {1, 2, 3, 4};
  const RtdsTree tree(Units(weights));
  const auto counts = Pick(tree, 200000, 1);
  EXPECT_LT(ChiSquare(counts, weights), ChiSquareBound(DegreesOfFreedom(weights)));
}

TEST(RtdsTreeTest, ZeroWeightIsNeverPicked) {
  const std::vector<double> weights = {1, 0, 3, 4, 0};
  const RtdsTree tree(Units(weights));
  const auto counts = Pick(tree, 200000, 2);
  EXPECT_EQ(counts[1], 0u);
  EXPECT_EQ(counts[4], 0u);
  EXPECT_LT(ChiSquare(counts, weights), ChiSquareBound(DegreesOfFreedom(weights)));
}

TEST(RtdsTreeTest, UpdatesAndRemovalsKeepPrefixSumsExact) {
  std::mt19937_64 rng(3);
  std::vector<uint64_t> weights(37, 1);
  RtdsTree tree(weights);
  for (int round = 0; round < 300; ++round) {
    const size_t i = rng() % weights.size();
    weights[i] = rng() % 4 == 0 ? 0 : rng() % 9;  // a quarter of updates remove
    tree.Set(i, weights[i]);
    ASSERT_EQ(tree.weight(i), weights[i]);
    if (round % 25 == 0) ExpectExhaustive(weights, tree);
  }
  ExpectExhaustive(weights, tree);
}

TEST(RtdsTreeTest, UpdatedWeightsFollowedStatistically) {
  RtdsTree tree(Units({5, 5, 5, 5}));
  tree.Set(0, WeightToUnits(4));
  tree.Set(1, WeightToUnits(0));  // removed
  tree.Set(3, WeightToUnits(1));
  const std::vector<double> now = {4, 0, 5, 1};
  const auto counts = Pick(tree, 100000, 4);
  EXPECT_EQ(counts[1], 0u);
  EXPECT_LT(ChiSquare(counts, now), ChiSquareBound(DegreesOfFreedom(now)));
}

TEST(RtdsTreeTest, AllZeroAndEmpty) {
  RtdsTree zero(std::vector<uint64_t>(10, 0));
  EXPECT_EQ(zero.total(), 0u);
  zero.Set(6, 3);
  for (uint64_t point = 0; point < 3; ++point) EXPECT_EQ(zero.Find(point), 6u);
  zero.Set(6, 0);
  EXPECT_EQ(zero.total(), 0u);
  EXPECT_EQ(RtdsTree().total(), 0u);
}

TEST(RtdsTreeTest, HeaviestWeightsDoNotOverflow) {
  std::vector<uint64_t> weights(1000, kMaxUnits);
  RtdsTree tree(weights);
  EXPECT_EQ(tree.total(), 1000 * kMaxUnits);
  EXPECT_EQ(tree.Find(tree.total() - 1), 999u);
  EXPECT_EQ(tree.Find(kMaxUnits), 1u);
}

TEST(WeightUnitsTest, ZeroStaysZeroAndPositiveStaysChoosable) {
  EXPECT_EQ(WeightToUnits(0), 0u);
  EXPECT_EQ(WeightToUnits(-1), 0u);
  EXPECT_EQ(WeightToUnits(NAN), 0u);
  EXPECT_EQ(WeightToUnits(1e-12), 1u);
  EXPECT_EQ(WeightToUnits(1), kUnitsPerWeight);
  EXPECT_EQ(WeightToUnits(INFINITY), kMaxUnits);
  EXPECT_EQ(WeightToUnits(2 * kMaxWeight), kMaxUnits);
  EXPECT_DOUBLE_EQ(UnitsToWeight(WeightToUnits(2.5)), 2.5);

  EXPECT_EQ(ScaleUnits(0, INFINITY), 0u);  // RW never revives weight 0
  EXPECT_EQ(ScaleUnits(100, 0), 0u);
  EXPECT_EQ(ScaleUnits(100, 0.5), 50u);
  EXPECT_EQ(ScaleUnits(1, 1e-9), 1u);
  EXPECT_EQ(ScaleUnits(100, INFINITY), kMaxUnits);
  EXPECT_EQ(ScaleUnits(kMaxUnits, 2), kMaxUnits);
}

TEST(WeightOverlayTest, PrivateCopyLeavesTheSharedTreeAlone) {
  std::mt19937_64 rng(11);
  for (size_t n : {1u, 2u, 7u, 16u, 33u}) {
    std::vector<uint64_t> shared(n);
    for (auto& w : shared) w = rng() % 6;
    const RtdsTree tree(shared);
    WeightOverlay overlay(&tree);
    std::vector<uint64_t> mine = shared;
    for (int round = 0; round < 20; ++round) {
      const size_t i = rng() % n;
      mine[i] = rng() % 3 == 0 ? 0 : rng() % 10;
      overlay.Set(i, mine[i]);
      uint64_t total = 0;
      for (size_t k = 0; k < n; ++k) {
        ASSERT_EQ(overlay.weight(k), mine[k]);
        total += mine[k];
      }
      ASSERT_EQ(overlay.total(), total);
      for (uint64_t point = 0; point < total; ++point) {
        ASSERT_EQ(overlay.Find(point), LinearFind(mine, point)) << "n " << n << " point " << point;
      }
    }
    EXPECT_EQ(tree.total(), [&] {
      uint64_t t = 0;
      for (auto w : shared) t += w;
      return t;
    }());
  }
}

}  // namespace
}  // namespace sfs::layout
