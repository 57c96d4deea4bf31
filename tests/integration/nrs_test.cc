// The request schedulers on a real mount: TBF holding one uid near its rate
// while another uid runs free, policy switches during a running dd, the
// high-priority head, settings across a remount, EPERM/EINVAL, job ids and
// write-back attribution in the per-class statistics.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

class NrsTest : public ::testing::Test {
 protected:
  void Start(MountedFs::Options options = {}) {
    fs_ = std::make_unique<MountedFs>(options);
    ASSERT_TRUE(fs_->mounted());
  }
  // setxattr on the mount root; 0 or the errno.
  int Set(const std::string& name, const std::string& value) {
    const std::string full = "user.stripefs." + name;
    return ErrnoOf(setxattr(fs_->mnt().c_str(), full.c_str(), value.data(), value.size(), 0));
  }
  std::string Get(const std::string& name) { return Xattr(fs_->mnt(), "user.stripefs." + name); }
  std::string P(const std::string& relative) const { return fs_->Path(relative); }

  std::unique_ptr<MountedFs> fs_;
};

// Seconds taken by `command` run as `user` (through sh), or -1 on failure.
double TimedAs(const std::string& user, const std::string& command, std::string* output) {
  CommandResult r = Shell("runuser -u " + user + " -- sh -c 'a=$(date +%s.%N); " + command +
                          " 2>&1 && b=$(date +%s.%N) && echo ELAPSED $a $b'");
  if (output != nullptr) *output = r.output;
  const size_t at = r.output.find("ELAPSED ");
  double a = 0, b = 0;
  if (r.exit_code != 0 || at == std::string::npos ||
      sscanf(r.output.c_str() + at, "ELAPSED %lf %lf", &a, &b) != 2) {
    return -1;
  }
  return b - a;
}

// Seconds taken by nobody (uid 65534) and by daemon (uid 1), each writing
// `writes` O_DIRECT 4 KiB blocks (one OST request apiece) to its own file
// at the same time; -1 and the output in `why` for one that failed.
std::pair<double, double> NobodyAndDaemonWriting(const std::string& nobody_file,
                                                 const std::string& daemon_file, int writes,
                                                 std::string* why) {
  const std::string dd =
      "dd if=/dev/zero bs=4k count=" + std::to_string(writes) + " oflag=direct status=none of=";
  double slow = -1, fast = -1;
  std::string slow_out, fast_out;
  std::thread slow_writer([&] { slow = TimedAs("nobody", dd + nobody_file, &slow_out); });
  std::thread fast_writer([&] { fast = TimedAs("daemon", dd + daemon_file, &fast_out); });
  slow_writer.join();
  fast_writer.join();
  *why = slow_out + fast_out;
  return {slow, fast};
}

TEST_F(NrsTest, TbfHoldsOneUidNearItsRateWhileAnotherRunsFree) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 1;  // one OST per file, so one TBF bucket per writer
  Start(options);
  ASSERT_EQ(chmod(fs_->mnt().c_str(), 0777), 0);
  ASSERT_EQ(Set("nrs_policies", "tbf uid"), 0);
  ASSERT_EQ(Set("nrs_tbf_rule", "start slow uid={65534} rate=20"), 0);

  // 60 O_DIRECT writes of 4 KiB each: one OST request apiece.
  constexpr int kWrites = 60;
  std::string why;
  const auto [slow, fast] = NobodyAndDaemonWriting(P("slow"), P("fast"), kWrites, &why);
  ASSERT_GT(slow, 0) << why;
  ASSERT_GT(fast, 0) << why;
  const double slow_rate = kWrites / slow;
  const double fast_rate = kWrites / fast;
  // The bucket lets 3 (depth) through at once and then one per 50 ms, so
  // nobody cannot finish in under (60 - 3) / 20 = 2.85 s; wide bounds only.
  EXPECT_GT(slow, 2.5) << "nobody was not held to 20 requests/s";
  EXPECT_LT(slow_rate, 25.0);
  EXPECT_GT(slow_rate, 10.0) << "far below the configured rate";
  EXPECT_GT(fast_rate, 3 * slow_rate) << "daemon was held back too (" << fast << " s)";

  const std::string stats = Get("nrs_stats");
  EXPECT_TRUE(Contains(stats, "tbf class=uid=65534 requests=")) << stats;
  EXPECT_TRUE(Contains(stats, "tbf class=uid=1 requests=")) << stats;
  const std::string rules = Get("nrs_tbf_rule");
  EXPECT_TRUE(Contains(rules, "slow uid={65534} rate=20")) << rules;
  EXPECT_TRUE(Contains(rules, "rule slow")) << rules;
}

TEST_F(NrsTest, SwitchingPoliciesDuringDdLosesNothing) {
  Start();
  const std::string source = fs_->root() + "/source";
  ASSERT_TRUE(WriteFile(source, RandomBytes(48 << 20, 7)));
  ASSERT_EQ(Set("nrs_delay_min", "1ms"), 0);
  ASSERT_EQ(Set("nrs_delay_max", "3ms"), 0);
  ASSERT_EQ(Set("nrs_delay_pct", "30"), 0);
  // Every TBF type below classifies by uid, so this rule fits them all.
  ASSERT_EQ(Set("nrs_tbf_rule", "start dd uid={0} rate=5000"), 0);

  std::atomic<bool> done{false};
  CommandResult write, read;
  std::thread writer([&] {
    write = Shell("dd if=" + source + " of=" + P("copy") +
                  " bs=256k oflag=direct status=none && "
                  "dd if=" +
                  source + " of=" + P("copy2") + " bs=64k status=none && sync");
    done = true;
  });
  const char* policies[] = {"crrn", "orr",           "tbf uid",  "delay",  "tbf",
                            "fifo", "tbf uid+jobid", "crrn uid", "orr hp", "tbf hp uid+opcode"};
  int switches = 0;
  // EXPECT, not ASSERT: the writer thread must be joined whatever happens.
  while (!done.load() || switches < 10) {
    EXPECT_EQ(Set("nrs_policies", policies[switches % 10]), 0) << policies[switches % 10];
    if (switches % 3 == 0) {
      EXPECT_EQ(Set("nrs_orr_supported", "reads_and_writes"), 0);
    }
    switches++;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  writer.join();
  ASSERT_EQ(write.exit_code, 0) << write.output;
  EXPECT_EQ(Shell("cmp " + source + " " + P("copy")).exit_code, 0);
  EXPECT_EQ(Shell("cmp " + source + " " + P("copy2")).exit_code, 0);

  // Reads under switching, with the page cache out of the way.
  done = false;
  std::thread reader([&] {
    read = Shell("dd if=" + P("copy") + " iflag=direct bs=128k status=none | cmp - " + source);
    done = true;
  });
  switches = 0;
  while (!done.load() || switches < 10) {
    EXPECT_EQ(Set("nrs_policies", policies[(switches + 3) % 10]), 0);
    switches++;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  reader.join();
  EXPECT_EQ(read.exit_code, 0) << read.output;
  // Nothing is left queued or in service once the writers are done.
  const std::string policies_now = Get("nrs_policies");
  EXPECT_FALSE(Contains(policies_now, "queued: 1")) << policies_now;
  EXPECT_FALSE(Contains(policies_now, "state: stopping")) << policies_now;
}

TEST_F(NrsTest, HighPriorityHeadAndPerOstPolicies) {
  Start();
  ASSERT_EQ(Set("nrs_policies", "tbf hp jobid"), 0);
  ASSERT_EQ(Set("ost2.nrs_policies", "orr"), 0);
  const std::string all = Get("nrs_policies");
  // ost0: regular head FIFO only, high-priority head TBF.
  const std::string ost0 = all.substr(0, all.find("ost1:"));
  const std::string hp0 = ost0.substr(ost0.find("high_priority_requests:"));
  EXPECT_TRUE(Contains(hp0, "- name: tbf\n      state: started")) << all;
  EXPECT_TRUE(Contains(hp0, "spec: tbf jobid")) << all;
  EXPECT_FALSE(
      Contains(ost0.substr(0, ost0.find("high_priority")), "name: tbf\n      state: started"))
      << all;
  const std::string ost2 = Get("ost2.nrs_policies");
  EXPECT_TRUE(Contains(ost2, "- name: orr\n      state: started")) << ost2;
  EXPECT_TRUE(Contains(ost2, "ost2:")) << ost2;
  EXPECT_EQ(Get("ost9.nrs_policies"), "<No data available>");
  EXPECT_EQ(Set("ost9.nrs_policies", "orr"), ENOENT);

  // fsync goes through the high-priority head.
  const std::string path = P("synced");
  int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, RandomBytes(8 << 20, 3), 0));
  ASSERT_EQ(fsync(fd), 0);
  close(fd);
  const std::string stats = Get("nrs_stats");
  EXPECT_TRUE(Contains(stats, " hp tbf class=jobid=")) << stats;
  EXPECT_TRUE(Contains(stats, " reg fifo(fallback) class=all requests=")) << stats;
}

TEST_F(NrsTest, SettingsSurviveRemount) {
  Start();
  ASSERT_EQ(Set("nrs_policies", "tbf uid+opcode reg"), 0);
  ASSERT_EQ(Set("ost1.nrs_policies", "crrn uid"), 0);
  ASSERT_EQ(Set("nrs_tbf_rule", "reg start slow uid={1000 1001} rate=50"), 0);
  ASSERT_EQ(Set("nrs_tbf_rule",
                "reg start io uid={7}&opcode={write} rate=200 bps=100M depth=8 rank=slow"),
            0);
  ASSERT_EQ(Set("nrs_tbf_rule", "reg change slow rate=20"), 0);
  ASSERT_EQ(Set("nrs_orr_quantum", "64"), 0);
  ASSERT_EQ(Set("nrs_orr_supported", "reads_and_writes"), 0);
  ASSERT_EQ(Set("nrs_crrn_quantum", "4"), 0);
  ASSERT_EQ(Set("nrs_hp_ratio", "5"), 0);
  ASSERT_EQ(Set("nrs_delay_max", "0.5"), 0);
  ASSERT_EQ(Set("jobid_var", "MY_JOB"), 0);
  ASSERT_EQ(Set("jobid_name", "%e-%u"), 0);
  const std::string rules_before = Get("nrs_tbf_rule");
  ASSERT_TRUE(fs_->Unmount());
  ASSERT_TRUE(fs_->Mount());

  const std::string rules = Get("nrs_tbf_rule");
  const std::string reg = rules.substr(0, rules.find("high_priority_requests:"));
  // Match order: io (ranked before slow), slow, default.
  const size_t io = reg.find("- io uid={7}&opcode={write} rate=200");
  const size_t slow = reg.find("- slow uid={1000 1001} rate=20 ");
  ASSERT_NE(io, std::string::npos) << rules;
  ASSERT_NE(slow, std::string::npos) << rules;
  EXPECT_LT(io, slow);
  EXPECT_TRUE(Contains(reg, "bps=104857600 depth=8")) << rules;
  EXPECT_FALSE(Contains(rules.substr(rules.find("high_priority_requests:")), "- slow")) << rules;
  EXPECT_EQ(rules.substr(0, rules.find("  ost0")),
            rules_before.substr(0, rules_before.find("  ost0")));

  const std::string ost0 = Get("ost0.nrs_policies");
  EXPECT_TRUE(Contains(ost0, "spec: tbf uid+opcode")) << ost0;
  const std::string ost1 = Get("ost1.nrs_policies");
  EXPECT_TRUE(Contains(ost1, "spec: crrn uid")) << ost1;
  EXPECT_EQ(Get("nrs_orr_quantum"), "64");
  EXPECT_EQ(Get("nrs_orr_supported"), "reads_and_writes");
  EXPECT_EQ(Get("nrs_crrn_quantum"), "4");
  EXPECT_EQ(Get("nrs_hp_ratio"), "5");
  EXPECT_EQ(Get("nrs_delay_max"), "500ms");
  EXPECT_EQ(Get("jobid_var"), "MY_JOB");
  EXPECT_EQ(Get("jobid_name"), "%e-%u");
}

// Weighted CRR-N on a mount: rules set by setfattr and set_param, shown,
// kept across a remount, bad ones refused with EINVAL and a log line; the
// weighted uid and an unweighted one both get served (the share accuracy
// is measured by tools/bench/nrs_mount_bench.sh, not asserted here).
TEST_F(NrsTest, CrrnWeightRules) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 1;
  Start(options);
  ASSERT_EQ(chmod(fs_->mnt().c_str(), 0777), 0);
  ASSERT_EQ(Set("nrs_policies", "crrn uid"), 0);
  ASSERT_EQ(Set("nrs_crrn_weight", "start heavy uid={65534} weight=4"), 0);
  CommandResult cli = Shell(std::string(StripefsBinary()) + " set_param " + fs_->mnt() +
                            " 'nrs_crrn_weight=start mid gid={1 2}&jobid={dd*} weight=2' 2>&1");
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  ASSERT_EQ(Set("nrs_crrn_weight", "change heavy weight=8"), 0);
  const std::string rules = Get("nrs_crrn_weight");
  EXPECT_EQ(rules,
            "start mid gid={1 2}&jobid={dd*} weight=2\nstart heavy uid={65534} weight=8\n");

  for (const char* bad : {"start x uid={1} weight=0", "start x uid={1} weight=65",
                          "start x opcode={read} weight=2", "start x uid={1}",
                          "change nosuch weight=2", "start heavy uid={1} weight=2", "go"}) {
    EXPECT_NE(Set("nrs_crrn_weight", bad), 0) << bad;
  }
  EXPECT_EQ(Set("nrs_crrn_weight", "start x uid={1} weight=65"), EINVAL);
  EXPECT_EQ(Set("nrs_crrn_weight", "change nosuch weight=2"), ENOENT);
  EXPECT_TRUE(Contains(fs_->Log(), "weight=65")) << fs_->Log();
  EXPECT_EQ(Get("nrs_crrn_weight"), rules);
  CommandResult denied = Shell("runuser -u nobody -- setfattr -n user.stripefs.nrs_crrn_weight "
                               "-v 'stop heavy' " + fs_->mnt() + " 2>&1");
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_TRUE(Contains(denied.output, "Operation not permitted")) << denied.output;

  const std::string dd = "dd if=/dev/zero bs=4k count=50 oflag=direct status=none of=";
  std::string heavy_out, light_out;
  std::thread heavy([&] { TimedAs("nobody", dd + P("heavy"), &heavy_out); });
  std::thread light([&] { TimedAs("daemon", dd + P("light"), &light_out); });
  heavy.join();
  light.join();
  EXPECT_EQ(Stat(P("heavy")).st_size, 50 * 4096) << heavy_out;
  EXPECT_EQ(Stat(P("light")).st_size, 50 * 4096) << light_out;
  const std::string stats = Get("nrs_stats");
  EXPECT_TRUE(Contains(stats, "crrn class=uid=65534 requests=")) << stats;
  EXPECT_TRUE(Contains(stats, "crrn class=uid=1 requests=")) << stats;
  EXPECT_TRUE(Contains(Get("ost0.nrs_policies"), "weight_rules=2")) << Get("ost0.nrs_policies");

  ASSERT_TRUE(fs_->Unmount());
  ASSERT_TRUE(fs_->Mount());
  EXPECT_EQ(Get("nrs_crrn_weight"), rules);
  ASSERT_EQ(Set("nrs_crrn_weight", "stop mid"), 0);
  EXPECT_EQ(Get("nrs_crrn_weight"), "start heavy uid={65534} weight=8\n");
}

TEST_F(NrsTest, NonAdminGetsEpermAndBadInputChangesNothing) {
  Start();
  ASSERT_EQ(Set("nrs_policies", "tbf uid"), 0);
  ASSERT_EQ(Set("nrs_tbf_rule", "start slow uid={1000} rate=50"), 0);
  const std::string policies = Get("nrs_policies");
  const std::string rules = Get("nrs_tbf_rule");

  // user.* needs write permission on the directory, so the kernel answers
  // EACCES on a 0755 root; with the kernel's check passed, stripefs refuses.
  ASSERT_EQ(chmod(fs_->mnt().c_str(), 0777), 0);
  for (const char* name : {"nrs_policies", "ost0.nrs_policies", "nrs_tbf_rule", "nrs_orr_quantum",
                           "ost1.hp.nrs_orr_quantum", "jobid_name"}) {
    CommandResult r = Shell(std::string("runuser -u nobody -- setfattr -n user.stripefs.") + name +
                            " -v 1 " + fs_->mnt());
    EXPECT_NE(r.exit_code, 0) << name;
    EXPECT_TRUE(Contains(r.output, "Operation not permitted")) << name << ": " << r.output;
  }
  CommandResult cli = Shell("runuser -u nobody -- " + fs_->PublicBinary() + " set_param " +
                            fs_->mnt() + " nrs_policies=fifo");
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_TRUE(Contains(cli.output, "Operation not permitted")) << cli.output;
  // Anyone may read.
  CommandResult read = Shell("runuser -u nobody -- " + fs_->PublicBinary() + " get_param " +
                             fs_->mnt() + " nrs_tbf_rule nrs_orr_quantum");
  EXPECT_EQ(read.exit_code, 0) << read.output;
  EXPECT_TRUE(Contains(read.output, "nrs_orr_quantum=256")) << read.output;
  EXPECT_TRUE(Contains(read.output, "nrs_tbf_rule=\nregular_requests:")) << read.output;

  struct Bad {
    const char* name;
    const char* value;
    int err;
  };
  const Bad bad[] = {
      {"nrs_policies", "nosuch", EINVAL},
      {"nrs_policies", "tbf nid", EINVAL},
      {"nrs_policies", "fifo reg hp", EINVAL},
      {"nrs_policies", "", EINVAL},
      {"nrs_tbf_rule", "start x uid={1000 rate=5", EINVAL},
      {"nrs_tbf_rule", "start x nid={1@tcp} rate=5", EINVAL},
      {"nrs_tbf_rule", "start x uid={abc} rate=5", EINVAL},
      {"nrs_tbf_rule", "start x uid={5} rate=0", EINVAL},
      {"nrs_tbf_rule", "start x jobid={a} rate=5", EINVAL},  // tbf uid cannot test jobid
      {"nrs_tbf_rule", "start slow uid={5} rate=5", EEXIST},
      {"nrs_tbf_rule", "change nosuch rate=5", ENOENT},
      {"nrs_tbf_rule", "stop default", EPERM},
      {"nrs_tbf_rule", "launch x", EINVAL},
      {"nrs_orr_quantum", "0", EINVAL},
      {"nrs_orr_quantum", "12abc", EINVAL},
      {"nrs_orr_supported", "everything", EINVAL},
      {"nrs_delay_pct", "101", EINVAL},
      {"nrs_delay_min", "1 hour", EINVAL},
      {"nrs_delay_min", "1s", EINVAL},  // above nrs_delay_max (100ms)
      {"nrs_hp_ops", "fsync,flush", EINVAL},
      {"nrs_stats", "clear", EINVAL},
      {"jobid_name", "%q", EINVAL},
  };
  for (const Bad& b : bad) {
    EXPECT_EQ(Set(b.name, b.value), b.err) << b.name << "=" << b.value;
  }
  EXPECT_EQ(Get("nrs_policies"), policies);
  EXPECT_EQ(Get("nrs_tbf_rule"), rules);
  EXPECT_EQ(Get("nrs_orr_quantum"), "256");
  EXPECT_EQ(Get("nrs_delay_min"), "10ms");
  EXPECT_TRUE(Contains(fs_->Log(), "unknown NRS policy 'nosuch'")) << fs_->Log();
  // Still the old configuration after a remount: nothing bad was stored.
  ASSERT_TRUE(fs_->Unmount());
  ASSERT_TRUE(fs_->Mount());
  EXPECT_TRUE(Contains(Get("ost0.nrs_policies"), "spec: tbf uid")) << Get("ost0.nrs_policies");
  EXPECT_EQ(Get("nrs_orr_quantum"), "256");
}

TEST_F(NrsTest, JobIdsFromTheEnvironmentAndWritebackAttributedToTheOpener) {
  Start();
  ASSERT_EQ(chmod(fs_->mnt().c_str(), 0777), 0);
  ASSERT_EQ(Set("jobid_var", "SFS_JOB"), 0);
  ASSERT_EQ(Set("nrs_policies", "tbf jobid"), 0);
  CommandResult env = Shell("SFS_JOB=ior.42 dd if=/dev/zero of=" + P("env") +
                            " bs=64k count=4 oflag=direct status=none");
  ASSERT_EQ(env.exit_code, 0) << env.output;
  CommandResult named =
      Shell("dd if=/dev/zero of=" + P("named") + " bs=64k count=4 oflag=direct status=none");
  ASSERT_EQ(named.exit_code, 0) << named.output;
  std::string stats = Get("nrs_stats");
  EXPECT_TRUE(Contains(stats, "tbf class=jobid=ior.42 ")) << stats;
  EXPECT_TRUE(Contains(stats, "tbf class=jobid=dd.0 ")) << stats;

  // A shared writable mapping written by nobody and written back by the
  // kernel: the write-back carries no caller, so it is charged to the
  // process that opened the file, here uid 65534.
  ASSERT_EQ(Set("nrs_policies", "tbf uid"), 0);
  const std::string path = P("mapped");
  ASSERT_TRUE(WriteFile(path, std::string(1 << 20, '\0'), 0666));
  ASSERT_EQ(chmod(path.c_str(), 0666), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    int fd = open(path.c_str(), O_RDWR);
    if (fd < 0) _exit(3);
    void* map = mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) _exit(4);
    memset(map, 'm', 1 << 20);
    if (msync(map, 1 << 20, MS_SYNC) != 0) _exit(5);
    munmap(map, 1 << 20);
    close(fd);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  stats = Get("nrs_stats");
  EXPECT_TRUE(Contains(stats, "tbf class=uid=65534 ")) << stats;
  // The data arrived.
  ASSERT_EQ(Shell("echo 3 > /proc/sys/vm/drop_caches").exit_code, 0);
  auto data = ReadFile(path);
  ASSERT_TRUE(data.has_value());
  EXPECT_EQ(*data, std::string(1 << 20, 'm'));
}

// ORR's byte quantum (seed 000 "in either I/O size or number of
// requests"): set with a size suffix, shown in the policy's description,
// kept across a remount, bad values refused with EINVAL and a log line;
// reads sorted under it come back whole.
TEST_F(NrsTest, OrrByteQuantumSetShownKeptAndChecked) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  Start(options);
  EXPECT_EQ(Get("nrs_orr_quantum_bytes"), "0");
  ASSERT_EQ(Set("nrs_policies", "orr"), 0);
  ASSERT_EQ(Set("nrs_orr_quantum_bytes", "256K"), 0);
  EXPECT_EQ(Get("nrs_orr_quantum_bytes"), "262144");
  EXPECT_TRUE(Contains(Get("ost1.nrs_policies"), "quantum=256 quantum_bytes=262144"))
      << Get("ost1.nrs_policies");
  for (const char* bad : {"12abc", "-1", "2T", "1M 2", "1M\n2", ""}) {
    EXPECT_EQ(Set("nrs_orr_quantum_bytes", bad), EINVAL) << bad;
  }
  EXPECT_EQ(Get("nrs_orr_quantum_bytes"), "262144");
  EXPECT_TRUE(Contains(fs_->Log(), "nrs_orr_quantum_bytes must be 0 or a size")) << fs_->Log();

  const std::string path = P("sorted");
  const std::string data = RandomBytes(8 << 20, 31);
  int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, data, 0));
  close(fd);
  ASSERT_EQ(Shell("echo 3 > /proc/sys/vm/drop_caches").exit_code, 0);
  // Four direct readers at once, so requests queue and ORR sorts them.
  CommandResult read = Shell("for i in 0 1 2 3; do dd if=" + path +
                             " of=/dev/null bs=64k iflag=direct status=none skip=$i & done; wait");
  EXPECT_EQ(read.exit_code, 0) << read.output;
  auto back = ReadFile(path);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(*back == data);
  EXPECT_TRUE(Contains(Get("nrs_stats"), " reg orr class=object=")) << Get("nrs_stats");

  ASSERT_TRUE(fs_->Unmount());
  ASSERT_TRUE(fs_->Mount());
  EXPECT_EQ(Get("nrs_orr_quantum_bytes"), "262144");
  ASSERT_EQ(Set("nrs_orr_quantum_bytes", "0"), 0);
  EXPECT_TRUE(Contains(Get("ost0.nrs_policies"), "quantum=256 supported="))
      << Get("ost0.nrs_policies");
}

}  // namespace
}  // namespace sfs::test

namespace sfs::test {
namespace {

// Per-OST and per-head tunables (issue 31 item 3) through setfattr and
// getfattr: each reaches the running policy of the OST and head it names,
// an unprefixed set overrides them, they survive a remount, an added OST
// takes what most OSTs have, and nrs_eh_timeout must exceed the epochs.
TEST_F(NrsTest, PerOstAndPerHeadTunables) {
  Start();  // 4 OSTs
  auto setfattr = [&](const std::string& name, const std::string& value) {
    return Shell("setfattr -n user.stripefs." + name + " -v '" + value + "' " + fs_->mnt() +
                 " 2>&1");
  };
  auto getfattr = [&](const std::string& name) {
    return Shell("getfattr --absolute-names --only-values -n user.stripefs." + name + " " +
                 fs_->mnt() + " 2>&1")
        .output;
  };
  ASSERT_EQ(Set("nrs_policies", "orr"), 0);
  ASSERT_EQ(setfattr("nrs_orr_quantum", "64").exit_code, 0);
  ASSERT_EQ(setfattr("ost1.nrs_orr_quantum", "32").exit_code, 0);
  ASSERT_EQ(setfattr("hp.nrs_orr_quantum", "16").exit_code, 0);
  ASSERT_EQ(setfattr("ost2.hp.nrs_orr_quantum", "8").exit_code, 0);
  EXPECT_EQ(getfattr("ost1.reg.nrs_orr_quantum"), "32");
  EXPECT_EQ(getfattr("hp.nrs_orr_quantum"), "ost0: 16\nost1: 16\nost2: 8\nost3: 16\n");
  const std::string effective =
      "ost0.reg: 64\nost0.hp: 16\nost1.reg: 32\nost1.hp: 16\nost2.reg: 64\nost2.hp: 8\n"
      "ost3.reg: 64\nost3.hp: 16\n";
  EXPECT_EQ(getfattr("nrs_orr_quantum"), effective);
  // The running ORR policies have them (their description in the report).
  const std::string ost1 = Get("ost1.nrs_policies");
  const std::string ost1_reg = ost1.substr(0, ost1.find("high_priority_requests:"));
  EXPECT_TRUE(Contains(ost1_reg, "quantum=32 ")) << ost1;
  EXPECT_TRUE(Contains(ost1.substr(ost1_reg.size()), "quantum=16 ")) << ost1;
  EXPECT_TRUE(Contains(Get("ost2.nrs_policies"), "quantum=8 ")) << Get("ost2.nrs_policies");

  // The same through the CLI.
  CommandResult cli = Shell(std::string(StripefsBinary()) + " set_param " + fs_->mnt() +
                            " ost3.hp.nrs_crrn_quantum=2 2>&1");
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  cli = Shell(std::string(StripefsBinary()) + " get_param " + fs_->mnt() +
              " ost1.nrs_orr_quantum ost3.hp.nrs_crrn_quantum 2>&1");
  EXPECT_EQ(cli.exit_code, 0) << cli.output;
  EXPECT_TRUE(Contains(cli.output, "ost1.reg: 32\nost1.hp: 16\n")) << cli.output;
  EXPECT_TRUE(Contains(cli.output, "ost3.hp.nrs_crrn_quantum=2\n")) << cli.output;
  EXPECT_EQ(Get("nrs_crrn_quantum"), "ost0: 8\nost1: 8\nost2: 8\nost3.reg: 8\nost3.hp: 2\n");

  // Per-service values take ost<N>. only; filesystem-wide ones no prefix.
  ASSERT_EQ(Set("ost3.nrs_hp_ratio", "2"), 0);
  EXPECT_EQ(Get("nrs_hp_ratio"), "ost0: 10\nost1: 10\nost2: 10\nost3: 2\n");
  CommandResult per_head = setfattr("hp.nrs_hp_ratio", "2");
  EXPECT_NE(per_head.exit_code, 0);
  EXPECT_TRUE(Contains(per_head.output, "Invalid argument")) << per_head.output;
  EXPECT_TRUE(Contains(fs_->Log(), "nrs_hp_ratio is one value per service")) << fs_->Log();
  EXPECT_EQ(Set("ost1.nrs_tbf_scope", "ost"), EINVAL);
  EXPECT_EQ(Set("ost7.nrs_orr_quantum", "4"), ENOENT);

  // The epoch handler's timeout must exceed every epoch (1 s by default).
  EXPECT_EQ(Set("ost2.nrs_epoch_ms", "1000"), EINVAL);
  EXPECT_EQ(Set("nrs_eh_timeout", "100ms"), EINVAL);  // nrs_epoch_max_ms is 100
  ASSERT_EQ(Set("nrs_eh_timeout", "2"), 0);
  ASSERT_EQ(Set("ost2.nrs_epoch_ms", "1000"), 0);
  EXPECT_EQ(Set("nrs_eh_timeout", "1"), EINVAL);
  EXPECT_TRUE(Contains(fs_->Log(),
                       "nrs_eh_timeout (1) must be longer than nrs_epoch_ms "
                       "(1000ms on ost2"))
      << fs_->Log();

  ASSERT_TRUE(fs_->Unmount());
  ASSERT_TRUE(fs_->Mount());
  EXPECT_EQ(getfattr("nrs_orr_quantum"), effective);
  EXPECT_EQ(Get("ost2.nrs_epoch_ms"), "1000");
  EXPECT_EQ(Get("nrs_eh_timeout"), "2");
  EXPECT_TRUE(Contains(Get("ost2.nrs_policies"), "quantum=8 ")) << Get("ost2.nrs_policies");

  // An added OST takes what most have: 64 on the regular head, 16 on hp.
  const std::string dir = fs_->ost_dir(4);
  CommandResult added =
      Shell(std::string(StripefsBinary()) + " ost add " + fs_->mnt() + " " + dir + " 2>&1");
  ASSERT_EQ(added.exit_code, 0) << added.output;
  EXPECT_EQ(getfattr("ost4.nrs_orr_quantum"), "ost4.reg: 64\nost4.hp: 16\n");
  EXPECT_EQ(Get("ost4.nrs_hp_ratio"), "10");
  EXPECT_TRUE(Contains(Get("ost4.nrs_policies"), "quantum=64 ")) << Get("ost4.nrs_policies");

  // Without a prefix, a set overrides every per-OST and per-head value.
  ASSERT_EQ(setfattr("nrs_orr_quantum", "100").exit_code, 0);
  EXPECT_EQ(getfattr("nrs_orr_quantum"), "100");
  EXPECT_EQ(getfattr("ost2.hp.nrs_orr_quantum"), "100");
}

// uid ranges in a TBF rule (Lustre's uid={500 1000-1999}), a CRR-N weight
// rule and a pool rule on a real mount.
TEST_F(NrsTest, UidRangesInTbfWeightAndPoolRules) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 1;
  Start(options);
  ASSERT_EQ(chmod(fs_->mnt().c_str(), 0777), 0);
  ASSERT_EQ(Set("nrs_policies", "tbf uid"), 0);
  ASSERT_EQ(Set("nrs_tbf_rule", "start slow uid={3 65000-65535} rate=20"), 0);
  EXPECT_TRUE(Contains(Get("nrs_tbf_rule"), "slow uid={3 65000-65535} rate=20"))
      << Get("nrs_tbf_rule");
  EXPECT_EQ(Set("nrs_tbf_rule", "start bad uid={2000-1000} rate=20"), EINVAL);
  EXPECT_TRUE(Contains(fs_->Log(), "range '2000-1000' ends before it starts")) << fs_->Log();

  // nobody (65534) lies in the range: held to 20 requests/s; daemon (1)
  // does not.
  std::string why;
  const auto [slow, fast] = NobodyAndDaemonWriting(P("slow"), P("fast"), 60, &why);
  ASSERT_GT(slow, 0) << why;
  ASSERT_GT(fast, 0) << why;
  EXPECT_GT(slow, 2.5) << "nobody was not held to 20 requests/s";
  EXPECT_LT(fast, slow / 3) << "daemon was held back too";

  ASSERT_EQ(Set("nrs_crrn_weight", "start team uid={1-999 65534} weight=4"), 0);
  EXPECT_EQ(Get("nrs_crrn_weight"), "start team uid={1-999 65534} weight=4\n");

  ASSERT_EQ(Set("pool.one", "osts=1"), 0);
  ASSERT_EQ(Set("pool_rule.r", "uid={65000-65535} pool=one"), 0);
  EXPECT_EQ(Get("pool_rule.r"), "rank=0 uid={65000-65535} pool=one");
  for (int i = 0; i < 4; i++) {
    const std::string path = P("pooled" + std::to_string(i));
    ASSERT_EQ(Shell("runuser -u nobody -- touch " + path).exit_code, 0);
    EXPECT_TRUE(Contains(Xattr(path, "user.stripefs.layout"), "pool=one"))
        << Xattr(path, "user.stripefs.layout");
  }
  ASSERT_TRUE(WriteFile(P("rootfile"), "x"));
  EXPECT_FALSE(Contains(Xattr(P("rootfile"), "user.stripefs.layout"), "pool=one"));
}

}  // namespace
}  // namespace sfs::test
