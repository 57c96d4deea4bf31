// A full metadata disk (issue 8, item 3): callers get ENOSPC, the daemon
// stays up, everything already stored keeps reading, errors still reach
// stderr when the log file (on the same full disk) cannot be written, and
// once space returns the mount works again without a remount.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

// Creates "<prefix><i>" with a 3000-byte xattr until an operation fails;
// returns how many succeeded and the errno of the failure (0 if none).
std::pair<int, int> FillUntilFailure(const MountedFs& fs, const std::string& prefix, int limit) {
  const std::string pad(3000, 'p');
  for (int i = 0; i < limit; ++i) {
    const std::string path = fs.Path(prefix + std::to_string(i));
    int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd < 0) return {i, errno};
    close(fd);
    if (setxattr(path.c_str(), "user.pad", pad.data(), pad.size(), 0) != 0) return {i, errno};
  }
  return {limit, 0};
}

TEST(MetaFullTest, FullMetadataDiskIsEnospcAndRecoversWithoutRemount) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  options.capture_stderr = true;
  std::string meta;
  options.before_mkfs = [&](MountedFs& fs) {
    meta = fs.meta_dir();
    ASSERT_TRUE(fs.MountTmpfsAt(meta, "3m"));
  };
  options.log_in_meta = true;  // the log shares the full disk
  MountedFs fs(options);
  ASSERT_TRUE(fs.formatted());
  ASSERT_TRUE(fs.mounted());
  const std::string data = RandomBytes(3 << 20, 9);
  ASSERT_TRUE(WriteFile(fs.Path("before"), data));
  ASSERT_EQ(mkdir(fs.Path("dir").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(fs.Path("dir/small"), "small"));

  const auto [made, err] = FillUntilFailure(fs, "fill", 20000);
  EXPECT_GT(made, 100);
  ASSERT_EQ(err, ENOSPC) << strerror(err) << " after " << made << " files";
  ASSERT_EQ(kill(fs.daemon_pid(), 0), 0) << "the daemon died";

  // Everything stored keeps working.
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("before")), data));
  EXPECT_EQ(ReadFile(fs.Path("dir/small")), "small");
  EXPECT_EQ(Xattr(fs.Path("fill1"), "user.pad"), std::string(3000, 'p'));
  CommandResult listed = Shell("ls " + fs.Path("dir"));
  EXPECT_EQ(listed.output, "small\n");
  // New metadata is refused with ENOSPC, never EIO or ENOTCONN.
  EXPECT_EQ(ErrnoOf(mkdir(fs.Path("newdir").c_str(), 0755)), ENOSPC);
  for (int i = 0; i < 20; ++i) {
    int fd = open(fs.Path("more" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) close(fd);
    EXPECT_EQ(fd < 0 ? errno : 0, ENOSPC);
  }
  int fd = open(fs.Path("before").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ErrnoOf(fsync(fd)), ENOSPC);  // the WAL cannot be made durable
  close(fd);
  ASSERT_EQ(kill(fs.daemon_pid(), 0), 0) << "the daemon died";
  // The log file cannot take the error lines; stderr did.
  EXPECT_TRUE(Contains(fs.Stderr(), "No space left on device")) << fs.Stderr();

  // Space comes back: the same mount works again by itself.
  ASSERT_EQ(Shell("mount -o remount,size=64m " + meta).exit_code, 0);
  EXPECT_TRUE(WaitFor(
      [&] {
        int created = open(fs.Path("after").c_str(), O_CREAT | O_WRONLY, 0644);
        if (created < 0) return false;
        close(created);
        return true;
      },
      30000));
  const auto [made_after, err_after] = FillUntilFailure(fs, "again", 300);
  EXPECT_EQ(made_after, 300) << strerror(err_after);
  fd = open(fs.Path("before").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ErrnoOf(fsync(fd)), 0);
  close(fd);
  ASSERT_TRUE(WriteFile(fs.Path("dir/new"), "new data"));

  // And all of it survives a remount.
  ASSERT_TRUE(fs.Unmount());
  ASSERT_TRUE(fs.Mount());
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("before")), data));
  EXPECT_EQ(ReadFile(fs.Path("dir/new")), "new data");
  EXPECT_TRUE(Exists(fs.Path("again299")));
  EXPECT_TRUE(Exists(fs.Path("fill" + std::to_string(made - 1))));
}

}  // namespace
}  // namespace sfs::test
