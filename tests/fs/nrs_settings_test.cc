// The text of the nrs_* settings (fs/nrs_settings.h), without a mount.
#include "fs/nrs_settings.h"

#include <gtest/gtest.h>

#include <chrono>

namespace sfs::fs {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(NrsSettingsTest, PolicySettingTakesOneQualifierAnywhereAfterTheName) {
  auto both = ParsePolicySetting("  tbf   uid+jobid \n");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->spec, "tbf uid+jobid");
  EXPECT_EQ(both->heads, (HeadChoice{true, true}));
  auto hp = ParsePolicySetting("tbf hp uid");
  ASSERT_TRUE(hp.ok());
  EXPECT_EQ(hp->spec, "tbf uid");
  EXPECT_EQ(hp->heads, (HeadChoice{false, true}));
  auto reg = ParsePolicySetting("fifo reg");
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ(reg->heads, (HeadChoice{true, false}));
  EXPECT_EQ(ParsePolicySetting("").err(), EINVAL);
  EXPECT_EQ(ParsePolicySetting("fifo reg hp").err(), EINVAL);
  // A policy named "reg" is the policy name, not a qualifier.
  auto named = ParsePolicySetting("reg");
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->spec, "reg");
}

TEST(NrsSettingsTest, RuleSettingTakesALeadingQualifier) {
  RuleSetting hp = ParseRuleSetting(" hp  start x uid={1} rate=5 ");
  EXPECT_EQ(hp.heads, (HeadChoice{false, true}));
  EXPECT_EQ(hp.command, "start x uid={1} rate=5");
  RuleSetting both = ParseRuleSetting("stop x\n");
  EXPECT_EQ(both.heads, (HeadChoice{true, true}));
  EXPECT_EQ(both.command, "stop x");
}

TEST(NrsSettingsTest, CountsAndOrrSupported) {
  EXPECT_EQ(*ParseCount("q", " 8\n", 1, 65535), 8u);
  EXPECT_EQ(ParseCount("q", "0", 1, 65535).err(), EINVAL);
  EXPECT_EQ(ParseCount("q", "65536", 1, 65535).err(), EINVAL);
  EXPECT_EQ(ParseCount("q", "8x", 1, 65535).err(), EINVAL);
  EXPECT_EQ(*ParseOrrSupported("writes\n"), nrs::OrrSupported::kWrites);
  EXPECT_EQ(ParseOrrSupported("both").err(), EINVAL);
}

TEST(NrsSettingsTest, DurationsParseAndFormat) {
  EXPECT_EQ(*ParseDuration("d", "2"), seconds(2));
  EXPECT_EQ(*ParseDuration("d", "0.5"), milliseconds(500));
  EXPECT_EQ(*ParseDuration("d", "250ms"), milliseconds(250));
  EXPECT_EQ(*ParseDuration("d", "100us"), microseconds(100));
  EXPECT_EQ(*ParseDuration("d", "3s"), seconds(3));
  EXPECT_EQ(FormatDuration(seconds(2)), "2");
  EXPECT_EQ(FormatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(FormatDuration(microseconds(1500)), "1500us");
  for (const char* bad : {"", "-1", "nan", "inf", "3601", "1h", "5 ms", "ms", "ns"}) {
    EXPECT_EQ(ParseDuration("d", bad).err(), EINVAL) << bad;
  }
}

// Found by fuzz/nrs_settings_fuzzer: "1.3us" is 1300 ns, which FormatDuration
// wrote (and stored) as "1us", so a remount ran with 1000 ns.
TEST(NrsSettingsTest, FormatDurationGivesTheSameDurationBack) {
  for (const char* text : {"1.3us", "11.3us", "0.0000013", "0.5us", "7ns", "1.000001"}) {
    auto d = ParseDuration("d", text);
    ASSERT_TRUE(d.ok()) << text;
    auto again = ParseDuration("d", FormatDuration(*d));
    ASSERT_TRUE(again.ok()) << text << " -> " << FormatDuration(*d);
    EXPECT_EQ(*again, *d) << text << " -> " << FormatDuration(*d);
  }
  EXPECT_EQ(FormatDuration(std::chrono::nanoseconds(1300)), "1300ns");
  EXPECT_EQ(*ParseDuration("d", "1300ns"), std::chrono::nanoseconds(1300));
}

}  // namespace
}  // namespace sfs::fs
