#include "fs/jobid.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace sfs::fs {
namespace {

namespace stdfs = std::filesystem;

// A fake /proc with one process: its environ and comm.
class JobIdsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sfs-jobid-XXXXXX";
    root_ = mkdtemp(tmpl);
  }
  void TearDown() override { stdfs::remove_all(root_); }
  void Process(int pid, const std::string& environ, const std::string& comm) {
    stdfs::create_directories(root_ + "/" + std::to_string(pid));
    std::ofstream(root_ + "/" + std::to_string(pid) + "/environ") << environ;
    std::ofstream(root_ + "/" + std::to_string(pid) + "/comm") << comm << "\n";
  }
  std::string root_;
};

TEST_F(JobIdsTest, ReadsTheNamedVariable) {
  using namespace std::string_literals;
  Process(42, "HOME=/root\0SLURM_JOB_ID=1234\0PATH=/bin\0"s, "ior");
  JobIds jobids(root_);
  EXPECT_EQ(*jobids.Resolve(42, 1000, 0, JobidConfig{"SLURM_JOB_ID"}), "1234");
  EXPECT_EQ(*jobids.Resolve(42, 1000, 0, JobidConfig{"PATH"}), "/bin");
}

TEST_F(JobIdsTest, FallsBackToProcnameUid) {
  using namespace std::string_literals;
  Process(7, "HOME=/root\0SLURM_JOB_IDX=9\0"s, "dd");
  JobIds jobids(root_);
  EXPECT_EQ(*jobids.Resolve(7, 1001, 0, JobidConfig{"SLURM_JOB_ID"}), "dd.1001");
  EXPECT_EQ(*jobids.Resolve(7, 1001, 0, JobidConfig{"procname_uid"}), "dd.1001");
  EXPECT_EQ(*jobids.Resolve(7, 1001, 0, JobidConfig{"disable"}), "");
  // A process that is gone still gets an id.
  EXPECT_EQ(*jobids.Resolve(99, 5, 0, JobidConfig{"SLURM_JOB_ID"}), "unknown.5");
}

TEST_F(JobIdsTest, CachesPerProcessUntilCleared) {
  using namespace std::string_literals;
  Process(8, "JOB=a\0"s, "x");
  JobIds jobids(root_);
  EXPECT_EQ(*jobids.Resolve(8, 0, 0, JobidConfig{"JOB"}), "a");
  Process(8, "JOB=b\0"s, "x");
  EXPECT_EQ(*jobids.Resolve(8, 0, 0, JobidConfig{"JOB"}), "a") << "served from the cache";
  jobids.Clear();
  EXPECT_EQ(*jobids.Resolve(8, 0, 0, JobidConfig{"JOB"}), "b");
  // A different jobid_var is not served from an entry derived under another.
  Process(8, "JOB=b\0OTHER=c\0"s, "x");
  EXPECT_EQ(*jobids.Resolve(8, 0, 0, JobidConfig{"OTHER"}), "c");
}

TEST_F(JobIdsTest, JobidNameTemplateIsTheFallbackAndNodelocal) {
  using namespace std::string_literals;
  Process(11, "SLURM_JOB_ID=77\0"s, "ior");
  Process(12, "HOME=/\0"s, "mdtest");
  JobIds jobids(root_);
  JobidConfig config{"SLURM_JOB_ID", "%e-%u-%g-%p%%"};
  EXPECT_EQ(*jobids.Resolve(11, 5, 6, config), "77");
  EXPECT_EQ(*jobids.Resolve(12, 5, 6, config), "mdtest-5-6-12%");
  config.var = "nodelocal";
  config.name = "batch.%j.%e";
  EXPECT_EQ(*jobids.Resolve(11, 5, 6, config), "batch..ior");
  config.var = "procname_uid";
  EXPECT_EQ(*jobids.Resolve(11, 5, 6, config), "ior.5");
}

// Found by fuzz/jobid_fuzzer: a valid template of at most 64 bytes expanded
// past kMaxJobidLength (only a variable's value was cut).
TEST_F(JobIdsTest, TemplateExpansionIsCutToTheLimit) {
  JobIds jobids(root_);
  // The crashing input: jobid_var "_Q" and this template (55 bytes).
  const std::string fuzzed =
      std::string("j~o\xa6") + "b_:%H%e%p-o" + std::string(28, '\xff') + "b-%j_:%H%e%p";
  ASSERT_TRUE(ValidJobidName(fuzzed));
  EXPECT_EQ(jobids.Resolve(1234, 0, 0, JobidConfig{"_Q", fuzzed})->size(), JobIds::kMaxJobidLength);
  ASSERT_TRUE(ValidJobidName("%e%e%e%e%e%e%e%e%e%e"));
  // Process 99 does not exist: %e is "unknown", 70 bytes in all.
  EXPECT_EQ(*jobids.Resolve(99, 0, 0, JobidConfig{"nodelocal", "%e%e%e%e%e%e%e%e%e%e"}),
            "unknownunknownunknownunknownunknownunknownunknownunknownunknownu");
}

TEST(JobidConfigTest, ValidatesVariableNamesAndTemplates) {
  EXPECT_TRUE(ValidJobidVar("SLURM_JOB_ID"));
  EXPECT_TRUE(ValidJobidVar("disable"));
  EXPECT_FALSE(ValidJobidVar(""));
  EXPECT_FALSE(ValidJobidVar("A=B"));
  EXPECT_FALSE(ValidJobidVar("HAS SPACE"));
  EXPECT_FALSE(ValidJobidVar(std::string(65, 'A')));
  EXPECT_TRUE(ValidJobidVar(std::string(64, 'A')));
  EXPECT_TRUE(ValidJobidVar("_X1"));
  EXPECT_TRUE(ValidJobidVar("procname_uid"));
  EXPECT_TRUE(ValidJobidVar("nodelocal"));
  // Not environment variable names: a leading digit, '-', '.', non-ASCII.
  EXPECT_FALSE(ValidJobidVar("1JOB"));
  EXPECT_FALSE(ValidJobidVar("9"));
  EXPECT_FALSE(ValidJobidVar("JOB-ID"));
  EXPECT_FALSE(ValidJobidVar("JOB.ID"));
  EXPECT_FALSE(ValidJobidVar("JOB\xc3\xa9"));
  EXPECT_FALSE(ValidJobidVar(std::string("JOB\0X", 5)));
  EXPECT_TRUE(ValidJobidName("%e.%u"));
  EXPECT_TRUE(ValidJobidName("job-%j_%H%%"));
  EXPECT_FALSE(ValidJobidName(""));
  EXPECT_FALSE(ValidJobidName("%x"));
  EXPECT_FALSE(ValidJobidName("trailing%"));
  EXPECT_FALSE(ValidJobidName("a b"));
}

}  // namespace
}  // namespace sfs::fs
