#include "nrs/stats.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

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

TEST(LatencyHistogramTest, AddManyTimesCountsEach) {
  LatencyHistogram h;
  h.Add(0, 5);
  h.Add(1'000);
  EXPECT_EQ(h.count(), 6u);
  EXPECT_EQ(h.Percentile(80), 0u);
  EXPECT_GE(h.Percentile(100), 1'000u);
}

TEST(AtomicLatencyHistogramTest, MoveIntoHandsOverEachSampleOnce) {
  AtomicLatencyHistogram atomic;
  constexpr int kThreads = 4, kEach = 10'000;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; t++) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kEach; i++) atomic.Add(static_cast<uint64_t>(1'000 * (t + 1)));
    });
  }
  // Moved out while the writers still add: nothing lost, nothing twice.
  LatencyHistogram total;
  uint64_t moved = 0;
  for (int i = 0; i < 100; i++) moved += atomic.MoveInto(&total);
  for (auto& w : writers) w.join();
  moved += atomic.MoveInto(&total);
  EXPECT_EQ(moved, static_cast<uint64_t>(kThreads * kEach));
  EXPECT_EQ(total.count(), static_cast<uint64_t>(kThreads * kEach));
  EXPECT_EQ(atomic.MoveInto(&total), 0u);
  EXPECT_GE(total.Percentile(100), 4'000u);
  EXPECT_LT(total.Percentile(25), 2'000u);
}

TEST(ClassStatsTableTest, AddManyEqualsAddingEach) {
  ClassStatsTable many, each;
  LatencyHistogram wait, service;
  for (int i = 0; i < 3; i++) {
    each.Add("all", 10, 0, 500);
    wait.Add(0);
    service.Add(500);
  }
  many.AddMany("all", 3, 30, wait, service);
  many.AddMany("all", 0, 0, LatencyHistogram{}, LatencyHistogram{});  // no entry change
  const auto a = many.Snapshot(), b = each.Snapshot();
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].requests, b[0].requests);
  EXPECT_EQ(a[0].bytes, b[0].bytes);
  EXPECT_EQ(a[0].wait.count(), b[0].wait.count());
  EXPECT_EQ(a[0].service.Percentile(100), b[0].service.Percentile(100));
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
