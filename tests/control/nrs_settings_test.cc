// The text of the nrs_* settings (control/nrs_settings.h), without a mount.
#include "control/nrs_settings.h"

#include <gtest/gtest.h>

#include <chrono>
#include <utility>

namespace sfs::control {
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

TEST(NrsSettingsTest, SettingNamesSplitIntoOstHeadAndBase) {
  const SettingName plain = SplitSettingName("nrs_orr_quantum");
  EXPECT_EQ(plain.ost, -1);
  EXPECT_FALSE(plain.head_given);
  EXPECT_EQ(plain.base, "nrs_orr_quantum");
  const SettingName both = SplitSettingName("ost12.hp.nrs_orr_quantum");
  EXPECT_EQ(both.ost, 12);
  EXPECT_EQ(both.heads, (HeadChoice{false, true}));
  EXPECT_EQ(both.base, "nrs_orr_quantum");
  EXPECT_EQ(JoinSettingName(both), "ost12.hp.nrs_orr_quantum");
  const SettingName reg = SplitSettingName("reg.nrs_crrn_weight");
  EXPECT_EQ(reg.heads, (HeadChoice{true, false}));
  EXPECT_EQ(JoinSettingName(reg), "reg.nrs_crrn_weight");
  EXPECT_EQ(JoinSettingName(SplitSettingName("ost007.nrs_epoch_ms")), "ost7.nrs_epoch_ms");
  // Not prefixes: the whole name is the base, which no setting has.
  for (const char* name : {"ost.nrs_orr_quantum", "ostx.nrs_orr_quantum", "ost-1.nrs_orr_quantum",
                           "ost99999999999.nrs_orr_quantum", "hpnrs_orr_quantum"}) {
    EXPECT_EQ(SplitSettingName(name).base, name) << name;
  }
  // The head comes after the OST.
  const SettingName swapped = SplitSettingName("hp.ost1.nrs_orr_quantum");
  EXPECT_EQ(swapped.ost, -1);
  EXPECT_EQ(swapped.base, "ost1.nrs_orr_quantum");
}

TEST(NrsSettingsTest, EveryTunableFormatsToTextThatParsesBack) {
  TunableValues values;
  for (auto [name, text] : {std::pair{"nrs_crrn_quantum", "3"},
                            {"nrs_orr_quantum", "17"},
                            {"nrs_orr_supported", "reads_and_writes"},
                            {"nrs_tbf_default_rate", "123"},
                            {"nrs_tbf_class_limit", "9"},
                            {"nrs_delay_pct", "0"},
                            {"nrs_delay_min", "20ms"},
                            {"nrs_delay_max", "2"},
                            {"nrs_epoch_max_ms", "70"},
                            {"nrs_hp_ratio", "4"},
                            {"nrs_hp_ops", "fsync"},
                            {"nrs_epoch_ms", "30"},
                            {"nrs_tbf_scope", "ost"},
                            {"nrs_eh_timeout", "3"},
                            {"nrs_orr_quantum_bytes", "1048576"}}) {
    ASSERT_NE(FindTunable(name), nullptr) << name;
    ASSERT_TRUE(ParseTunable(name, text, &values).ok()) << name;
    EXPECT_EQ(FormatTunable(name, values), text) << name;
  }
  EXPECT_EQ(TunableNames().size(), 15u);  // each one above
  EXPECT_EQ(FindTunable("nrs_orr_quantum")->reach, TunableReach::kHead);
  EXPECT_EQ(FindTunable("nrs_orr_quantum_bytes")->reach, TunableReach::kHead);
  EXPECT_EQ(FindTunable("nrs_epoch_ms")->reach, TunableReach::kService);
  EXPECT_EQ(FindTunable("nrs_eh_timeout")->reach, TunableReach::kFilesystem);
  EXPECT_EQ(FindTunable("nrs_policies"), nullptr);
  // A refusal leaves the values alone.
  const TunableValues before = values;
  EXPECT_EQ(ParseTunable("nrs_orr_quantum", "0", &values).err(), EINVAL);
  EXPECT_EQ(ParseTunable("nrs_eh_timeout", "5ms", &values).err(), EINVAL);
  EXPECT_EQ(FormatTunable("nrs_orr_quantum", values), FormatTunable("nrs_orr_quantum", before));
  EXPECT_EQ(FormatTunable("nrs_eh_timeout", values), "3");
}

}  // namespace
}  // namespace sfs::control
