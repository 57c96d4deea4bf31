#include "resource/quota_limits.h"

#include <gtest/gtest.h>

namespace sfs::resource {
namespace {

TEST(QuotaLimitsTest, ParsesAnySubsetBytesBinaryInodesDecimal) {
  auto change = ParseQuotaLimits("bsoft=10G bhard=12G isoft=100k ihard=120k");
  ASSERT_TRUE(change.ok()) << change.status().ToString();
  EXPECT_EQ(*change->block_soft, 10ULL << 30);
  EXPECT_EQ(*change->block_hard, 12ULL << 30);
  EXPECT_EQ(*change->inode_soft, 100'000u);
  EXPECT_EQ(*change->inode_hard, 120'000u);
  auto one = ParseQuotaLimits(" bhard=5M,\n");
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one->block_soft.has_value());
  EXPECT_EQ(*one->block_hard, 5ULL << 20);
  EXPECT_EQ(*ParseQuotaLimits("ihard=7")->inode_hard, 7u);
  EXPECT_EQ(*ParseQuotaLimits("ihard=2M")->inode_hard, 2'000'000u);
  EXPECT_EQ(*ParseQuotaLimits("bsoft=1p")->block_soft, 1ULL << 50);
}

TEST(QuotaLimitsTest, RefusesWhatIsNotALimit) {
  for (const char* bad : {"", "  ", "bsoft", "bsoft=", "bsoft=x", "bsoft=-1", "bsoft=1X",
                          "bsoft=1KB", "size=1", "bsoft=1 bsoft=2", "bhard=8E", "bhard=8192P",
                          "bsoft=99999999999999999999"}) {
    EXPECT_EQ(ParseQuotaLimits(bad).err(), EINVAL) << bad;
  }
}

TEST(QuotaLimitsTest, AChangeKeepsWhatItDoesNotNameAndKeepsSoftBelowHard) {
  QuotaLimits current{100, 200, 10, 20};
  auto next = ApplyQuotaChange(current, *ParseQuotaLimits("bhard=300 isoft=0"));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, (QuotaLimits{100, 300, 0, 20}));
  EXPECT_EQ(ApplyQuotaChange(current, *ParseQuotaLimits("bsoft=201")).err(), EINVAL);
  EXPECT_EQ(ApplyQuotaChange(current, *ParseQuotaLimits("ihard=9")).err(), EINVAL);
  // No hard limit: any soft one goes.
  EXPECT_TRUE(ApplyQuotaChange(current, *ParseQuotaLimits("bhard=0 bsoft=999")).ok());
  EXPECT_FALSE(ApplyQuotaChange(current, *ParseQuotaLimits("bsoft=0 bhard=0 isoft=0 ihard=0"))->any());
}

TEST(QuotaLimitsTest, FormattedLimitsParseBackToThemselves) {
  const QuotaLimits limits{1, 1ULL << 40, 3, 4};
  auto back = ApplyQuotaChange({}, *ParseQuotaLimits(FormatQuotaLimits(limits)));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, limits);
}

TEST(QuotaLimitsTest, GraceIsOneDurationOrOnePerKind) {
  const QuotaGrace week;
  EXPECT_EQ(*ParseQuotaGrace("3600", week), (QuotaGrace{3600, 3600}));
  EXPECT_EQ(*ParseQuotaGrace("2d", week), (QuotaGrace{2 * 86400, 2 * 86400}));
  EXPECT_EQ(*ParseQuotaGrace("igrace=90s", week), (QuotaGrace{week.block_seconds, 90}));
  EXPECT_EQ(*ParseQuotaGrace("bgrace=1w igrace=0", week), (QuotaGrace{604800, 0}));
  EXPECT_EQ(*ParseQuotaGrace(FormatQuotaGrace({5, 6}), week), (QuotaGrace{5, 6}));
  for (const char* bad : {"", "x", "1y", "-5", "bgrace", "bgrace=1 bgrace=2", "grace=1",
                          "1w 2w", "600w"}) {
    EXPECT_EQ(ParseQuotaGrace(bad, week).err(), EINVAL) << bad;
  }
}

}  // namespace
}  // namespace sfs::resource
