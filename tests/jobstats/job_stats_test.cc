#include "jobstats/job_stats.h"

#include <gtest/gtest.h>

namespace sfs::jobstats {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

const TimePoint kT0 = TimePoint{} + std::chrono::hours(1);

const OpCounters& Op(const JobCounters& job, JobOp op) {
  return *job.ops[static_cast<size_t>(op)];
}

TEST(JobStatsTest, CountsBytesLatencyAndHistogramPerJobAndOp) {
  JobStats stats;
  stats.Record("dd.0", JobOp::kWrite, 4096, microseconds(10), kT0);
  stats.Record("dd.0", JobOp::kWrite, 1 << 20, microseconds(300), kT0 + seconds(1));
  stats.Record("dd.0", JobOp::kRead, 512, microseconds(0), kT0 + seconds(2));
  stats.Record("cp.0", JobOp::kCreate, 0, microseconds(3), kT0 + seconds(1));
  const auto jobs = stats.Snapshot(kT0 + seconds(3));
  ASSERT_EQ(jobs.size(), 2u);
  const JobCounters& dd = jobs[0];  // seen most recently
  EXPECT_EQ(dd.job_id, "dd.0");
  EXPECT_EQ(dd.write_bytes.samples, 2u);
  EXPECT_EQ(dd.write_bytes.min, 4096u);
  EXPECT_EQ(dd.write_bytes.max, 1u << 20);
  EXPECT_EQ(dd.write_bytes.sum, 4096u + (1u << 20));
  EXPECT_EQ(dd.read_bytes.sum, 512u);
  const OpCounters& write = Op(dd, JobOp::kWrite);
  EXPECT_EQ(write.latency_us.samples, 2u);
  EXPECT_EQ(write.latency_us.min, 10u);
  EXPECT_EQ(write.latency_us.max, 300u);
  EXPECT_EQ(write.latency_us.sum, 310u);
  EXPECT_EQ(write.histogram[HistogramBucket(10)], 1u);
  EXPECT_EQ(write.histogram[HistogramBucket(300)], 1u);
  EXPECT_EQ(Op(dd, JobOp::kRead).histogram[0], 1u);  // below 1 us
  EXPECT_EQ(dd.ops[static_cast<size_t>(JobOp::kCreate)], nullptr);  // never used
  EXPECT_EQ(dd.TotalOps(), 3u);
  EXPECT_EQ(dd.start, kT0);
  EXPECT_EQ(jobs[1].job_id, "cp.0");
  EXPECT_EQ(Op(jobs[1], JobOp::kCreate).latency_us.samples, 1u);
  EXPECT_EQ(jobs[1].write_bytes.samples, 0u);  // a create moves no bytes
}

TEST(JobStatsTest, HistogramBucketsArePowersOfTwo) {
  EXPECT_EQ(HistogramBucket(0), 0u);
  EXPECT_EQ(HistogramBucket(1), 1u);
  EXPECT_EQ(HistogramBucket(2), 2u);
  EXPECT_EQ(HistogramBucket(3), 2u);
  EXPECT_EQ(HistogramBucket(4), 3u);
  EXPECT_EQ(HistogramBucket(uint64_t{1} << 40), kHistogramBuckets - 1);
}

TEST(JobStatsTest, EmptyJobIdIsNotCounted) {
  JobStats stats;
  stats.Record("", JobOp::kRead, 1, microseconds(1), kT0);
  EXPECT_EQ(stats.size(), 0u);
}

TEST(JobStatsTest, IdleJobsAreDroppedAfterTheCleanupInterval) {
  JobStats stats;
  stats.SetCleanupInterval(seconds(600), kT0);
  stats.Record("old.0", JobOp::kRead, 1, microseconds(1), kT0);
  stats.Record("busy.0", JobOp::kRead, 1, microseconds(1), kT0);
  stats.Record("busy.0", JobOp::kRead, 1, microseconds(1), kT0 + seconds(500));
  EXPECT_EQ(stats.Snapshot(kT0 + seconds(599)).size(), 2u);
  const auto later = stats.Snapshot(kT0 + seconds(700));
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].job_id, "busy.0");
  // 0 turns cleanup off.
  stats.SetCleanupInterval(seconds(0), kT0 + seconds(700));
  EXPECT_EQ(stats.Snapshot(kT0 + std::chrono::hours(100)).size(), 1u);
}

TEST(JobStatsTest, MemoryIsBoundedByEvictingTheIdlestJob) {
  JobStats stats(/*max_jobs=*/3);
  for (int i = 0; i < 100; i++) {
    stats.Record("job" + std::to_string(i), JobOp::kWrite, 1, microseconds(1),
                 kT0 + seconds(i));
  }
  const auto jobs = stats.Snapshot(kT0 + seconds(100));
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].job_id, "job99");
  EXPECT_EQ(jobs[2].job_id, "job97");
}

TEST(JobStatsTest, ClearForgetsEverything) {
  JobStats stats;
  stats.Record("a", JobOp::kUnlink, 0, microseconds(5), kT0);
  stats.Clear();
  EXPECT_TRUE(stats.Snapshot(kT0).empty());
  stats.Record("a", JobOp::kUnlink, 0, microseconds(5), kT0 + seconds(9));
  EXPECT_EQ(stats.Snapshot(kT0 + seconds(9))[0].start, kT0 + seconds(9));
}

TEST(JobStatsTest, OpNamesRoundTrip) {
  for (size_t i = 0; i < kJobOps; i++) {
    const auto op = static_cast<JobOp>(i);
    EXPECT_EQ(JobOpFromName(JobOpName(op)), op) << JobOpName(op);
  }
  EXPECT_FALSE(JobOpFromName("teleport").has_value());
}

}  // namespace
}  // namespace sfs::jobstats
