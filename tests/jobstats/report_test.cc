#include "jobstats/report.h"

#include <gtest/gtest.h>

namespace sfs::jobstats {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

const TimePoint kNow = TimePoint{} + std::chrono::hours(5);
const auto kWallNow = std::chrono::system_clock::time_point{} + seconds(1763880000);

std::vector<TargetJobs> Sample() {
  JobStats ost0, mdt;
  ost0.Record("dd.1000", JobOp::kWrite, 1 << 20, microseconds(310), kNow - seconds(10));
  ost0.Record("dd.1000", JobOp::kWrite, 1 << 20, microseconds(900), kNow);
  ost0.Record("odd \"id\": #1", JobOp::kRead, 4096, microseconds(20), kNow - seconds(1));
  mdt.Record("dd.1000", JobOp::kCreate, 0, microseconds(40), kNow - seconds(10));
  mdt.Record("dd.1000", JobOp::kGetattr, 0, microseconds(4), kNow);
  mdt.Record("dd.1000", JobOp::kGetattr, 0, microseconds(4), kNow);
  return {{"mdt", mdt.Snapshot(kNow)}, {"ost0", ost0.Snapshot(kNow)}};
}

TEST(JobStatsReportTest, YamlInLustresShape) {
  const std::string yaml = FormatYaml(Sample(), kNow, kWallNow, 65536);
  EXPECT_NE(yaml.find("mdt:\n  job_stats:\n  - job_id:          \"dd.1000\"\n"), std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("    snapshot_time:   1763880000.000000000 secs.nsecs\n"), std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("    start_time:      1763879990.000000000 secs.nsecs\n"), std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("    write_bytes:     { samples: 2, unit: bytes, min: 1048576, max: 1048576, "
                      "sum: 2097152 }\n"),
            std::string::npos)
      << yaml;
  // 310 us falls below 512, 900 below 1024.
  EXPECT_NE(yaml.find("    write:           { samples: 2, unit: usecs, min: 310, max: 900, sum: "
                      "1210, hist: { 512: 1, 1024: 1 } }\n"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("getattr:         { samples: 2,"), std::string::npos) << yaml;
  // Kinds a job never used are left out.
  EXPECT_EQ(yaml.find("unlink"), std::string::npos) << yaml;
}

TEST(JobStatsReportTest, ParsesBackAndRanksJobs) {
  auto parsed = ParseYaml(FormatYaml(Sample(), kNow, kWallNow, 65536));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].target, "mdt");
  EXPECT_EQ((*parsed)[2].job_id, "odd \"id\": #1");  // quoted and read back whole
  EXPECT_EQ((*parsed)[2].read_bytes, 4096u);

  auto by_bytes = RankJobs(*parsed, RankBy::kBytes, 10);
  ASSERT_EQ(by_bytes.size(), 2u);
  EXPECT_EQ(by_bytes[0].job_id, "dd.1000");
  EXPECT_EQ(by_bytes[0].write_bytes, 2u << 20);
  EXPECT_EQ(by_bytes[0].ops, 5u);  // 2 writes, 1 create, 2 getattrs over both targets
  EXPECT_EQ(by_bytes[0].op_samples.at("getattr"), 2u);
  EXPECT_EQ(RankJobs(*parsed, RankBy::kOps, 1).size(), 1u);

  const std::string table = RenderJobTable(by_bytes);
  EXPECT_NE(table.find("getattr=2 write=2 create=1"), std::string::npos) << table;
  const std::string json = RenderJobJson(by_bytes);
  EXPECT_NE(json.find(R"({"job_id": "dd.1000", "read_bytes": 0, "write_bytes": 2097152, "ops": 5,)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("job_id": "odd \"id\": #1")"), std::string::npos) << json;
  EXPECT_EQ(RenderJobJson({}), "[]\n");
}

TEST(JobStatsReportTest, StaysWithinTheSizeItIsGivenAndSaysWhatItLeftOut) {
  JobStats many;
  for (int i = 0; i < 500; i++) {
    many.Record("job." + std::to_string(i), JobOp::kWrite, 1, microseconds(1), kNow);
  }
  const std::string yaml = FormatYaml({{"ost0", many.Snapshot(kNow)}}, kNow, kWallNow, 16384);
  EXPECT_LE(yaml.size(), 16384u);
  EXPECT_NE(yaml.find(" more jobs not shown"), std::string::npos);
  auto parsed = ParseYaml(yaml);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_GT(parsed->size(), 10u);
  EXPECT_LT(parsed->size(), 500u);
}

TEST(JobStatsReportTest, ManyTargetsStillFitAndParse) {
  JobStats one;
  one.Record("job.0", JobOp::kWrite, 1, microseconds(1), kNow);
  std::vector<TargetJobs> targets;
  for (int i = 0; i < 2000; i++) targets.push_back({"ost" + std::to_string(i), one.Snapshot(kNow)});
  const std::string yaml = FormatYaml(targets, kNow, kWallNow, 65536);
  EXPECT_LE(yaml.size(), 65536u);
  EXPECT_NE(yaml.find("# cut: "), std::string::npos);
  EXPECT_TRUE(ParseYaml(yaml).ok());
}

TEST(JobStatsReportTest, RefusesWhatItCannotRead) {
  for (const char* bad : {"  - job_id: \"x\"\n", "ost0\n", "ost0:\n  - job_id: unquoted\n",
                          "ost0:\n  - job_name: \"x\"\n",
                          "ost0:\n  - job_id: \"x\"\n    read_bytes: { unit: bytes }\n",
                          "ost0:\n  - job_id: \"bad\\q\"\n"}) {
    auto parsed = ParseYaml(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.err(), EINVAL) << bad;
  }
}

}  // namespace
}  // namespace sfs::jobstats
