// Installing and mounting as an admin does (issue 12, item 8): what
// `cmake --install` puts where, the man page made from --help, and
// mount(8) with -t fuse.stripefs and with an fstab line (a file of the
// test's own, through mount -T, so the machine's /etc/fstab is untouched).
// mount(8) finds helpers in /sbin only: the test links the build's helper
// there for its duration unless another one is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr const char* kSystemHelper = "/sbin/mount.fuse.stripefs";

bool MountedAs(const std::string& mnt, const std::string& type) {
  return Shell("grep -q ' " + mnt + " " + type + " ' /proc/mounts").exit_code == 0;
}

TEST(InstallTest, PutsTheBinaryTheMountHelperTheManPageAndTheServerUnits) {
  char tmpl[] = "/tmp/sfs-install-XXXXXX";
  const std::string dest = mkdtemp(tmpl);
  CommandResult installed =
      Shell("DESTDIR=" + dest + " cmake --install " SFS_BUILD_DIR " --prefix /opt/sfs 2>&1");
  ASSERT_EQ(installed.exit_code, 0) << installed.output;
  EXPECT_EQ(access((dest + "/opt/sfs/bin/stripefs").c_str(), X_OK), 0);
  const std::string helper = dest + kSystemHelper;
  EXPECT_EQ(access(helper.c_str(), X_OK), 0);
  const std::string helper_text = ReadFile(helper).value_or("");
  EXPECT_NE(helper_text.find("exec \"/opt/sfs/bin/stripefs\" mount"), std::string::npos)
      << helper_text;
  // The OSS's unit template runs the installed binary, its arguments from
  // /etc/stripefs/oss-NAME.conf.
  const std::string unit = ReadFile(dest + "/opt/sfs/lib/systemd/system/stripefs-oss@.service")
                               .value_or("");
  EXPECT_NE(unit.find("ExecStart=/opt/sfs/bin/stripefs oss -f $OSS_ARGS"), std::string::npos)
      << unit;
  EXPECT_NE(unit.find("EnvironmentFile=/etc/stripefs/oss-%i.conf"), std::string::npos) << unit;
  // The MDS's, the same way.
  const std::string mds_unit =
      ReadFile(dest + "/opt/sfs/lib/systemd/system/stripefs-mds@.service").value_or("");
  EXPECT_NE(mds_unit.find("ExecStart=/opt/sfs/bin/stripefs mds -f $MDS_ARGS"), std::string::npos)
      << mds_unit;
  EXPECT_NE(mds_unit.find("EnvironmentFile=/etc/stripefs/mds-%i.conf"), std::string::npos)
      << mds_unit;
  const std::string page = dest + "/opt/sfs/share/man/man8/stripefs.8";
  ASSERT_TRUE(Exists(page));
  // The page says what --help says.
  CommandResult help = Shell(dest + "/opt/sfs/bin/stripefs --help");
  ASSERT_EQ(help.exit_code, 0);
  // C locale: groff writes \\- as an ASCII hyphen, as --help has it.
  CommandResult shown = Shell("LC_ALL=C MANWIDTH=200 man -l " + page + " 2>&1");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  for (const char* line : {"stripefs df [-h | -i] [--json] MOUNTPOINT",
                           "The busiest jobs over every OST and the metadata service."}) {
    EXPECT_NE(help.output.find(line), std::string::npos) << line;
    EXPECT_NE(shown.output.find(line), std::string::npos) << line << "\n" << shown.output;
  }
  Shell("rm -rf " + dest);
}

class MountHelperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs_.Unmount());
    if (Exists(kSystemHelper)) {
      char target[4096] = {};
      const ssize_t n = readlink(kSystemHelper, target, sizeof(target) - 1);
      if (n < 0 || std::string(target) != MOUNT_HELPER) {
        GTEST_SKIP() << kSystemHelper << " is another install's; not touching it";
      }
      linked_ = true;  // ours, left by a run that crashed: removed after this one
    } else {
      ASSERT_EQ(symlink(MOUNT_HELPER, kSystemHelper), 0) << strerror(errno);
      linked_ = true;
    }
  }
  void TearDown() override {
    if (MountedAs(fs_.mnt(), "fuse.stripefs")) Shell("umount " + fs_.mnt());
    if (linked_) unlink(kSystemHelper);
  }
  MountedFs fs_;
  bool linked_ = false;
};

TEST_F(MountHelperTest, MountTypeFuseStripefsAndUmount) {
  CommandResult mounted = Shell("mount -t fuse.stripefs " + fs_.meta_dir() + " " + fs_.mnt() +
                                " -o log_level=warn,_netdev,noatime 2>&1");
  ASSERT_EQ(mounted.exit_code, 0) << mounted.output;
  ASSERT_TRUE(MountedAs(fs_.mnt(), "fuse.stripefs"));
  ASSERT_TRUE(WriteFile(fs_.Path("via-mount"), "mounted by mount(8)"));
  EXPECT_EQ(ReadFile(fs_.Path("via-mount")), "mounted by mount(8)");
  CommandResult unmounted = Shell("umount " + fs_.mnt() + " 2>&1");
  EXPECT_EQ(unmounted.exit_code, 0) << unmounted.output;
  EXPECT_FALSE(MountedAs(fs_.mnt(), "fuse.stripefs"));
  // A bad option is the daemon's error, passed through.
  CommandResult bad = Shell("mount -t fuse.stripefs " + fs_.meta_dir() + " " + fs_.mnt() +
                            " -o ost_threads=0 2>&1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("bad mount option ost_threads=0"), std::string::npos) << bad.output;
  EXPECT_FALSE(MountedAs(fs_.mnt(), "fuse.stripefs"));
}

// A client mount of a metadata service: its source is mds://ADDRESS:PORT.
TEST_F(MountHelperTest, AClientMountOfAnMds) {
  MountedFs::Options options;
  options.client = true;
  options.osts = 1;
  options.stripe_count = 1;
  MountedFs client(options);
  ASSERT_TRUE(client.mounted()) << client.Log();
  ASSERT_TRUE(client.Unmount());
  CommandResult mounted = Shell("mount -t fuse.stripefs " + client.Source() + " " + client.mnt() +
                                " -o key=" + client.root() + "/key,_netdev,no_root_squash 2>&1");
  ASSERT_EQ(mounted.exit_code, 0) << mounted.output;
  EXPECT_TRUE(MountedAs(client.mnt(), "fuse.stripefs"));
  EXPECT_TRUE(WriteFile(client.Path("via-mount"), "a client"));
  EXPECT_EQ(ReadFile(client.Path("via-mount")), "a client");
  CommandResult unmounted = Shell("umount " + client.mnt() + " 2>&1");
  EXPECT_EQ(unmounted.exit_code, 0) << unmounted.output;
}

// mount(8) runs the helper for a remount too: it flips the mount
// read-only and back with the system call, and the same daemon serves on.
TEST_F(MountHelperTest, RemountReadOnlyAndBack) {
  CommandResult mounted = Shell("mount -t fuse.stripefs " + fs_.meta_dir() + " " + fs_.mnt() +
                                " -o log_level=warn 2>&1");
  ASSERT_EQ(mounted.exit_code, 0) << mounted.output;
  ASSERT_TRUE(WriteFile(fs_.Path("before"), "written"));
  CommandResult ro = Shell("mount -o remount,ro " + fs_.mnt() + " 2>&1");
  ASSERT_EQ(ro.exit_code, 0) << ro.output;
  EXPECT_FALSE(WriteFile(fs_.Path("refused"), "x"));
  EXPECT_EQ(errno, EROFS);
  EXPECT_EQ(ReadFile(fs_.Path("before")), "written");
  CommandResult rw = Shell("mount -o remount,rw " + fs_.mnt() + " 2>&1");
  ASSERT_EQ(rw.exit_code, 0) << rw.output;
  EXPECT_TRUE(WriteFile(fs_.Path("after"), "again")) << strerror(errno);
  EXPECT_EQ(Shell("umount " + fs_.mnt()).exit_code, 0);
}

TEST_F(MountHelperTest, AnFstabLineMounts) {
  const std::string fstab = fs_.root() + "/fstab";
  std::ofstream(fstab) << "# a test's own fstab\n"
                       << fs_.meta_dir() << " " << fs_.mnt()
                       << " fuse.stripefs defaults,noauto,nofail,_netdev,log_level=warn 0 0\n";
  CommandResult mounted = Shell("mount -T " + fstab + " " + fs_.mnt() + " 2>&1");
  ASSERT_EQ(mounted.exit_code, 0) << mounted.output;
  ASSERT_TRUE(MountedAs(fs_.mnt(), "fuse.stripefs"));
  ASSERT_TRUE(WriteFile(fs_.Path("via-fstab"), "from fstab"));
  EXPECT_EQ(ReadFile(fs_.Path("via-fstab")), "from fstab");
  EXPECT_EQ(Shell("umount " + fs_.mnt()).exit_code, 0);
}

}  // namespace
}  // namespace sfs::test
