#include "layout/placement_config.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sfs::layout {
namespace {

PoolRule Rule(const char* text) { return *ParsePoolRule(text); }

TEST(WeightListTest, ParseAndFormat) {
  auto list = ParseWeightList("0=1,1=2,2=0,3=1");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (WeightList{{0, 1}, {1, 2}, {2, 0}, {3, 1}}));
  EXPECT_EQ(*ParseWeightList(" 3=0.25  1=1e2,"), (WeightList{{3, 0.25}, {1, 100}}));
  EXPECT_EQ(FormatWeightList({1, 2, 0, 1}), "0=1,1=2,2=0,3=1");
  EXPECT_EQ(FormatWeightList({0.1, 1000000}), "0=0.1,1=1000000");
  for (const char* bad : {"", ",", "0", "a=1", "0=", "=1", "0=-1", "0=x", "0=1x", "0=1,0=2",
                          "0=nan", "0=inf", "0=1000001", "65536=1", "-1=1", "0==1"}) {
    EXPECT_EQ(ParseWeightList(bad).err(), EINVAL) << "accepted: " << bad;
  }
  EXPECT_NE(ParseWeightList("0=1,1=x").status().message().find("\"1=x\""), std::string::npos);
}

TEST(WeightListTest, ApplyChecksTheOstCount) {
  PlacementConfig config = DefaultPlacementConfig(4);
  ASSERT_TRUE(ApplyWeights(&config, *ParseWeightList("1=2,3=0")).ok());
  EXPECT_EQ(FormatWeightList(config.weights), "0=1,1=2,2=1,3=0");
  const PlacementConfig before = config;
  Status s = ApplyWeights(&config, *ParseWeightList("0=5,4=1"));
  EXPECT_EQ(s.err(), EINVAL);
  EXPECT_NE(s.message().find("OST 4"), std::string::npos) << s.message();
  EXPECT_EQ(config, before);
}

TEST(RelativeWeightTest, ParseApplyFormat) {
  auto entries = ParseRelativeWeights("0:1=0.5,2:2=1 1:0=inf");
  ASSERT_TRUE(entries.ok()) << entries.status().message();
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_TRUE(std::isinf((*entries)[2].factor));
  PlacementConfig config = DefaultPlacementConfig(3);
  EXPECT_EQ(config.RelativeWeight(1, 1), 0.0);
  EXPECT_EQ(config.RelativeWeight(1, 2), 1.0);
  ASSERT_TRUE(ApplyRelativeWeights(&config, *entries).ok());
  EXPECT_EQ(FormatRelativeWeights(config), "0:1=0.5,1:0=inf,2:2=1");
  EXPECT_EQ(config.RelativeWeight(2, 2), 1.0);
  // Setting a pair back to its default drops it.
  ASSERT_TRUE(ApplyRelativeWeights(&config, *ParseRelativeWeights("0:1=1,2:2=0")).ok());
  EXPECT_EQ(FormatRelativeWeights(config), "1:0=inf");
  EXPECT_EQ(ApplyRelativeWeights(&config, *ParseRelativeWeights("0:3=2")).err(), EINVAL);
  for (const char* bad : {"", "0:1", "0=1", "0:1:2=1", "a:1=1", "0:1=-1", "0:1=nan", "0:1=1,0:1=2",
                          "1=0:2", "0:=1"}) {
    EXPECT_EQ(ParseRelativeWeights(bad).err(), EINVAL) << "accepted: " << bad;
  }
}

TEST(OstSetTest, ParseAndFormat) {
  EXPECT_EQ(*ParseOstSet("osts=0,1"), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(*ParseOstSet("osts=2-3"), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(*ParseOstSet("osts=0,2-4"), (std::vector<uint32_t>{0, 2, 3, 4}));
  EXPECT_EQ(*ParseOstSet("osts=7 3-4,4,3"), (std::vector<uint32_t>{3, 4, 7}));
  EXPECT_EQ(FormatOstSet({0, 2, 3, 4, 7}), "osts=0,2-4,7");
  EXPECT_EQ(FormatOstSet({1, 2}), "osts=1-2");
  EXPECT_EQ(FormatOstSet({5}), "osts=5");
  for (const char* bad : {"", "0,1", "osts=", "osts=3-1", "osts=a", "osts=1-", "osts=-1",
                          "osts=1-2-3", "osts=0-70000", "OSTS=1"}) {
    EXPECT_EQ(ParseOstSet(bad).err(), EINVAL) << "accepted: " << bad;
  }
}

// Found by running placement_weights_fuzzer on a long input (not in its
// own 60 s): each range was expanded before duplicates went, so one 4 KiB
// value asked for 2 GiB and a 64 KiB one ran for seconds in the daemon.
TEST(OstSetTest, OverlappingRangesCostTheirUnionOnly) {
  std::string text = "osts=";
  for (int i = 0; i < 8000; ++i) text += "0-65535,";
  auto osts = ParseOstSet(text + "7");
  ASSERT_TRUE(osts.ok()) << osts.status().message();
  ASSERT_EQ(osts->size(), kMaxOsts);
  EXPECT_EQ(osts->front(), 0u);
  EXPECT_EQ(osts->back(), kMaxOsts - 1);
  auto mixed = ParseOstSet("osts=5-9,0-2,7-12,3,12");
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(FormatOstSet(*mixed), "osts=0-3,5-12");
}

TEST(ValidateConfigTest, NamesTheFault) {
  auto expect = [](const PlacementConfig& config, int err, const char* words) {
    Status s = ValidatePlacementConfig(config);
    EXPECT_EQ(s.err(), err) << s.message();
    EXPECT_NE(s.message().find(words), std::string::npos) << s.message();
  };
  PlacementConfig good = DefaultPlacementConfig(4);
  good.pools["fast"] = {0, 1};
  good.rules["r1"] = Rule("rank=10 uid={1000} pool=fast");
  EXPECT_TRUE(ValidatePlacementConfig(good).ok());

  PlacementConfig c = good;
  c.rules["r2"] = Rule("pool=nope");
  expect(c, EINVAL, "pool nope");
  c = good;
  c.pools["big"] = {2, 9};
  expect(c, EINVAL, "OST 9");
  c = good;
  c.pools["empty"] = {};
  expect(c, EINVAL, "no OST");
  c = good;
  c.pools["bad name"] = {1};
  expect(c, EINVAL, "bad name");
  c = good;
  c.weights[0] = c.weights[1] = 0;
  expect(c, ENOSPC, "pool fast");
  c = good;
  c.weights.assign(4, 0);
  expect(c, ENOSPC, "every OST");
  c = good;
  c.weights[2] = -1;
  expect(c, EINVAL, "OST 2");
  c = good;
  c.weights[2] = NAN;
  expect(c, EINVAL, "OST 2");
  c = good;
  c.relative[{0, 4}] = 1;
  expect(c, EINVAL, "OST 4");
  expect(PlacementConfig{}, EINVAL, "OSTs");
}

TEST(PlacementConfigCodecTest, RoundTripAndGrowth) {
  PlacementConfig config = DefaultPlacementConfig(4);
  ASSERT_TRUE(ApplyWeights(&config, *ParseWeightList("0=1,1=2,2=0,3=0.5")).ok());
  ASSERT_TRUE(ApplyRelativeWeights(&config, *ParseRelativeWeights("0:1=0.5,1:0=0.5")).ok());
  config.pools["fast"] = *ParseOstSet("osts=0,1");
  config.pools["slow"] = *ParseOstSet("osts=2-3");
  config.rules["r1"] = Rule("rank=10 uid={1000,1001} pool=fast");
  config.rules["r2"] = Rule("rank=20 jobid={ior.*} & gid={100} pool=slow");
  const std::string text = EncodePlacementConfig(config);
  EXPECT_EQ(text,
            "weights 0=1,1=2,2=0,3=0.5\n"
            "relative 0:1=0.5,1:0=0.5\n"
            "pool fast osts=0-1\n"
            "pool slow osts=2-3\n"
            "rule r1 rank=10 uid={1000,1001} pool=fast\n"
            "rule r2 rank=20 jobid={ior.*} & gid={100} pool=slow\n");
  auto back = DecodePlacementConfig(text, 4);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, config);

  auto grown = DecodePlacementConfig(text, 6);  // two OSTs added since
  ASSERT_TRUE(grown.ok());
  EXPECT_EQ(FormatWeightList(grown->weights), "0=1,1=2,2=0,3=0.5,4=1,5=1");

  EXPECT_EQ(DecodePlacementConfig(text, 3).err(), EIO);  // names OST 3
  EXPECT_EQ(DecodePlacementConfig("weights 0=1\nbogus\n", 2).err(), EIO);
  EXPECT_EQ(DecodePlacementConfig("rule r1 rank=1 pool=gone\n", 2).err(), EIO);
  EXPECT_EQ(DecodePlacementConfig("pool fast\n", 2).err(), EIO);
  EXPECT_EQ(*DecodePlacementConfig("", 2), DefaultPlacementConfig(2));
}

}  // namespace
}  // namespace sfs::layout
