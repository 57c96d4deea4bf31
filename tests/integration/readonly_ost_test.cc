// An OST whose filesystem turns read-only (issue 8, item 6): files with
// stripes on it stay readable, changes to those stripes get EROFS (not EIO),
// other stripes and OSTs keep taking writes, automatic weights treat it as
// full so new files avoid it, and it takes writes again once writable.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr int kReadOnly = 2;
constexpr size_t kMiB = 1 << 20;

// The stripe index whose object lies on OST `ost`, from the layout; -1 if none.
int StripeOn(const std::string& path, int ost) {
  const std::string layout = Xattr(path, "user.stripefs.layout");
  const size_t at = layout.find("=ost" + std::to_string(ost) + ":");
  if (at == std::string::npos) return -1;
  return layout[layout.rfind("stripe", at) + 6] - '0';
}

// OST `ost`'s automatic factor as rtds_auto_factors shows it ("0=1,1=0.5").
std::string AutoFactor(const MountedFs& fs, int ost) {
  const std::string text = "," + Xattr(fs.mnt(), "user.stripefs.rtds_auto_factors") + ",";
  const std::string key = "," + std::to_string(ost) + "=";
  const size_t at = text.find(key);
  if (at == std::string::npos) return "?";
  const size_t from = at + key.size();
  return text.substr(from, text.find(',', from) - from);
}

// New single-stripe files never land on OST `ost` once automatic weights
// gave it 0.
void NewFilesAvoid(const MountedFs& fs, int ost) {
  ASSERT_EQ(SetSetting(fs, "rtds_auto", "space interval=1"), 0);
  ASSERT_TRUE(WaitFor([&] { return AutoFactor(fs, ost) == "0"; }, 10000))
      << Xattr(fs.mnt(), "user.stripefs.rtds_auto_factors");
  ASSERT_EQ(mkdir(fs.Path("new").c_str(), 0755), 0);
  const std::string one = "stripe_count=1";
  ASSERT_EQ(setxattr(fs.Path("new").c_str(), "user.stripefs.layout", one.data(), one.size(), 0), 0);
  for (int i = 0; i < 40; ++i) {
    const std::string path = fs.Path("new/f" + std::to_string(i));
    ASSERT_TRUE(WriteFile(path, "fresh")) << i << " " << strerror(errno);
    EXPECT_EQ(StripeOn(path, ost), -1) << Xattr(path, "user.stripefs.layout");
  }
}

// ext4 with errors=remount-ro turning read-only under open files, as a disk
// error does: reads keep working, writes to its stripes get EROFS.
TEST(ReadOnlyOstTest, OstTurnedReadOnlyByAnErrorServesReadsAndRefusesWritesWithErofs) {
  std::string device;
  MountedFs::Options options;
  options.before_mkfs = [&](MountedFs& fs) { ASSERT_TRUE(fs.MountExt4(kReadOnly, 64, &device)); };
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string data = RandomBytes(8 * kMiB, 5);
  ASSERT_TRUE(WriteFile(fs.Path("striped"), data));
  const int stripe = StripeOn(fs.Path("striped"), kReadOnly);
  ASSERT_GE(stripe, 0);
  int fd = open(fs.Path("striped").c_str(), O_RDWR);  // held across the error
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fsync(fd), 0);

  ASSERT_EQ(Shell("echo 1 > /sys/fs/ext4/" + device + "/trigger_fs_error").exit_code, 0);
  ASSERT_EQ(Shell("echo 3 > /proc/sys/vm/drop_caches").exit_code, 0);  // reads reach the OSTs

  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("striped")), data));
  const std::string block(4096, 'w');
  EXPECT_EQ(ErrnoOf(pwrite(fd, block.data(), block.size(), stripe * kMiB)), EROFS);
  const int other = (stripe + 1) % 4;
  EXPECT_EQ(pwrite(fd, block.data(), block.size(), other * kMiB), 4096) << strerror(errno);
  EXPECT_EQ(ErrnoOf(ftruncate(fd, 1 * kMiB)), EROFS);  // cuts every object
  close(fd);
  std::string expected = data;
  expected.replace(other * kMiB, block.size(), block);
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("striped")), expected));
  EXPECT_TRUE(Contains(fs.Log(), "Read-only file system")) << fs.Log();
  NewFilesAvoid(fs, kReadOnly);
}

// An administrator's read-only remount of an idle OST (closed files leave
// no descriptor in the daemon, so the remount is allowed), and back.
TEST(ReadOnlyOstTest, ReadOnlyRemountAndBack) {
  MountedFs::Options options;
  options.before_mkfs = [](MountedFs& fs) { ASSERT_TRUE(fs.MountTmpfs(kReadOnly, "64m")); };
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string data = RandomBytes(8 * kMiB, 6);
  ASSERT_TRUE(WriteFile(fs.Path("striped"), data));
  const int stripe = StripeOn(fs.Path("striped"), kReadOnly);
  ASSERT_GE(stripe, 0);
  // The daemon closes the objects once the file is closed (asynchronously).
  EXPECT_TRUE(WaitFor(
      [&] { return Shell("mount -o remount,ro " + fs.ost_dir(kReadOnly)).exit_code == 0; }, 5000));

  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("striped")), data));
  int fd = open(fs.Path("striped").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string block(4096, 'w');
  EXPECT_EQ(ErrnoOf(pwrite(fd, block.data(), block.size(), stripe * kMiB)), EROFS);
  close(fd);
  NewFilesAvoid(fs, kReadOnly);

  // Writable again: writes to its stripes work, and new files may use it.
  ASSERT_EQ(Shell("mount -o remount,rw " + fs.ost_dir(kReadOnly)).exit_code, 0);
  fd = open(fs.Path("striped").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(pwrite(fd, block.data(), block.size(), stripe * kMiB), 4096) << strerror(errno);
  close(fd);
  std::string expected = data;
  expected.replace(stripe * kMiB, block.size(), block);
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("striped")), expected));
  EXPECT_TRUE(WaitFor([&] { return AutoFactor(fs, kReadOnly) != "0"; }))
      << Xattr(fs.mnt(), "user.stripefs.rtds_auto_factors");
}

}  // namespace
}  // namespace sfs::test
