#include "nrs/stats.h"

#include <gtest/gtest.h>

#include <string>

namespace sfs::nrs {
namespace {

TEST(LatencyHistogramTest, PercentilesAreUpperBoundsWithinAQuarterOctave) {
  LatencyHistogram h;
  EXPECT_EQ(h.Percentile(50), 0u);
  for (uint64_t v = 1; v <= 1000; v++) h.Add(v * 1000);  // 1 us .. 1 ms
  EXPECT_EQ(h.count(), 1000u);
  for (double p : {1.0, 50.0, 90.0, 99.0, 100.0}) {
    const double exact = p * 10 * 1000;  // the p-th percentile of 1..1000 us
    const double got = static_cast<double>(h.Percentile(p));
    EXPECT_GE(got, exact) << p;
    EXPECT_LE(got, exact * 1.26) << p;
  }
}

TEST(LatencyHistogramTest, SmallValuesAndHugeValuesHaveBuckets) {
  LatencyHistogram h;
  h.Add(0);
  h.Add(3);
  h.Add(UINT64_MAX);
  EXPECT_EQ(h.Percentile(33), 0u);
  EXPECT_EQ(h.Percentile(66), 3u);
  EXPECT_EQ(h.Percentile(100), UINT64_MAX);
}

TEST(LatencyHistogramTest, MergeAddsCounts) {
  LatencyHistogram a, b;
  a.Add(100);
  b.Add(100);
  b.Add(1'000'000);
  a.Merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_GE(a.Percentile(100), 1'000'000u);
}

TEST(ClassStatsTableTest, KeepsRecentClassesAndFoldsTheRest) {
  ClassStatsTable table(3);
  for (int i = 0; i < 10; i++) table.Add("c" + std::to_string(i), 100, 1, 1);
  table.Add("c9", 5, 1, 1);  // most recent
  table.Add("c7", 5, 1, 1);
  auto snap = table.Snapshot();
  ASSERT_EQ(snap.size(), 4u);
  EXPECT_EQ(snap[0].name, "c7");
  EXPECT_EQ(snap[0].requests, 2u);
  EXPECT_EQ(snap[0].bytes, 105u);
  EXPECT_EQ(snap[1].name, "c9");
  EXPECT_EQ(snap[2].name, "c8");
  EXPECT_EQ(snap[3].name, "(other)");
  EXPECT_EQ(snap[3].requests, 7u);
  EXPECT_EQ(snap[3].bytes, 700u);
  EXPECT_EQ(snap[3].wait.count(), 7u);
}

}  // namespace
}  // namespace sfs::nrs
