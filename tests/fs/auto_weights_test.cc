// The automatic-weight formula and its setting's syntax (fs/auto_weights.h).
#include "fs/auto_weights.h"

#include <gtest/gtest.h>

namespace sfs::fs {
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
}  // namespace sfs::fs
