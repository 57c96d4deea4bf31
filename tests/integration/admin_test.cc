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

}  // namespace
}  // namespace sfs::test
