// The automatic-weight formula and its setting's syntax (control/auto_weights.h).
#include "control/auto_weights.h"

#include <gtest/gtest.h>

namespace sfs::control {
namespace {

using Mode = AutoWeights::Mode;

TEST(AutoWeightsTest, ParsesModesAndIntervals) {
  auto off = ParseAutoWeights("off\n");
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->mode, Mode::kOff);
  auto space = ParseAutoWeights("space");
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->mode, Mode::kSpace);
  EXPECT_EQ(space->interval_s, 30u);
  auto load = ParseAutoWeights("space+load\tinterval=5");
  ASSERT_TRUE(load.ok());
  EXPECT_EQ(load->mode, Mode::kSpaceLoad);
  EXPECT_EQ(load->interval_s, 5u);
  EXPECT_EQ(FormatAutoWeights(*load), "space+load interval=5");
  EXPECT_EQ(FormatAutoWeights(*off), "off");
  for (const char* bad : {"", "on", "space interval=0", "space interval=86401", "space every=5",
                          "space interval=5s", "load"}) {
    EXPECT_EQ(ParseAutoWeights(bad).err(), EINVAL) << bad;
  }
}

TEST(AutoWeightsTest, SpaceFactorIsFreeSpaceAgainstTheEmptiestOst) {
  std::vector<OstSample> samples(3);
  samples[0].avail_bytes = 100;
  samples[1].avail_bytes = 50;
  samples[2].avail_bytes = 0;  // full
  EXPECT_EQ(AutoFactors(Mode::kSpace, samples), (std::vector<double>{1.0, 0.5, 0.0}));
  EXPECT_EQ(AutoFactors(Mode::kOff, samples), (std::vector<double>{1.0, 1.0, 1.0}));
}

// Seed 004 "weights ... according to free spaces, ... inodes": an OST's
// inodes count once they are scarcer (as a fraction) than its space.
TEST(AutoWeightsTest, SpaceFactorFollowsTheScarcerOfFreeSpaceAndFreeInodes) {
  std::vector<OstSample> samples(4);
  for (OstSample& s : samples) {
    s.total_bytes = 1000;
    s.avail_bytes = 800;
    s.total_files = 100;
    s.free_files = 90;  // inodes plentiful: the space decides
  }
  samples[1].free_files = 20;  // 20 % of its inodes left: 200 bytes' worth
  samples[2].free_files = 0;   // no inode left: nothing can be created there
  samples[3].total_files = 0;  // no fixed inode count (btrfs): space alone
  samples[3].free_files = 0;
  EXPECT_DOUBLE_EQ(EffectiveAvail(samples[0]), 800);
  EXPECT_DOUBLE_EQ(EffectiveAvail(samples[1]), 200);
  EXPECT_DOUBLE_EQ(EffectiveAvail(samples[2]), 0);
  EXPECT_DOUBLE_EQ(EffectiveAvail(samples[3]), 800);
  EXPECT_EQ(AutoFactors(Mode::kSpace, samples), (std::vector<double>{1.0, 0.25, 0.0, 1.0}));
  // The inode-poor OST does not set the scale for the others either.
  samples[0].avail_bytes = 1000;
  samples[0].free_files = 100;
  EXPECT_EQ(AutoFactors(Mode::kSpace, samples), (std::vector<double>{1.0, 0.2, 0.0, 0.8}));
  // A report of more free inodes than inodes (a racing statfs) counts as all free.
  samples[1].free_files = 500;
  EXPECT_DOUBLE_EQ(EffectiveAvail(samples[1]), 800);
}

TEST(AutoWeightsTest, UnhealthyOstsGetZeroAndDoNotSetTheScale) {
  std::vector<OstSample> samples(3);
  samples[0].avail_bytes = 100;
  samples[1].avail_bytes = 1000;
  samples[1].healthy = false;
  samples[2].avail_bytes = 50;
  EXPECT_EQ(AutoFactors(Mode::kSpace, samples), (std::vector<double>{1.0, 0.0, 0.5}));
  for (OstSample& s : samples) s.healthy = false;
  EXPECT_EQ(AutoFactors(Mode::kSpaceLoad, samples), (std::vector<double>{0.0, 0.0, 0.0}));
}

TEST(AutoWeightsTest, LoadLowersBusyOstsAndLeavesEqualOnesEqual) {
  std::vector<OstSample> equal(2);
  for (OstSample& s : equal) {
    s.avail_bytes = 100;
    s.busy = 8;
    s.bytes = 1 << 20;
  }
  EXPECT_EQ(AutoFactors(Mode::kSpaceLoad, equal), (std::vector<double>{1.0, 1.0}));
  std::vector<OstSample> uneven = equal;
  uneven[1].busy = 0;
  uneven[1].bytes = 0;
  const std::vector<double> factors = AutoFactors(Mode::kSpaceLoad, uneven);
  EXPECT_DOUBLE_EQ(factors[1], 1.0);  // the idle one is the reference
  EXPECT_GT(factors[0], 0.0);
  EXPECT_LT(factors[0], 0.5);  // busy and moving all the bytes
}

}  // namespace
}  // namespace sfs::control
