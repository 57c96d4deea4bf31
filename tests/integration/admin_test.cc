// What an admin runs against a mounted stripefs (issue 12): `stripefs df`
// and statfs of the mount, on three OSTs sharing the test's disk and one on
// a tmpfs of its own.
#include <gtest/gtest.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>

#include <cerrno>
#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr int kOwnDisk = 3;  // the OST on its own tmpfs

MountedFs::Options SharedAndOwnDisks() {
  MountedFs::Options options;
  options.before_mkfs = [](MountedFs& fs) { ASSERT_TRUE(fs.MountTmpfs(kOwnDisk, "8m")); };
  return options;
}

uint64_t TotalBytes(const struct statvfs& vfs) {
  return static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
}

class AdminTest : public ::testing::Test {
 protected:
  AdminTest() : fs_(SharedAndOwnDisks()) {}
  void SetUp() override {
    ASSERT_TRUE(fs_.mounted());
    bin_ = StripefsBinary();
  }
  CommandResult Cli(const std::string& args) { return Shell(bin_ + " " + args + " 2>&1"); }

  MountedFs fs_;
  std::string bin_;
};

TEST_F(AdminTest, StatfsCountsADiskSharedByOstsOnce) {
  struct statvfs mount, disk, own;
  ASSERT_EQ(statvfs(fs_.mnt().c_str(), &mount), 0);
  ASSERT_EQ(statvfs(fs_.ost_dir(0).c_str(), &disk), 0);
  ASSERT_EQ(statvfs(fs_.ost_dir(kOwnDisk).c_str(), &own), 0);
  // Sizes and inode counts do not move while the test runs (free space may).
  EXPECT_EQ(TotalBytes(mount), TotalBytes(disk) + TotalBytes(own));
  EXPECT_EQ(mount.f_files, disk.f_files + own.f_files);
  // Counting every OST, as stripefs used to: three times the disk.
  EXPECT_LT(TotalBytes(mount), 2 * TotalBytes(disk));
}

TEST_F(AdminTest, DfShowsEachOstAndTheTotal) {
  ASSERT_EQ(Shell(bin_ + " set_param " + fs_.mnt() + " rtds_weight=1=3").exit_code, 0);
  CommandResult table = Cli("df " + fs_.mnt());
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_NE(table.output.find("1K-blocks"), std::string::npos) << table.output;
  for (int i = 0; i < 4; i++) {
    EXPECT_NE(table.output.find(fs_.ost_dir(i) + "\n"), std::string::npos) << table.output;
  }
  // The tmpfs OST: 8 MiB = 8192 1K-blocks, weight 1; OST 1's weight 3.
  const size_t own = table.output.find("\nost3 ");
  ASSERT_NE(own, std::string::npos) << table.output;
  const std::string own_line = table.output.substr(own + 1, table.output.find('\n', own + 1) - own);
  EXPECT_NE(own_line.find(" 8192 "), std::string::npos) << own_line;
  EXPECT_NE(own_line.find(" ok "), std::string::npos) << own_line;
  const size_t second = table.output.find("\nost1 ");
  ASSERT_NE(second, std::string::npos);
  EXPECT_NE(table.output.substr(second, table.output.find('\n', second + 1) - second)
                .find(" 3 ok "),
            std::string::npos)
      << table.output;
  EXPECT_NE(table.output.find("(2 backing filesystems for 4 OSTs)"), std::string::npos)
      << table.output;

  CommandResult json = Cli("df --json " + fs_.mnt());
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_NE(json.output.find("{\"ost\": 3, \"size\": 8388608, "), std::string::npos)
      << json.output;
  EXPECT_NE(json.output.find("\"filesystems\": 2, \"osts\": 4}"), std::string::npos)
      << json.output;
  CommandResult inodes = Cli("df -i " + fs_.mnt());
  ASSERT_EQ(inodes.exit_code, 0) << inodes.output;
  EXPECT_NE(inodes.output.find("IFree"), std::string::npos) << inodes.output;
  CommandResult human = Cli("df -h " + fs_.mnt());
  ASSERT_EQ(human.exit_code, 0) << human.output;
  EXPECT_NE(human.output.find(" 8.0M "), std::string::npos) << human.output;
}

TEST_F(AdminTest, DfRefusesWhatItCannotShow) {
  // The report is read-only.
  const std::string value = "x";
  EXPECT_EQ(setxattr(fs_.mnt().c_str(), "user.stripefs.ost_df", value.data(), value.size(), 0),
            -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_NE(fs_.Log().find("setting ost_df is read-only"), std::string::npos) << fs_.Log();
  // Not a stripefs mount; no mount point; an unknown option.
  CommandResult elsewhere = Cli("df " + fs_.root());
  EXPECT_EQ(elsewhere.exit_code, 1) << elsewhere.output;
  EXPECT_NE(elsewhere.output.find("stripefs: df " + fs_.root()), std::string::npos)
      << elsewhere.output;
  EXPECT_EQ(Cli("df").exit_code, 1);
  CommandResult unknown = Cli("df --bogus " + fs_.mnt());
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("unknown option --bogus"), std::string::npos) << unknown.output;
}

TEST_F(AdminTest, ADeactivatedOstGetsNoNewObjectsAndKeepsItsFiles) {
  ASSERT_TRUE(WriteFile(fs_.Path("before"), "written with every OST active"));
  CommandResult deactivated = Cli("ost deactivate " + fs_.mnt() + " 1");
  ASSERT_EQ(deactivated.exit_code, 0) << deactivated.output;
  EXPECT_EQ(Xattr(fs_.mnt(), "user.stripefs.ost1.active"), "0");
  EXPECT_NE(fs_.Log().find("ost 1 deactivated: no new objects are placed on it"),
            std::string::npos) << fs_.Log();
  // New files (4 stripes asked) go to the three others; an explicit list
  // naming it skips it.
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(WriteFile(fs_.Path("new" + std::to_string(i)), "x"));
    // The OST column of getstripe's stripe rows, one per line.
    CommandResult osts = Shell(bin_ + " getstripe " + fs_.Path("new" + std::to_string(i)) +
                               " | awk '$1 ~ /^[0-9]+$/ && NF == 3 { print $2 }' | sort | tr '\\n' ' '");
    EXPECT_EQ(osts.output, "0 2 3 ") << osts.output;
  }
  ASSERT_EQ(Cli("setstripe -o 1,2 " + fs_.Path("listed")).exit_code, 0);
  CommandResult listed = Cli("getstripe " + fs_.Path("listed"));
  EXPECT_NE(listed.output.find("stripe_count=1"), std::string::npos) << listed.output;
  // The file that had a stripe there is still read and written.
  EXPECT_EQ(ReadFile(fs_.Path("before")), "written with every OST active");
  ASSERT_EQ(Shell("echo more >> " + fs_.Path("before")).exit_code, 0);
  EXPECT_EQ(ReadFile(fs_.Path("before")), "written with every OST active" "more\n");
  // df says so; a remount keeps it.
  EXPECT_NE(Cli("df " + fs_.mnt()).output.find(" 0 inactive "), std::string::npos);
  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(Xattr(fs_.mnt(), "user.stripefs.ost1.active"), "0");
  ASSERT_EQ(Cli("ost activate " + fs_.mnt() + " 1").exit_code, 0);
  EXPECT_EQ(Xattr(fs_.mnt(), "user.stripefs.ost1.active"), "1");
  ASSERT_TRUE(WriteFile(fs_.Path("after"), "y"));
  EXPECT_NE(Cli("getstripe " + fs_.Path("after")).output.find("stripe_count=4"), std::string::npos);
  // Refused: an OST that does not exist, a value that is not 0 or 1.
  EXPECT_EQ(Cli("ost deactivate " + fs_.mnt() + " 9").exit_code, 1);
  EXPECT_NE(fs_.Log().find("no OST 9: the filesystem has 4"), std::string::npos) << fs_.Log();
  EXPECT_EQ(Cli("set_param " + fs_.mnt() + " ost2.active=yes").exit_code, 1);
  EXPECT_NE(fs_.Log().find("ost2.active is 1 or 0, not 'yes'"), std::string::npos);
  EXPECT_EQ(Cli("ost retire " + fs_.mnt() + " 1").exit_code, 1);
}

// The block of one job on one target in the job_stats YAML ("" if absent).
std::string JobBlock(const std::string& yaml, const std::string& target, const std::string& job) {
  const std::string header = target + ":\n";
  size_t start = yaml.rfind(header, 0) == 0 ? 0 : yaml.find("\n" + header);
  if (start == std::string::npos) return "";
  if (start != 0) start++;
  // A target's block ends where the next line starts without a blank.
  size_t end = start + header.size();
  while (end < yaml.size() && yaml[end] == ' ') {
    end = yaml.find('\n', end);
    end = end == std::string::npos ? yaml.size() : end + 1;
  }
  const std::string block = yaml.substr(start, end - start);
  const size_t job_at = block.find("job_id:          \"" + job + "\"\n");
  if (job_at == std::string::npos) return "";
  const size_t next = block.find("  - job_id:", job_at);
  return block.substr(job_at, next == std::string::npos ? std::string::npos : next - job_at);
}

TEST_F(AdminTest, JobStatsCountWhatEachJobDidPerOstAndForMetadata) {
  // Job ids from SLURM_JOB_ID (the default jobid_var). 4 MiB over 4 stripes
  // of 1 MiB: each OST serves one 1 MiB write of job.a and 1 MiB of reads of
  // job.b.
  const std::string f = fs_.Path("f");
  ASSERT_EQ(Shell("SLURM_JOB_ID=job.a dd if=/dev/zero of=" + f +
                  " bs=1M count=4 oflag=direct status=none").exit_code, 0);
  ASSERT_EQ(Shell("SLURM_JOB_ID=job.b dd if=" + f + " of=/dev/null bs=1M iflag=direct status=none")
                .exit_code, 0);
  ASSERT_EQ(Shell("cd " + fs_.mnt() + " && SLURM_JOB_ID=job.c sh -c "
                  "'touch c1 c2 c3 && mkdir d && rm c1'").exit_code, 0);

  const std::string yaml = Xattr(fs_.mnt(), "user.stripefs.job_stats");
  for (int i = 0; i < 4; i++) {
    const std::string target = "ost" + std::to_string(i);
    const std::string a = JobBlock(yaml, target, "job.a");
    EXPECT_NE(a.find("write_bytes:     { samples: 1, unit: bytes, min: 1048576, max: 1048576, "
                     "sum: 1048576 }"), std::string::npos) << target << "\n" << yaml;
    EXPECT_NE(a.find("    write:           { samples: 1, unit: usecs,"), std::string::npos) << a;
    // Reads go out in pieces of at most max_read (512 KiB): the sum is what counts.
    const std::string b = JobBlock(yaml, target, "job.b");
    const size_t read_line = b.find("read_bytes:");
    ASSERT_NE(read_line, std::string::npos) << target << "\n" << yaml;
    EXPECT_NE(b.substr(read_line, b.find('\n', read_line) - read_line).find(" sum: 1048576 }"),
              std::string::npos) << target << "\n" << yaml;
  }
  const std::string c = JobBlock(yaml, "mdt", "job.c");
  EXPECT_NE(c.find("    create:          { samples: 3,"), std::string::npos) << yaml;
  EXPECT_NE(c.find("    mkdir:           { samples: 1,"), std::string::npos) << yaml;
  EXPECT_NE(c.find("    unlink:          { samples: 1,"), std::string::npos) << yaml;
  // dd of job.a closed what it opened: the close counts for its job.
  EXPECT_NE(JobBlock(yaml, "mdt", "job.a").find("    close:           { samples: 1,"),
            std::string::npos) << yaml;

  CommandResult by_bytes = Cli("jobstats " + fs_.mnt() + " --top 2");
  ASSERT_EQ(by_bytes.exit_code, 0) << by_bytes.output;
  // Equal bytes: by job id. The header, then the two.
  EXPECT_EQ(by_bytes.output.find("\njob.a "), by_bytes.output.find('\n')) << by_bytes.output;
  EXPECT_NE(by_bytes.output.find("\njob.b "), std::string::npos) << by_bytes.output;
  EXPECT_EQ(by_bytes.output.find("job.c"), std::string::npos) << by_bytes.output;
  CommandResult json = Cli("jobstats " + fs_.mnt() + " --json --sort ops");
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_NE(json.output.find("{\"job_id\": \"job.a\", \"read_bytes\": 0, \"write_bytes\": 4194304,"),
            std::string::npos) << json.output;
  EXPECT_NE(json.output.find("\"create\": 3"), std::string::npos) << json.output;
  EXPECT_EQ(Cli("jobstats " + fs_.mnt() + " --sort size").exit_code, 1);
  EXPECT_EQ(Cli("jobstats " + fs_.mnt() + " --top 0").exit_code, 1);

  // Reset.
  ASSERT_EQ(Cli("set_param " + fs_.mnt() + " job_stats=clear").exit_code, 0);
  const std::string cleared = Xattr(fs_.mnt(), "user.stripefs.job_stats");
  EXPECT_EQ(cleared.find("job.a"), std::string::npos) << cleared;
  EXPECT_EQ(cleared.find("job.c"), std::string::npos) << cleared;
  CommandResult refused = Cli("set_param " + fs_.mnt() + " job_stats=reset");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(fs_.Log().find("job_stats can only be written 'clear', not 'reset'"), std::string::npos)
      << fs_.Log();
}

TEST_F(AdminTest, IdleJobsAreDroppedAfterTheCleanupIntervalWhichIsKept) {
  EXPECT_EQ(Xattr(fs_.mnt(), "user.stripefs.job_cleanup_interval"), "600");
  ASSERT_EQ(Shell("SLURM_JOB_ID=job.idle touch " + fs_.Path("x")).exit_code, 0);
  EXPECT_NE(Xattr(fs_.mnt(), "user.stripefs.job_stats").find("job.idle"), std::string::npos);
  ASSERT_EQ(Cli("set_param " + fs_.mnt() + " job_cleanup_interval=1").exit_code, 0);
  EXPECT_TRUE(WaitFor([&] {
    return Xattr(fs_.mnt(), "user.stripefs.job_stats").find("job.idle") == std::string::npos;
  }, 10000));
  for (const char* bad : {"-1", "1s", "", "99999999999"}) {
    EXPECT_EQ(Cli(std::string("set_param ") + fs_.mnt() + " job_cleanup_interval=" + bad).exit_code, 1)
        << bad;
  }
  EXPECT_NE(fs_.Log().find("job_cleanup_interval must be whole seconds"), std::string::npos);
  // Stored: a new mount keeps it.
  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(Xattr(fs_.mnt(), "user.stripefs.job_cleanup_interval"), "1");
}

// A mount serving metrics on a free port of the loopback address.
class MetricsTest : public ::testing::Test {
 protected:
  static MountedFs::Options WithMetrics() {
    MountedFs::Options options;
    options.mount_options = {"metrics=127.0.0.1:0"};
    return options;
  }
  MetricsTest() : fs_(WithMetrics()) {}
  std::string Curl(const std::string& path) {
    return Shell("curl -s -w '\\n%{http_code}' http://" + address_ + path).output;
  }
  MountedFs fs_;
  std::string address_;
};

TEST_F(MetricsTest, ServesOstNrsAndJobCountersInPrometheusText) {
  ASSERT_TRUE(fs_.mounted());
  address_ = Xattr(fs_.mnt(), "user.stripefs.metrics_address");
  ASSERT_EQ(address_.rfind("127.0.0.1:", 0), 0u) << address_;
  ASSERT_EQ(Shell("SLURM_JOB_ID=job.m dd if=/dev/zero of=" + fs_.Path("f") +
                  " bs=1M count=4 oflag=direct status=none").exit_code, 0);
  const std::string text = Curl("/metrics");
  EXPECT_EQ(text.substr(text.size() - 3), "200") << text;
  for (const std::string line : {
           "# TYPE stripefs_ost_bytes_total counter\n",
           "\nstripefs_ost_up{ost=\"3\"} 1\n",
           "\nstripefs_ost_bytes_total{ost=\"0\"} 1048576\n",
           "\nstripefs_ost_weight{ost=\"2\"} 1\n",
           "\nstripefs_ost_queue_depth{ost=\"1\"} 0\n",
           "\nstripefs_ost_io_errors_total{ost=\"1\"} 0\n",
           "\nstripefs_nrs_requests_total{ost=\"0\",head=\"regular_requests\",policy=\"fifo\","
           "class=\"all\"} 1\n",
           "\nstripefs_job_bytes_total{target=\"ost2\",job=\"job.m\",direction=\"write\"} 1048576\n",
           "\nstripefs_job_ops_total{target=\"ost2\",job=\"job.m\",op=\"write\"} 1\n",
           "\nstripefs_job_ops_total{target=\"mdt\",job=\"job.m\",op=\"create\"} 1\n",
           // The metadata service: the create passed its fifo.
           "\nstripefs_mdt_queue_depth 0\n",
           "\nstripefs_nrs_queued{target=\"mdt\",head=\"regular_requests\",policy=\"fifo\"} 0\n",
       }) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
  // At least the create of f and the lookups around it were completed there.
  const size_t at = text.find("\nstripefs_mdt_requests_total ");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_GE(std::stoul(text.substr(at + 29)), 2u) << text.substr(at, 40);
  const std::string missing = Curl("/");
  EXPECT_EQ(missing.substr(missing.size() - 3), "404") << missing;
  // The address is reported, not set.
  const std::string value = "127.0.0.1:1";
  EXPECT_EQ(setxattr(fs_.mnt().c_str(), "user.stripefs.metrics_address", value.data(),
                     value.size(), 0), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(MetricsTest, APortInUseOrABadAddressFailsTheMountWithTheReason) {
  ASSERT_TRUE(fs_.mounted());
  const std::string taken = Xattr(fs_.mnt(), "user.stripefs.metrics_address");
  ASSERT_EQ(taken.rfind("127.0.0.1:", 0), 0u) << taken;
  // A second filesystem asking for the first one's port.
  MountedFs other;
  ASSERT_TRUE(other.Unmount());
  const std::string mount = std::string(StripefsBinary()) + " mount " + other.meta_dir() + " " +
                            other.mnt() + " -o metrics=";
  CommandResult in_use = Shell(mount + taken + " 2>&1");
  EXPECT_EQ(in_use.exit_code, 1) << in_use.output;
  EXPECT_NE(in_use.output.find("cannot listen on " + taken + ": Address already in use"),
            std::string::npos) << in_use.output;
  CommandResult named = Shell(mount + "localhost:9100 2>&1");
  EXPECT_EQ(named.exit_code, 1) << named.output;
  EXPECT_NE(named.output.find("bad mount option metrics=localhost:9100"), std::string::npos)
      << named.output;
  // Without the option there is no server, and the setting says so.
  ASSERT_TRUE(other.Mount());
  EXPECT_EQ(Xattr(other.mnt(), "user.stripefs.metrics_address"), "<No data available>");
}

}  // namespace
}  // namespace sfs::test
