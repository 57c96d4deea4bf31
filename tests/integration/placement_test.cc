// Stripe placement on a real mount (issue 4): RTDS weights, pools chosen by
// uid and job id rules, directory layouts and their inheritance, setstripe
// on empty files, automatic weights, persistence, permissions, bad input.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

// The OSTs of a file's stripes, in stripe order, from its layout.
std::vector<int> OstsOf(const std::string& path) {
  const std::string layout = Xattr(path, "user.stripefs.layout");
  std::vector<int> osts;
  for (size_t at = layout.find("=ost"); at != std::string::npos; at = layout.find("=ost", at + 1)) {
    osts.push_back(std::atoi(layout.c_str() + at + 4));
  }
  return osts;
}

class PlacementTest : public ::testing::Test {
 protected:
  void Start(int osts = 4, int stripe_count = 1) {
    MountedFs::Options options;
    options.osts = osts;
    options.stripe_count = stripe_count;
    fs_ = std::make_unique<MountedFs>(options);
    ASSERT_TRUE(fs_->mounted());
  }
  int Set(const std::string& name, const std::string& value, const std::string& path = "") {
    const std::string where = path.empty() ? fs_->mnt() : path;
    const std::string full = "user.stripefs." + name;
    return ErrnoOf(setxattr(where.c_str(), full.c_str(), value.data(), value.size(), 0));
  }
  std::string Get(const std::string& name) { return Xattr(fs_->mnt(), "user.stripefs." + name); }
  std::string P(const std::string& relative) const { return fs_->Path(relative); }
  // Creates `n` files dir/f0.. with one byte each (objects exist once written).
  void CreateFiles(const std::string& dir, int n) {
    for (int i = 0; i < n; i++) {
      ASSERT_TRUE(WriteFile(P(dir + "/f" + std::to_string(i)), "x")) << i;
    }
  }
  std::map<int, int> StripesPerOst(const std::string& dir, int n) {
    std::map<int, int> count;
    for (int i = 0; i < n; i++) {
      for (int ost : OstsOf(P(dir + "/f" + std::to_string(i)))) count[ost]++;
    }
    return count;
  }

  std::unique_ptr<MountedFs> fs_;
};

TEST_F(PlacementTest, WeightZeroMeansNoNewObjectThereAcross200Creates) {
  Start(4, 2);
  ASSERT_EQ(Set("rtds_weight", "0=1,1=2,2=0,3=1"), 0);
  EXPECT_EQ(Get("rtds_weight"), "0=1,1=2,2=0,3=1");
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  CreateFiles("d", 200);
  EXPECT_TRUE(fs_->Objects(2).empty()) << fs_->Objects(2).size() << " objects on OST 2";
  std::map<int, int> count = StripesPerOst("d", 200);
  EXPECT_EQ(count[2], 0);
  EXPECT_EQ(count[0] + count[1] + count[3], 400);
  // Two stripes of one file never share an OST (RW(i,i) = 0).
  for (int i = 0; i < 200; i++) {
    std::vector<int> osts = OstsOf(P("d/f" + std::to_string(i)));
    ASSERT_EQ(osts.size(), 2u);
    EXPECT_NE(osts[0], osts[1]);
  }
}

TEST_F(PlacementTest, WeightsOneToThreeGiveAboutOneToThreeObjects) {
  Start(2, 1);
  ASSERT_EQ(Set("rtds_weight", "0=1,1=3"), 0);
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  CreateFiles("d", 400);
  std::map<int, int> count = StripesPerOst("d", 400);
  ASSERT_EQ(count[0] + count[1], 400);
  // Expected 100 : 300; binomial sd ~8.7, so these bounds are > 5 sd wide.
  EXPECT_GT(count[0], 55);
  EXPECT_LT(count[0], 145);
  EXPECT_EQ(fs_->Objects(0).size(), static_cast<size_t>(count[0]));
}

TEST_F(PlacementTest, UidRuleSendsAUsersFilesToItsPool) {
  Start(4, 4);
  ASSERT_EQ(Set("pool.fast", "osts=0,1"), 0);
  ASSERT_EQ(Set("pool.slow", "osts=2-3"), 0);
  ASSERT_EQ(Set("pool_rule.r1", "rank=10 uid={1000,65534} pool=fast"), 0);
  ASSERT_EQ(chmod(fs_->mnt().c_str(), 0777), 0);
  for (int i = 0; i < 10; i++) {
    CommandResult r = Shell("runuser -u nobody -- touch " + P("n" + std::to_string(i)));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string path = P("n" + std::to_string(i));
    EXPECT_TRUE(Contains(Xattr(path, "user.stripefs.layout"), "pool=fast"))
        << Xattr(path, "user.stripefs.layout");
    std::vector<int> osts = OstsOf(path);
    // Four stripes asked, the pool has two OSTs: two stripes, on 0 and 1.
    EXPECT_EQ(std::set<int>(osts.begin(), osts.end()), (std::set<int>{0, 1}));
  }
  // Root matches no rule: all four OSTs.
  ASSERT_TRUE(WriteFile(P("rootfile"), "x"));
  EXPECT_EQ(OstsOf(P("rootfile")).size(), 4u);
  EXPECT_TRUE(Contains(Xattr(P("rootfile"), "user.stripefs.layout"), "pool= "))
      << Xattr(P("rootfile"), "user.stripefs.layout");
  // A removed rule no longer applies.
  ASSERT_EQ(ErrnoOf(removexattr(fs_->mnt().c_str(), "user.stripefs.pool_rule.r1")), 0);
  ASSERT_EQ(Shell("runuser -u nobody -- touch " + P("after")).exit_code, 0);
  EXPECT_EQ(OstsOf(P("after")).size(), 4u);
}

TEST_F(PlacementTest, JobIdFromTheEnvironmentPicksAPool) {
  Start(4, 4);
  ASSERT_EQ(Set("jobid_var", "SFS_JOB"), 0);
  ASSERT_EQ(Set("pool.slow", "osts=2-3"), 0);
  ASSERT_EQ(Set("pool_rule.ior", "rank=20 jobid={ior.*} & gid={0} pool=slow"), 0);
  ASSERT_EQ(Shell("SFS_JOB=ior.77 touch " + P("job")).exit_code, 0);
  ASSERT_EQ(Shell("SFS_JOB=mdtest.1 touch " + P("other")).exit_code, 0);
  std::vector<int> osts = OstsOf(P("job"));
  EXPECT_EQ(std::set<int>(osts.begin(), osts.end()), (std::set<int>{2, 3}));
  EXPECT_EQ(OstsOf(P("other")).size(), 4u);
}

TEST_F(PlacementTest, DirectoryLayoutIsInheritedBySubdirectoriesAndTheirFiles) {
  Start(4, 1);
  ASSERT_EQ(Set("pool.fast", "osts=0,1,2"), 0);
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(Set("layout", "stripe_count=2 stripe_size=256K pool=fast", P("d")), 0);
  EXPECT_EQ(Xattr(P("d"), "user.stripefs.layout"), "stripe_count=2 stripe_size=262144 pool=fast");
  ASSERT_EQ(mkdir(P("d/sub").c_str(), 0755), 0);
  EXPECT_EQ(Xattr(P("d/sub"), "user.stripefs.layout"),
            "stripe_count=2 stripe_size=262144 pool=fast");
  ASSERT_TRUE(WriteFile(P("d/sub/f"), RandomBytes(1 << 20, 1)));
  const std::string layout = Xattr(P("d/sub/f"), "user.stripefs.layout");
  EXPECT_TRUE(Contains(layout, "stripe_count=2 stripe_size=262144 pool=fast")) << layout;
  for (int ost : OstsOf(P("d/sub/f"))) EXPECT_LT(ost, 3);
  EXPECT_TRUE(SameBytes(ReadFile(P("d/sub/f")), RandomBytes(1 << 20, 1)));
  // Reserved attributes are not listed (cp -a must not copy them).
  EXPECT_EQ(listxattr(P("d/sub").c_str(), nullptr, 0), 0);
  // The CLI shows the same; a directory without a layout of its own says so.
  CommandResult get =
      Shell(std::string(StripefsBinary()) + " getstripe " + P("d/sub/f") + " " + P("."));
  EXPECT_EQ(get.exit_code, 0) << get.output;
  EXPECT_TRUE(Contains(get.output, "pool=fast")) << get.output;
  EXPECT_TRUE(Contains(get.output, "no layout of its own")) << get.output;
  // Removing the directory layout: new files get the filesystem default.
  ASSERT_EQ(ErrnoOf(removexattr(P("d").c_str(), "user.stripefs.layout")), 0);
  ASSERT_TRUE(WriteFile(P("d/plain"), "x"));
  EXPECT_TRUE(
      Contains(Xattr(P("d/plain"), "user.stripefs.layout"), "stripe_count=1 stripe_size=1048576"));
}

TEST_F(PlacementTest, SetstripeOnAnEmptyFileAndRefusedOnceItHasData) {
  Start(4, 1);
  const std::string bin = StripefsBinary();
  CommandResult made = Shell(bin + " setstripe -c 3 -S 128K -o 3,1,0 " + P("explicit"));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_EQ(OstsOf(P("explicit")), (std::vector<int>{3, 1, 0}));
  ASSERT_TRUE(WriteFile(P("explicit"), RandomBytes(1 << 20, 2)));
  EXPECT_TRUE(SameBytes(ReadFile(P("explicit")), RandomBytes(1 << 20, 2)));
  // Data now: the layout stays.
  EXPECT_EQ(Set("layout", "stripe_count=1", P("explicit")), ENOTEMPTY);
  EXPECT_EQ(OstsOf(P("explicit")), (std::vector<int>{3, 1, 0}));
  // An empty existing file may change; the objects of the old layout go.
  // mknod, not create+close: the release of a closed file reaches the
  // daemon after close() returns, and an open file refuses (EBUSY).
  ASSERT_EQ(mknod(P("empty").c_str(), S_IFREG | 0644, 0), 0);
  EXPECT_EQ(Set("layout", "stripe_count=-1", P("empty")), 0);
  EXPECT_EQ(OstsOf(P("empty")).size(), 4u);
  // Open: EBUSY.
  int fd = open(P("empty").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(Set("layout", "stripe_count=2", P("empty")), EBUSY);
  close(fd);
}

TEST_F(PlacementTest, SetstripeOnAFileKeepsWhatItDoesNotSet) {
  Start(4, 1);
  ASSERT_EQ(Set("pool.slow", "osts=2-3"), 0);
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(Set("layout", "stripe_count=2 pool=slow", P("d")), 0);
  ASSERT_EQ(mknod(P("d/f").c_str(), S_IFREG | 0644, 0), 0);
  EXPECT_TRUE(Contains(Xattr(P("d/f"), "user.stripefs.layout"), "pool=slow"));
  // Only the stripe size changes; count and pool stay the directory's.
  ASSERT_EQ(Set("layout", "stripe_size=2M", P("d/f")), 0);
  const std::string layout = Xattr(P("d/f"), "user.stripefs.layout");
  EXPECT_TRUE(Contains(layout, "stripe_count=2 stripe_size=2097152 pool=slow")) << layout;
  std::vector<int> osts = OstsOf(P("d/f"));
  EXPECT_EQ(std::set<int>(osts.begin(), osts.end()), (std::set<int>{2, 3}));
  // stripe_count=-1 means every usable OST of the pool, even when relative
  // weights allow two stripes on one OST.
  ASSERT_EQ(Set("rtds_relative", "2:2=1,3:3=1"), 0);
  ASSERT_EQ(Set("layout", "stripe_count=-1", P("d/f")), 0);
  EXPECT_EQ(OstsOf(P("d/f")).size(), 2u);
  // A directory layout's OSTs must lie in its pool.
  EXPECT_EQ(Set("layout", "pool=slow osts=0,2", P("d")), EINVAL);
}

TEST_F(PlacementTest, SettingsSurviveRemount) {
  Start(4, 1);
  ASSERT_EQ(Set("rtds_weight", "0=1,1=2,2=0.5,3=1"), 0);
  ASSERT_EQ(Set("rtds_relative", "0:1=0.5,2:2=1"), 0);
  ASSERT_EQ(Set("pool.fast", "osts=0,1"), 0);
  ASSERT_EQ(Set("pool_rule.r1", "rank=10 uid={1000,1001} pool=fast"), 0);
  ASSERT_EQ(Set("rtds_auto", "space interval=60"), 0);
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(Set("layout", "stripe_count=2 pool=fast", P("d")), 0);
  ASSERT_EQ(Set("projid", "42", P("d")), 0);
  ASSERT_TRUE(fs_->Unmount());
  ASSERT_TRUE(fs_->Mount());
  EXPECT_EQ(Get("rtds_weight"), "0=1,1=2,2=0.5,3=1");
  EXPECT_EQ(Get("rtds_relative"), "0:1=0.5,2:2=1");
  EXPECT_EQ(Get("pool.fast"), "osts=0-1");
  EXPECT_EQ(Get("pool_rule.r1"), "rank=10 uid={1000,1001} pool=fast");
  EXPECT_EQ(Get("rtds_auto"), "space interval=60");
  EXPECT_EQ(Xattr(P("d"), "user.stripefs.layout"), "stripe_count=2 pool=fast");
  EXPECT_EQ(Xattr(P("d"), "user.stripefs.projid"), "42");
  CommandResult list = Shell(std::string(StripefsBinary()) + " pool list " + fs_->mnt());
  EXPECT_TRUE(Contains(list.output, "fast osts=0-1")) << list.output;
  EXPECT_TRUE(Contains(list.output, "r1 rank=10 uid={1000,1001} pool=fast")) << list.output;
  // Automatic weights are back with figures at once: creates work right
  // after the mount, and no OST is zeroed for want of a space sample.
  EXPECT_TRUE(WriteFile(P("d/after-remount"), "x")) << strerror(errno);
  EXPECT_FALSE(Contains(Get("rtds_auto_factors"), "=0,")) << Get("rtds_auto_factors");
}

TEST_F(PlacementTest, ProjectIdRuleAndInheritance) {
  Start(4, 4);
  ASSERT_EQ(Set("pool.proj", "osts=3"), 0);
  ASSERT_EQ(Set("pool_rule.p", "projid={42} pool=proj"), 0);
  ASSERT_EQ(mkdir(P("p").c_str(), 0755), 0);
  ASSERT_EQ(Set("projid", "42", P("p")), 0);
  ASSERT_EQ(mkdir(P("p/sub").c_str(), 0755), 0);
  EXPECT_EQ(Xattr(P("p/sub"), "user.stripefs.projid"), "42");
  ASSERT_TRUE(WriteFile(P("p/sub/f"), "x"));
  EXPECT_EQ(OstsOf(P("p/sub/f")), (std::vector<int>{3}));
}

TEST_F(PlacementTest, NonAdminGetsEpermOwnersMaySetTheirLayouts) {
  Start(4, 1);
  ASSERT_EQ(Set("pool.fast", "osts=0,1"), 0);
  ASSERT_EQ(chmod(fs_->mnt().c_str(), 0777), 0);
  for (const char* setting : {"rtds_weight 0=5", "pool.x osts=1", "pool_rule.r rank=1 pool=fast",
                              "rtds_relative 0:1=0", "rtds_auto space"}) {
    std::string s(setting);
    const size_t blank = s.find(' ');
    CommandResult r = Shell("runuser -u nobody -- setfattr -n user.stripefs." + s.substr(0, blank) +
                            " -v '" + s.substr(blank + 1) + "' " + fs_->mnt());
    EXPECT_NE(r.exit_code, 0) << setting;
    EXPECT_TRUE(Contains(r.output, "Operation not permitted")) << setting << ": " << r.output;
  }
  CommandResult removed =
      Shell("runuser -u nobody -- setfattr -x user.stripefs.pool.fast " + fs_->mnt());
  EXPECT_TRUE(Contains(removed.output, "Operation not permitted")) << removed.output;
  EXPECT_EQ(Get("pool.fast"), "osts=0-1");
  EXPECT_EQ(Get("rtds_weight"), "0=1,1=1,2=1,3=1");
  // Anyone may read.
  CommandResult read =
      Shell("runuser -u nobody -- getfattr --only-values -n user.stripefs.pools " + fs_->mnt());
  EXPECT_EQ(read.exit_code, 0) << read.output;
  // Owners set the layout of their own directory, not of root's.
  ASSERT_EQ(Shell("runuser -u nobody -- mkdir " + P("mine")).exit_code, 0);
  CommandResult own =
      Shell("runuser -u nobody -- " + fs_->PublicBinary() + " setstripe -c 2 -p fast " + P("mine"));
  EXPECT_EQ(own.exit_code, 0) << own.output;
  ASSERT_EQ(mkdir(P("roots").c_str(), 0755), 0);
  ASSERT_EQ(chmod(P("roots").c_str(), 0777), 0);  // the kernel's write check passes
  CommandResult other = Shell(
      "runuser -u nobody -- setfattr -n user.stripefs.layout -v stripe_count=2 " + P("roots"));
  EXPECT_TRUE(Contains(other.output, "Operation not permitted")) << other.output;
}

TEST_F(PlacementTest, BadInputIsRefusedAndChangesNothing) {
  Start(4, 1);
  ASSERT_EQ(Set("pool.fast", "osts=0,1"), 0);
  ASSERT_EQ(Set("pool_rule.r1", "rank=10 uid={1000} pool=fast"), 0);
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  struct Bad {
    const char* name;
    const char* value;
    int err;
  };
  const Bad bad[] = {
      {"rtds_weight", "7=1", EINVAL},  // no OST 7
      {"rtds_weight", "0=one", EINVAL},
      {"rtds_weight", "0=-1", EINVAL},
      {"rtds_weight", "0=0,1=0,2=0,3=0", ENOSPC},  // nothing left to place on
      {"rtds_weight", "0=0,1=0", ENOSPC},          // pool fast left without weight
      {"rtds_relative", "0:9=1", EINVAL},
      {"rtds_relative", "0-1=1", EINVAL},
      {"pool.bad", "osts=9", EINVAL},
      {"pool.bad", "osts=", EINVAL},
      {"pool.-x", "osts=1", EINVAL},
      {"pool_rule.r2", "uid={1} pool=nosuch", EINVAL},
      {"pool_rule.r2", "uid={abc} pool=fast", EINVAL},
      {"pool_rule.r2", "rank=1 uid={1", EINVAL},
      {"rtds_auto", "sometimes", EINVAL},
      {"rtds_auto", "space interval=0", EINVAL},
      {"pools", "x", EINVAL},
  };
  for (const Bad& b : bad) EXPECT_EQ(Set(b.name, b.value), b.err) << b.name << "=" << b.value;
  EXPECT_EQ(ErrnoOf(removexattr(fs_->mnt().c_str(), "user.stripefs.pool.fast")),
            EINVAL);  // r1 uses it
  EXPECT_EQ(ErrnoOf(removexattr(fs_->mnt().c_str(), "user.stripefs.pool.nosuch")), ENODATA);
  EXPECT_EQ(Set("layout", "pool=nosuch", P("d")), EINVAL);
  EXPECT_EQ(Set("layout", "stripe_size=100K", P("d")), EINVAL);
  EXPECT_EQ(Set("layout", "osts=0,9", P("d")), EINVAL);
  EXPECT_EQ(Set("projid", "-3", P("d")), EINVAL);
  EXPECT_EQ(Get("rtds_weight"), "0=1,1=1,2=1,3=1");
  EXPECT_EQ(Get("rtds_relative"), "");
  EXPECT_EQ(Get("pools"), "fast osts=0-1\n");
  EXPECT_EQ(Get("pool_rules"), "r1 rank=10 uid={1000} pool=fast\n");
  EXPECT_EQ(Get("rtds_auto"), "off");
  EXPECT_EQ(Xattr(P("d"), "user.stripefs.layout"), "<No data available>");
  // Each refusal logs what was wrong: both ENOSPC cases, by their own words.
  EXPECT_TRUE(Contains(fs_->Log(), "every OST would have weight 0")) << fs_->Log();
  EXPECT_TRUE(Contains(fs_->Log(), "pool fast would have no OST of positive weight (osts=0-1)"))
      << fs_->Log();
}

TEST_F(PlacementTest, AutomaticWeightsZeroAVanishedOst) {
  Start(4, 1);
  ASSERT_EQ(Set("rtds_auto", "space+load interval=1"), 0);
  // All OSTs share one disk, so their factors stay equal until one goes.
  ASSERT_EQ(Shell("rm -rf " + fs_->ost_dir(3)).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Contains(Get("rtds_auto_factors"), "3=0"); }, 10000))
      << Get("rtds_auto_factors");
  EXPECT_TRUE(Contains(fs_->Log(), "ost 3: automatic weight 0 until it recovers")) << fs_->Log();
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  // The admin weight multiplies the automatic factor: a higher admin weight
  // does not bring the failed OST back.
  ASSERT_EQ(Set("rtds_weight", "3=5"), 0);
  CreateFiles("d", 60);
  EXPECT_EQ(StripesPerOst("d", 60)[3], 0);
  // Switching off restores factor 1.
  ASSERT_EQ(Set("rtds_auto", "off"), 0);
  EXPECT_EQ(Get("rtds_auto_factors"), "0=1,1=1,2=1,3=1");
}

// Seed 004 "weights from space ... inodes": two OSTs on tmpfs of the same
// size, one with few inodes. Small files fill its inodes long before its
// space, and the automatic weight follows the inodes.
TEST(PlacementInodesTest, AutomaticWeightFollowsAnOstRunningOutOfInodes) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 1;
  options.before_mkfs = [](MountedFs& fs) {
    ASSERT_TRUE(fs.MountTmpfs(0, "16m"));
    ASSERT_TRUE(fs.MountTmpfs(1, "16m,nr_inodes=200"));  // passed on as -o size=...
  };
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  // OST `ost`'s automatic factor from "0=1,1=0.35".
  auto factor = [&](int ost) {
    const std::string text = "," + Xattr(fs.mnt(), "user.stripefs.rtds_auto_factors") + ",";
    const size_t at = text.find("," + std::to_string(ost) + "=");
    return at == std::string::npos ? -1.0 : std::atof(text.c_str() + at + 3);
  };
  ASSERT_EQ(mkdir(fs.Path("small").c_str(), 0755), 0);
  const std::string on_ost1 = "osts=1";
  ASSERT_EQ(setxattr(fs.Path("small").c_str(), "user.stripefs.layout", on_ost1.data(),
                     on_ost1.size(), 0),
            0)
      << strerror(errno);
  // The OST's own directories take about 50 inodes.
  for (int i = 0; i < 80; i++) {
    ASSERT_TRUE(WriteFile(fs.Path("small/f" + std::to_string(i)), "x")) << i;
  }
  struct statvfs st;
  ASSERT_EQ(statvfs(fs.ost_dir(1).c_str(), &st), 0);
  const double free_inodes = static_cast<double>(st.f_ffree) / st.f_files;
  ASSERT_LT(free_inodes, 0.45);
  ASSERT_EQ(SetSetting(fs, "rtds_auto", "space interval=1"), 0);
  // 80 one-page files leave OST 1 with over 97 % of its space but under
  // 45 % of its inodes: its factor follows the inodes (OST 0's space sets
  // the scale, and both are 16 MiB).
  ASSERT_TRUE(WaitFor([&] { return factor(1) >= 0 && factor(1) < 0.5; }, 10000))
      << Xattr(fs.mnt(), "user.stripefs.rtds_auto_factors");
  EXPECT_EQ(factor(0), 1.0) << Xattr(fs.mnt(), "user.stripefs.rtds_auto_factors");
  EXPECT_NEAR(factor(1), free_inodes, 0.05) << Xattr(fs.mnt(), "user.stripefs.rtds_auto_factors");
  // New single-stripe files go mostly to the OST with inodes to spare.
  ASSERT_EQ(mkdir(fs.Path("new").c_str(), 0755), 0);
  int on_one = 0;
  for (int i = 0; i < 30; i++) {
    const std::string path = fs.Path("new/f" + std::to_string(i));
    ASSERT_TRUE(WriteFile(path, "x")) << i << " " << strerror(errno);
    if (Contains(Xattr(path, "user.stripefs.layout"), "=ost1:")) on_one++;
  }
  EXPECT_LT(on_one, 15) << "files on OST 1 of 30";
}

}  // namespace
}  // namespace sfs::test
