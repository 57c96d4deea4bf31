// The metadata service's request scheduler on a real mount (issue 12, item
// 2): mdt.* settings with the OSTs' policies and syntax, a TBF rule on a
// job's creates that holds it while another job's creates run free, policy
// switches during a create/rename/unlink storm that lose nothing, a stop
// that does not wait on a rate, and mdt_nrs=off.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

namespace stdfs = std::filesystem;

int Set(const MountedFs& fs, const std::string& name, const std::string& value) {
  return SetSetting(fs, name, value);
}
std::string Get(const MountedFs& fs, const std::string& name) { return GetSetting(fs, name); }
int GetErrno(const MountedFs& fs, const std::string& name) {
  char buf[256];
  const std::string full = "user.stripefs." + name;
  return ErrnoOf(getxattr(fs.mnt().c_str(), full.c_str(), buf, sizeof(buf)) < 0 ? -1 : 0);
}

size_t FilesIn(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator();
       it.increment(ec)) {
    n++;
  }
  return n;
}

// A shell command creating `count` empty files in `dir` as job `job`:
// each is a lookup and a create (then a release) on the metadata service.
std::string CreateLoop(const std::string& job, const std::string& dir, int count) {
  return "SLURM_JOB_ID=" + job + " sh -c 'i=0; while [ $i -lt " + std::to_string(count) +
         " ]; do : > " + dir + "/f$i || exit 1; i=$((i+1)); done'";
}

double SecondsOf(const std::function<void()>& run) {
  const auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(MdtTest, ACreateRuleHoldsOneJobWhileAnotherJobCreatesFreely) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  const std::string policies = Get(fs, "mdt.nrs_policies");
  EXPECT_TRUE(Contains(policies, "mdt:")) << policies;
  EXPECT_TRUE(Contains(policies, "name: fifo")) << policies;
  // A rule may only test the fields of its policy's type.
  EXPECT_EQ(Set(fs, "mdt.nrs_policies", "tbf jobid"), 0);
  EXPECT_EQ(Set(fs, "mdt.nrs_tbf_rule", "start slow jobid={slow}&opcode={create} rate=40"),
            EINVAL);
  ASSERT_EQ(Set(fs, "mdt.nrs_policies", "tbf jobid+opcode"), 0);
  // The default rule would hold every other class to 10,000 requests/s.
  ASSERT_EQ(Set(fs, "mdt.nrs_tbf_default_rate", "1000000"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_tbf_rule", "start slow jobid={slow}&opcode={create} rate=40"), 0);
  EXPECT_TRUE(Contains(Get(fs, "mdt.nrs_tbf_rule"), "slow jobid={slow}&opcode={create} rate=40"))
      << Get(fs, "mdt.nrs_tbf_rule");
  // The OSTs' schedulers are not touched by mdt.* settings.
  EXPECT_FALSE(Contains(Get(fs, "nrs_policies"), "spec: tbf")) << Get(fs, "nrs_policies");
  ASSERT_EQ(mkdir(fs.Path("slow").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(fs.Path("free").c_str(), 0755), 0);

  constexpr int kSlow = 100, kFree = 400;
  double slow_seconds = 0, free_seconds = 0;
  int slow_rc = -1, free_rc = -1;
  std::thread slow([&] {
    slow_seconds = SecondsOf([&] { slow_rc = Shell(CreateLoop("slow", fs.Path("slow"), kSlow)).exit_code; });
  });
  free_seconds = SecondsOf([&] { free_rc = Shell(CreateLoop("free", fs.Path("free"), kFree)).exit_code; });
  slow.join();
  ASSERT_EQ(slow_rc, 0);
  ASSERT_EQ(free_rc, 0);
  EXPECT_EQ(FilesIn(fs.Path("slow")), static_cast<size_t>(kSlow));
  EXPECT_EQ(FilesIn(fs.Path("free")), static_cast<size_t>(kFree));
  // 100 creates at 40/s with a bucket of 3: at least 97 / 40 = 2.4 s
  // (a bound the token bucket guarantees, not a measured speed).
  EXPECT_GE(slow_seconds, 2.3);
  // The free job's creates did not wait behind the held ones.
  EXPECT_LT(free_seconds, slow_seconds) << "free " << free_seconds << " s, slow " << slow_seconds;

  // The class shows in the metadata service's statistics.
  const std::string stats = Get(fs, "mdt.nrs_stats");
  EXPECT_TRUE(Contains(stats, "mdt reg tbf class=jobid=slow+opcode=create")) << stats;
  EXPECT_TRUE(Contains(stats, "mdt reg dequeued=")) << stats;
  // And in job_stats of the metadata target, counted from arrival.
  const std::string jobs = Get(fs, "job_stats");
  EXPECT_TRUE(Contains(jobs, "slow")) << jobs;
}

TEST(MdtTest, SettingsAreCheckedPersistedAndApartFromTheOsts) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  EXPECT_EQ(Set(fs, "mdt.nrs_policies", "orr"), EINVAL);
  EXPECT_TRUE(Contains(fs.Log(), "the metadata service has none")) << fs.Log();
  EXPECT_EQ(Set(fs, "mdt.nrs_policies", "nosuch"), EINVAL);
  EXPECT_EQ(Set(fs, "mdt.nrs_tbf_rule", "start x opcode={opendir} rate=1"), EINVAL);
  EXPECT_TRUE(Contains(fs.Log(), "unknown opcode 'opendir'")) << fs.Log();
  // Settings that only mean something across OSTs are not the MDT's.
  EXPECT_EQ(Set(fs, "mdt.nrs_tbf_scope", "ost"), EINVAL);
  EXPECT_EQ(Set(fs, "mdt.nrs_eh_timeout", "2"), EINVAL);
  EXPECT_EQ(Set(fs, "mdt.ost0.nrs_policies", "crrn"), EINVAL);
  EXPECT_EQ(GetErrno(fs, "mdt.nrs_tbf_scope"), ENODATA);

  ASSERT_EQ(Set(fs, "mdt.nrs_policies", "crrn uid reg"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_policies", "tbf opcode hp"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_hp_ops", "unlink,rename"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_tbf_rule", "hp start rm opcode={unlink} rate=500"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_crrn_weight", "start w uid={0} weight=2"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_epoch_ms", "20"), 0);
  // Unlinks go to the high-priority head.
  ASSERT_EQ(Shell("touch " + fs.Path("a") + " && rm " + fs.Path("a")).exit_code, 0);
  EXPECT_TRUE(Contains(Get(fs, "mdt.nrs_stats"), "mdt hp tbf class=opcode=unlink"))
      << Get(fs, "mdt.nrs_stats");

  ASSERT_TRUE(fs.Unmount());
  ASSERT_TRUE(fs.Mount());
  const std::string policies = Get(fs, "mdt.nrs_policies");
  EXPECT_TRUE(Contains(policies, "spec: crrn uid")) << policies;
  EXPECT_TRUE(Contains(policies, "spec: tbf opcode")) << policies;
  EXPECT_EQ(Get(fs, "mdt.nrs_hp_ops"), "unlink,rename");
  EXPECT_EQ(Get(fs, "mdt.nrs_epoch_ms"), "20");
  EXPECT_TRUE(Contains(Get(fs, "mdt.nrs_crrn_weight"), "w uid={0} weight=2"))
      << Get(fs, "mdt.nrs_crrn_weight");
  EXPECT_TRUE(Contains(Get(fs, "mdt.nrs_tbf_rule"), "rm opcode={unlink} rate=500"));
  // The OSTs kept their own defaults.
  EXPECT_EQ(Get(fs, "nrs_hp_ops"), "truncate,punch,fsync");
  EXPECT_EQ(Get(fs, "nrs_epoch_ms"), "50");
  EXPECT_FALSE(Contains(Get(fs, "nrs_policies"), "spec: crrn")) << Get(fs, "nrs_policies");
}

TEST(MdtTest, SwitchingPoliciesDuringANamespaceStormLosesNothing) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(Set(fs, "mdt.nrs_tbf_default_rate", "1000000"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_tbf_rule", "start s jobid={storm} rate=3000"), 0);
  EXPECT_EQ(Set(fs, "mdt.nrs_delay_max", "2ms"), EINVAL);  // below the minimum, 10ms
  EXPECT_TRUE(Contains(fs.Log(), "mdt.nrs_delay_min (10ms) is above mdt.nrs_delay_max (2ms)"))
      << fs.Log();
  ASSERT_EQ(Set(fs, "mdt.nrs_delay_min", "1ms"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_delay_max", "2ms"), 0);
  ASSERT_EQ(mkdir(fs.Path("d").c_str(), 0777), 0);
  // Each round: create, rename, mkdir, link, unlink the link, list; every
  // one of 300 rounds must leave exactly its renamed file and directory.
  const std::string storm =
      "cd " + fs.Path("d") + " && SLURM_JOB_ID=storm sh -c 'i=0; while [ $i -lt 300 ]; do "
      ": > a$i && mv a$i b$i && mkdir m$i && ln b$i l$i && rm l$i && ls > /dev/null || exit 1; "
      "i=$((i+1)); done'";
  std::atomic<bool> done{false};
  int rc = -1;
  std::thread runner([&] {
    rc = Shell(storm).exit_code;
    done = true;
  });
  const char* specs[] = {"tbf jobid", "crrn jobid", "epoch jobid", "delay", "tbf", "fifo"};
  int switches = 0;
  while (!done.load() || switches < 6) {
    EXPECT_EQ(Set(fs, "mdt.nrs_policies", specs[switches % 6]), 0);
    switches++;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  runner.join();
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(FilesIn(fs.Path("d")), 600u);
  for (int i = 0; i < 300; i += 37) {
    struct stat st;
    EXPECT_EQ(stat(fs.Path("d/b" + std::to_string(i)).c_str(), &st), 0) << i;
    EXPECT_EQ(st.st_nlink, 1u) << i;
    EXPECT_EQ(stat(fs.Path("d/m" + std::to_string(i)).c_str(), &st), 0) << i;
  }
  EXPECT_GE(switches, 6);
}

TEST(MdtTest, AStopServesWhatARateStillHolds) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(Set(fs, "mdt.nrs_policies", "tbf jobid"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_tbf_rule", "start slow jobid={slow} rate=1 depth=1"), 0);
  ASSERT_EQ(mkdir(fs.Path("s").c_str(), 0777), 0);
  // Twelve creators, each with one request held at one per second for the
  // class: without the drain a stop would wait about 12 s for them.
  constexpr int kCreators = 12;
  std::string jobs;
  for (int j = 0; j < kCreators; j++) {
    const std::string sub = fs.Path("s/" + std::to_string(j));
    ASSERT_EQ(mkdir(sub.c_str(), 0777), 0);
    jobs += CreateLoop("slow", sub, 100) + " >/dev/null 2>&1 & ";
  }
  Shell(jobs + "true");
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const auto start = std::chrono::steady_clock::now();
  const int status = fs.Terminate();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_LT(seconds, 8.0);
  // The creators stop at their first failure on the unmounted directory.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // The store opens again and what was created is there, whole: held
  // requests were answered (lookups, mostly: the rule counts every op of
  // the job), not dropped half-done.
  ASSERT_TRUE(fs.Mount());
  for (int j = 0; j < kCreators; j++) {
    const std::string sub = fs.Path("s/" + std::to_string(j));
    std::error_code ec;
    for (const auto& entry : stdfs::directory_iterator(sub, ec)) {
      EXPECT_TRUE(entry.is_regular_file()) << entry.path();
      EXPECT_EQ(entry.file_size(), 0u) << entry.path();
    }
    EXPECT_FALSE(ec) << sub;
  }
  ASSERT_EQ(Shell("touch " + fs.Path("s/0/after")).exit_code, 0);
}

TEST(MdtTest, SettingsAndDfAnswerWhileEveryGetattrIsHeld) {
  MountedFs::Options options;
  options.mount_options = {"attr_timeout=0"};  // every stat reaches the daemon
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(Shell("touch " + fs.Path("f")).exit_code, 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_policies", "tbf opcode"), 0);
  ASSERT_EQ(Set(fs, "mdt.nrs_tbf_rule", "start g opcode={getattr} rate=1 depth=1"), 0);
  // Eight readers each stat the file in a loop: getattrs queue at 1/s.
  std::string readers;
  for (int i = 0; i < 8; i++) {
    readers += "sh -c 'for i in 1 2 3 4 5; do stat " + fs.Path("f") +
               " || exit 1; done' >/dev/null 2>&1 & ";
  }
  Shell(readers + "true");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // The root's getattr (the kernel's permission check before setxattr on
  // it, df's stat of the mount point) is never scheduled: these answer
  // while about 8 s of getattrs wait.
  const double seconds = SecondsOf([&] {
    EXPECT_EQ(Set(fs, "mdt.nrs_tbf_rule", "change g rate=2"), 0);
    EXPECT_EQ(Shell("df " + fs.mnt()).exit_code, 0);
    EXPECT_EQ(Set(fs, "mdt.nrs_tbf_rule", "stop g"), 0);
  });
  EXPECT_LT(seconds, 3.0);
  EXPECT_TRUE(Contains(Get(fs, "mdt.nrs_stats"), "class=opcode=getattr"))
      << Get(fs, "mdt.nrs_stats");
}

TEST(MdtTest, MdtNrsOffRunsMetadataUnscheduled) {
  MountedFs::Options options;
  options.mount_options = {"mdt_nrs=off"};
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  EXPECT_EQ(GetErrno(fs, "mdt.nrs_policies"), ENODATA);
  EXPECT_EQ(Set(fs, "mdt.nrs_policies", "tbf jobid"), EINVAL);
  EXPECT_TRUE(Contains(fs.Log(), "mdt_nrs=off")) << fs.Log();
  ASSERT_EQ(Shell(CreateLoop("x", fs.mnt(), 50)).exit_code, 0);
  EXPECT_EQ(FilesIn(fs.mnt()), 50u);
  // Job stats still count metadata operations.
  EXPECT_TRUE(Contains(Get(fs, "job_stats"), "create")) << Get(fs, "job_stats");
}

}  // namespace
}  // namespace sfs::test
