// Quotas on a real mount (issue 11): user, group and project limits on
// bytes and inodes, through writes, creates, truncate, fallocate, a
// shared mapping, chown and rename; soft limits with grace; usage exact
// after SIGKILL; the setquota and quota commands; bad input refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr off_t kMiB = 1 << 20;

// The fields of a quota.<t>.<id> line ("bsoft=1 ... bused=5 ..."), by
// name; the line must hold every field.
std::map<std::string, std::string> QuotaFields(const std::string& line) {
  std::map<std::string, std::string> fields;
  for (const char* name : {"bsoft", "bhard", "isoft", "ihard", "bused", "iused", "bgrace",
                           "igrace"}) {
    const std::string key = std::string(name) + "=";
    const size_t at = line.find(key);
    if (at == std::string::npos || (at > 0 && line[at - 1] != ' ')) {
      ADD_FAILURE() << "no " << name << " in '" << line << "'";
      continue;
    }
    const size_t begin = at + key.size();
    fields[name] = line.substr(begin, line.find(' ', begin) - begin);
  }
  return fields;
}

class QuotaTest : public ::testing::Test {
 protected:
  QuotaTest() : fs_(Options()) {}
  static MountedFs::Options Options() {
    MountedFs::Options options;
    options.stripe_size = "64K";  // a write of a few hundred KiB spans every OST
    return options;
  }
  void SetUp() override {
    ASSERT_TRUE(fs_.mounted());
    // A directory anyone may write in, and one of project 42.
    ASSERT_EQ(mkdir(P("pub").c_str(), 01777), 0);
    ASSERT_EQ(chmod(P("pub").c_str(), 01777), 0);
    ASSERT_EQ(mkdir(P("proj").c_str(), 0777), 0);
    ASSERT_EQ(chmod(P("proj").c_str(), 0777), 0);
    ASSERT_EQ(ErrnoOf(setxattr(P("proj").c_str(), "user.stripefs.projid", "42", 2, 0)), 0);
  }
  std::string P(const std::string& relative) const { return fs_.Path(relative); }
  std::map<std::string, std::string> Quota(const std::string& who) {
    return QuotaFields(GetSetting(fs_, "quota." + who));
  }
  int64_t Used(const std::string& who, const char* what = "bused") {
    return std::stoll(Quota(who)[what]);
  }
  CommandResult Cli(const std::string& args) {
    return Shell(std::string(StripefsBinary()) + " " + args + " 2>&1");
  }
  // As nobody: writes `length` bytes at `offset` of `path` (created if
  // missing); the errno of the first failure, or 0.
  int NobodyWrites(const std::string& path, off_t offset, size_t length) {
    return RunAs(kNobody, kNogroup, [&] {
      int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
      if (fd < 0) return errno;
      const std::string data(length, 'q');
      const int err = PwriteAll(fd, data, offset) ? 0 : errno;
      close(fd);
      return err;
    });
  }

  MountedFs fs_;
};

// The same limits, set on nobody's user, its group or project 42 in turn
// (nobody writes in the project's directory, so all three count), hold
// for writes, creates, truncate, fallocate and a shared mapping.
class QuotaKindTest : public QuotaTest, public ::testing::WithParamInterface<const char*> {
 protected:
  std::string Who() const { return GetParam(); }
};

TEST_P(QuotaKindTest, HardLimitsHoldForEveryWayOfGrowing) {
  const std::string who = Who();
  const std::string option = who == "u.65534" ? "-u 65534" : who == "g.65534" ? "-g 65534" : "-p 42";
  CommandResult set = Cli("setquota " + option + " -B 1M -I 4 " + P("proj"));
  ASSERT_EQ(set.exit_code, 0) << set.output;
  EXPECT_EQ(Quota(who)["bhard"], std::to_string(kMiB));
  const int64_t inodes_before = Used(who, "iused");  // the project counts its directory
  // Writes up to the limit go through; the one that would pass it is
  // refused whole, and nothing of it lands.
  ASSERT_EQ(NobodyWrites(P("proj/a"), 0, 768 << 10), 0);
  EXPECT_EQ(NobodyWrites(P("proj/a"), 768 << 10, 512 << 10), EDQUOT);
  EXPECT_EQ(Stat(P("proj/a")).st_size, 768 << 10);
  EXPECT_EQ(NobodyWrites(P("proj/a"), 768 << 10, 256 << 10), 0);  // exactly to the limit
  EXPECT_EQ(Used(who), kMiB);
  EXPECT_EQ(NobodyWrites(P("proj/a"), kMiB, 1), EDQUOT);
  EXPECT_EQ(NobodyWrites(P("proj/a"), 0, 4096), 0);  // overwriting needs no quota
  // truncate up and fallocate count like writes; cutting frees.
  EXPECT_EQ(RunAs(kNobody, kNogroup, [&] { return ErrnoOf(truncate(P("proj/a").c_str(), kMiB + 1)); }),
            EDQUOT);
  EXPECT_EQ(RunAs(kNobody, kNogroup, [&] { return ErrnoOf(truncate(P("proj/a").c_str(), kMiB / 2)); }),
            0);
  EXPECT_EQ(Used(who), kMiB / 2);
  auto fallocate = [&](off_t length) {
    return RunAs(kNobody, kNogroup, [&] {
      int fd = open(P("proj/a").c_str(), O_WRONLY);
      const int err = posix_fallocate(fd, 0, length);
      close(fd);
      return err;
    });
  };
  EXPECT_EQ(fallocate(kMiB + 4096), EDQUOT);
  EXPECT_EQ(Stat(P("proj/a")).st_size, kMiB / 2);
  EXPECT_EQ(fallocate(3 * kMiB / 4), 0);
  EXPECT_EQ(Used(who), 3 * kMiB / 4);
  // A shared mapping cannot grow a file: the ftruncate that makes its
  // room is what counts, and its write-back then never fails for quota.
  EXPECT_EQ(RunAs(kNobody, kNogroup,
                  [&] {
                    const std::string path = P("proj/mapped");
                    int fd = open(path.c_str(), O_CREAT | O_RDWR, 0644);
                    if (fd < 0) return errno;
                    if (ftruncate(fd, kMiB) == 0) return 200;  // must be refused
                    if (errno != EDQUOT) return errno;
                    if (ftruncate(fd, kMiB / 4) != 0) return errno;
                    void* map = mmap(nullptr, kMiB / 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                    if (map == MAP_FAILED) return errno;
                    std::memset(map, 'm', kMiB / 4);
                    const int err = msync(map, kMiB / 4, MS_SYNC) == 0 ? 0 : errno;
                    munmap(map, kMiB / 4);
                    close(fd);
                    return err;
                  }),
            0);
  EXPECT_TRUE(SameBytes(ReadFile(P("proj/mapped")), std::string(kMiB / 4, 'm')));
  EXPECT_EQ(Used(who), kMiB);
  // Inodes: up to the limit, then EDQUOT for files and directories alike.
  for (int i = 0; Used(who, "iused") < 4; ++i) {
    ASSERT_EQ(NobodyWrites(P("proj/f" + std::to_string(i)), 0, 0), 0) << i;
  }
  EXPECT_GT(Used(who, "iused"), inodes_before);
  EXPECT_EQ(NobodyWrites(P("proj/one-more"), 0, 0), EDQUOT);
  EXPECT_EQ(RunAs(kNobody, kNogroup, [&] { return ErrnoOf(mkdir(P("proj/dir").c_str(), 0755)); }),
            EDQUOT);
  EXPECT_FALSE(Exists(P("proj/one-more")));
  EXPECT_EQ(Used(who, "iused"), 4);
  EXPECT_TRUE(Contains(fs_.Log(), "is over its inode quota")) << fs_.Log();
  EXPECT_TRUE(Contains(fs_.Log(), "is over its block quota")) << fs_.Log();
  // A removed file counts until its objects are freed (moments later).
  ASSERT_EQ(unlink(P("proj/mapped").c_str()), 0);
  ASSERT_TRUE(WaitFor([&] { return Used(who, "iused") == 3; }));
  EXPECT_EQ(NobodyWrites(P("proj/one-more"), 0, 0), 0);  // a freed inode is free again
}

INSTANTIATE_TEST_SUITE_P(UserGroupProject, QuotaKindTest,
                         ::testing::Values("u.65534", "g.65534", "p.42"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(1, info.param[0]);
                         });

TEST_F(QuotaTest, RootIsExemptFromUserLimitsButItsWritesCount) {
  ASSERT_EQ(SetSetting(fs_, "quota.u.65534", "bhard=1M"), 0);
  ASSERT_EQ(NobodyWrites(P("pub/a"), 0, kMiB), 0);
  int fd = open(P("pub/a").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(PwriteAll(fd, std::string(4096, 'r'), kMiB));  // root: not refused
  close(fd);
  EXPECT_EQ(Used("u.65534"), kMiB + 4096);                  // but nobody's usage
  EXPECT_EQ(NobodyWrites(P("pub/a"), 2 * kMiB, 1), EDQUOT);  // over: nothing more
}

TEST_F(QuotaTest, GroupLimitsAndChgrpMoveUsage) {
  ASSERT_EQ(SetSetting(fs_, "quota.g.65534", "bhard=256K"), 0);
  EXPECT_EQ(NobodyWrites(P("pub/g"), 0, 200 << 10), 0);
  EXPECT_EQ(NobodyWrites(P("pub/g"), 200 << 10, 100 << 10), EDQUOT);
  EXPECT_EQ(Used("g.65534"), 200 << 10);
  // A file of root's given to the group: its bytes count for the group
  // now (root may go over; the group can then grow nothing).
  ASSERT_TRUE(WriteFile(P("pub/r"), std::string(100 << 10, 'r')));
  ASSERT_EQ(chown(P("pub/r").c_str(), 0, kNogroup), 0);
  EXPECT_EQ(Used("g.65534"), 300 << 10);
  EXPECT_EQ(NobodyWrites(P("pub/g"), 0, 4096), 0);  // in place: fine
  EXPECT_EQ(NobodyWrites(P("pub/g2"), 0, 1), EDQUOT);
  ASSERT_EQ(chown(P("pub/r").c_str(), 0, 0), 0);
  EXPECT_EQ(Used("g.65534"), 200 << 10);
  EXPECT_EQ(Used("g.0"), 100 << 10);
  // An open file given to the group while it is written: the bytes before
  // and after the fchown all count for the group, none stay with root's.
  const int fd = open(P("pub/o").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  const std::string block(8 << 10, 'o');
  ASSERT_EQ(pwrite(fd, block.data(), block.size(), 0), static_cast<ssize_t>(block.size()));
  ASSERT_EQ(fchown(fd, 0, kNogroup), 0);
  ASSERT_EQ(pwrite(fd, block.data(), block.size(), block.size()),
            static_cast<ssize_t>(block.size()));
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(Used("g.65534"), (200 << 10) + 2 * static_cast<int64_t>(block.size()));
  EXPECT_EQ(Used("g.0"), 100 << 10);
}

TEST_F(QuotaTest, AProjectLimitCapsItsTreeForEveryoneAndRenameIntoItCopies) {
  ASSERT_EQ(SetSetting(fs_, "quota.p.42", "bhard=1M ihard=100"), 0);
  ASSERT_EQ(mkdir(P("proj/sub").c_str(), 0777), 0);
  ASSERT_EQ(chmod(P("proj/sub").c_str(), 0777), 0);
  EXPECT_EQ(Xattr(P("proj/sub"), "user.stripefs.projid"), "42");  // inherited
  EXPECT_EQ(NobodyWrites(P("proj/sub/n"), 0, 600 << 10), 0);
  EXPECT_EQ(Xattr(P("proj/sub/n"), "user.stripefs.projid"), "42");
  // Root too: a project quota caps the tree.
  EXPECT_FALSE(WriteFile(P("proj/root"), std::string(600 << 10, 'r')));
  EXPECT_EQ(errno, EDQUOT);
  EXPECT_EQ(Used("p.42"), 600 << 10);
  // rename(2) into the project from outside is EXDEV; mv then copies, and
  // the copy counts for the project.
  ASSERT_TRUE(WriteFile(P("pub/outside"), std::string(300 << 10, 'o')));
  EXPECT_EQ(ErrnoOf(rename(P("pub/outside").c_str(), P("proj/moved").c_str())), EXDEV);
  // So is a hard link (ln then rm would be that rename in two steps).
  EXPECT_EQ(ErrnoOf(link(P("pub/outside").c_str(), P("proj/linked").c_str())), EXDEV);
  CommandResult moved = Shell("mv " + P("pub/outside") + " " + P("proj/moved") + " 2>&1");
  ASSERT_EQ(moved.exit_code, 0) << moved.output;
  EXPECT_EQ(Used("p.42"), 900 << 10);
  EXPECT_EQ(Xattr(P("proj/moved"), "user.stripefs.projid"), "42");
  // A move that would not fit fails and loses nothing.
  ASSERT_TRUE(WriteFile(P("pub/big"), std::string(200 << 10, 'b')));
  CommandResult refused = Shell("mv " + P("pub/big") + " " + P("proj/big") + " 2>&1");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_TRUE(Contains(refused.output, "quota")) << refused.output;
  EXPECT_TRUE(SameBytes(ReadFile(P("pub/big")), std::string(200 << 10, 'b')));
  // Only an admin changes a directory's project.
  EXPECT_EQ(RunAs(kNobody, kNogroup, [&] {
              return ErrnoOf(setxattr(P("proj/sub").c_str(), "user.stripefs.projid", "7", 1, 0));
            }),
            EPERM);
  EXPECT_EQ(Xattr(P("proj/sub"), "user.stripefs.projid"), "42");
}

TEST_F(QuotaTest, ASoftLimitHoldsAsHardOnceItsGraceRunsOut) {
  ASSERT_EQ(SetSetting(fs_, "quota_grace", "bgrace=2s igrace=1w"), 0);
  EXPECT_EQ(GetSetting(fs_, "quota_grace"), "bgrace=2 igrace=604800");
  ASSERT_EQ(SetSetting(fs_, "quota.u.65534", "bsoft=100K bhard=1M"), 0);
  EXPECT_EQ(NobodyWrites(P("pub/s"), 0, 200 << 10), 0);  // above soft: grace starts
  const std::string grace = Quota("u.65534")["bgrace"];
  EXPECT_TRUE(grace == "1" || grace == "2") << grace;
  EXPECT_EQ(NobodyWrites(P("pub/s"), 200 << 10, 4096), 0);  // still in grace
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(Quota("u.65534")["bgrace"], "expired");
  EXPECT_EQ(NobodyWrites(P("pub/s"), 300 << 10, 1), EDQUOT);
  // Back below the soft limit, the grace clock is reset.
  EXPECT_EQ(RunAs(kNobody, kNogroup, [&] { return ErrnoOf(truncate(P("pub/s").c_str(), 50 << 10)); }),
            0);
  EXPECT_EQ(Quota("u.65534")["bgrace"], "-");
  EXPECT_EQ(NobodyWrites(P("pub/s"), 50 << 10, 100 << 10), 0);
  // Limits and grace outlive a remount.
  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(Quota("u.65534")["bsoft"], std::to_string(100 << 10));
  EXPECT_EQ(GetSetting(fs_, "quota_grace"), "bgrace=2 igrace=604800");
}

TEST_F(QuotaTest, UsageAfterSigkillIsTheSumOfTheFiles) {
  ASSERT_EQ(SetSetting(fs_, "quota.u.65534", "bhard=1G"), 0);
  // Writes, truncates, creates and removes, some in flight at the kill.
  const int code = RunAs(kNobody, kNogroup, [&] {
    for (int i = 0; i < 40; ++i) {
      const std::string path = P("pub/k" + std::to_string(i));
      int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
      if (fd < 0) return 1;
      if (!PwriteAll(fd, std::string(1000 + i * 7919, 'k'), i * 333)) return 2;
      if (i % 3 == 0 && ftruncate(fd, i * 100) != 0) return 3;
      close(fd);
      if (i % 5 == 0) unlink(path.c_str());
    }
    return 0;
  });
  ASSERT_EQ(code, 0);
  pid_t writer = fork();
  if (writer == 0) {
    if (setgid(kNogroup) != 0 || setuid(kNobody) != 0) _exit(1);
    for (int i = 0;; ++i) {
      int fd = open(P("pub/busy" + std::to_string(i % 8)).c_str(), O_CREAT | O_WRONLY, 0644);
      if (fd < 0) _exit(0);
      (void)!pwrite(fd, "busy", 4, i * 4096);
      close(fd);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  fs_.Kill();
  int status = 0;
  waitpid(writer, &status, 0);
  ASSERT_TRUE(fs_.Mount()) << fs_.Log();
  CommandResult sum = Shell("find " + P("pub") + " -user nobody -type f -printf '%s\\n' | "
                            "awk '{s+=$1; n++} END {print s+0, n+0}'");
  ASSERT_EQ(sum.exit_code, 0);
  const auto q = Quota("u.65534");
  EXPECT_EQ(q.at("bused") + " " + q.at("iused") + "\n", sum.output);
}

TEST_F(QuotaTest, BadInputIsRefusedAndChangesNothing) {
  ASSERT_EQ(SetSetting(fs_, "quota.u.1000", "bsoft=1M bhard=2M"), 0);
  for (const char* bad : {"", "bhard", "bhard=-1", "bhard=1Q", "size=5", "bsoft=3M",
                          "bhard=1M bhard=2M"}) {
    EXPECT_EQ(SetSetting(fs_, "quota.u.1000", bad), EINVAL) << bad;
  }
  EXPECT_EQ(SetSetting(fs_, "quota.x.1", "bhard=1"), EINVAL);
  EXPECT_EQ(SetSetting(fs_, "quota.u.-1", "bhard=1"), EINVAL);
  EXPECT_EQ(SetSetting(fs_, "quota_grace", "1y"), EINVAL);
  EXPECT_EQ(SetSetting(fs_, "quota", "x"), EINVAL);
  // The kernel lets nobody reach the daemon only where it may write.
  ASSERT_EQ(chmod(fs_.mnt().c_str(), 0777), 0);
  EXPECT_EQ(RunAs(kNobody, kNogroup, [&] {
              return ErrnoOf(setxattr(fs_.mnt().c_str(), "user.stripefs.quota.u.65534",
                                      "bhard=1G", 8, 0));
            }),
            EPERM);
  const auto q = Quota("u.1000");
  EXPECT_EQ(q.at("bsoft"), std::to_string(kMiB));
  EXPECT_EQ(q.at("bhard"), std::to_string(2 * kMiB));
  EXPECT_EQ(Quota("u.65534").at("bhard"), "0");
  EXPECT_TRUE(Contains(fs_.Log(), "block soft limit 3145728 is above the hard one")) << fs_.Log();
  CommandResult cli = Cli("setquota -u 1000 -b lots " + P("pub"));
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_TRUE(Contains(cli.output, "Invalid argument")) << cli.output;
  // Removing the setting removes every limit.
  ASSERT_EQ(ErrnoOf(removexattr(fs_.mnt().c_str(), "user.stripefs.quota.u.1000")), 0);
  EXPECT_EQ(Quota("u.1000").at("bhard"), "0");
  EXPECT_EQ(GetSetting(fs_, "quota"), "");
}

TEST_F(QuotaTest, TheQuotaCommandShowsUsageLimitsAndGrace) {
  ASSERT_EQ(Cli("setquota -u 65534 -b 100K -B 1M -i 10 -I 20 " + P("pub")).exit_code, 0);
  ASSERT_EQ(Cli("setquota -t -b 1h -i 2d " + P("pub")).exit_code, 0);
  EXPECT_EQ(GetSetting(fs_, "quota_grace"), "bgrace=3600 igrace=172800");
  ASSERT_EQ(NobodyWrites(P("pub/f"), 0, 200 << 10), 0);
  CommandResult table = Cli("quota -u 65534 " + P("pub/f"));
  ASSERT_EQ(table.exit_code, 0) << table.output;
  EXPECT_TRUE(Contains(table.output, "Disk quotas for user 65534")) << table.output;
  EXPECT_TRUE(Contains(table.output, fs_.mnt())) << table.output;
  EXPECT_TRUE(Contains(table.output, "200*")) << table.output;  // KiB, above soft
  CommandResult json = Cli("quota -u 65534 -p 42 --json " + fs_.mnt());
  ASSERT_EQ(json.exit_code, 0) << json.output;
  EXPECT_TRUE(Contains(json.output, "{\"type\":\"user\",\"id\":65534")) << json.output;
  EXPECT_TRUE(Contains(json.output, "\"bytes\":{\"used\":204800,\"soft\":102400,\"hard\":1048576,"
                                    "\"grace_left\":"))
      << json.output;
  EXPECT_TRUE(Contains(json.output, "\"inodes\":{\"used\":1,\"soft\":10,\"hard\":20,"
                                    "\"grace_left\":null}"))
      << json.output;
  EXPECT_TRUE(Contains(json.output, "{\"type\":\"project\",\"id\":42")) << json.output;
  EXPECT_TRUE(Contains(GetSetting(fs_, "quota"), "u 65534 bsoft=102400")) << GetSetting(fs_, "quota");
}

}  // namespace
}  // namespace sfs::test
