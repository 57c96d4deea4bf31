// POSIX corners of issue 32 on a real mount: set-ID bits a non-owner's
// change clears must show at once; an open directory replaced by rename (or
// removed) still answers fstat; a file cannot grow past what its OSTs'
// filesystems can hold (EFBIG before anything changes).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

CommandResult As(const std::string& user, const std::string& command) {
  return Shell("runuser -u " + user + " -- sh -c '" + command + "'");
}

// The permission bits as `stat -c %a` asks for them: statx for the mode
// alone, which the kernel answers from its cache while that is fresh (a
// full stat also asks for times or blocks, which a write marks stale).
uint32_t ModeShown(const std::string& path) {
  struct statx stx;
  std::memset(&stx, 0, sizeof(stx));
  EXPECT_EQ(statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, STATX_MODE, &stx), 0)
      << path << ": " << strerror(errno);
  return stx.stx_mode & 07777;
}

// --- set-ID bits (item 1) ---

// Per write-cache mode: the kernel keeps different attributes itself in each.
class SetIdTest : public ::testing::TestWithParam<std::string> {
 protected:
  SetIdTest() : fs_(Options()) {}
  static MountedFs::Options Options() {
    MountedFs::Options options;
    options.mount_options = {"cache=" + GetParam()};
    return options;
  }
  std::string P(const std::string& relative) const { return fs_.Path(relative); }

  // Makes `name`, 8 KiB owned by root with `mode`, and has the kernel cache
  // its attributes (a stat) before `command` (PATH standing for the file)
  // runs as nobody; then the mode shown at once must have lost the set-ID
  // bits, and so must the stored one.
  void ExpectCleared(const std::string& name, uint32_t mode, std::string command,
                     bool as_root_without_fsetid = false) {
    SCOPED_TRACE(name + " mode " + std::to_string(mode) + ": " + command);
    const std::string path = P(name);
    command.replace(command.find("PATH"), 4, path);
    ASSERT_TRUE(WriteFile(path, std::string(8192, 'a'), 0777));
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    ASSERT_EQ(Stat(path).st_mode & 07777, mode);
    CommandResult ran = as_root_without_fsetid
                            ? Shell("setpriv --inh-caps=-fsetid --bounding-set=-fsetid -- sh -c '" +
                                    command + "'")
                            : As("nobody", command);
    ASSERT_EQ(ran.exit_code, 0) << ran.output;
    EXPECT_EQ(ModeShown(path), mode & 0777);
    EXPECT_EQ(Stat(path).st_mode & 07777, mode & 0777);
    ASSERT_EQ(Shell("echo 2 > /proc/sys/vm/drop_caches").exit_code, 0);
    EXPECT_EQ(ModeShown(path), mode & 0777);
  }

  MountedFs fs_;
};

TEST_P(SetIdTest, NonOwnerChangesClearSetIdBitsVisibleAtOnce) {
  const struct {
    const char* name;
    const char* command;
  } kChanges[] = {
      {"write_inside", "dd if=/dev/zero bs=1 count=1 seek=10 conv=notrunc status=none of=PATH"},
      {"append", "dd if=/dev/zero bs=1 count=1 oflag=append conv=notrunc status=none of=PATH"},
      {"truncate_down", "truncate -s 100 PATH"},
      {"truncate_up", "truncate -s 100000 PATH"},
      {"open_trunc", ": > PATH"},
      {"fallocate_grow", "fallocate -l 100000 PATH"},
      {"fallocate_keep", "fallocate -n -o 0 -l 4096 PATH"},
      {"punch", "fallocate -p -o 0 -l 4096 PATH"},
  };
  for (const auto& change : kChanges) {
    // Set-group-ID alone (no group execute) is mandatory locking's mark,
    // which a write keeps; with group execute it goes.
    for (uint32_t mode : {04777u, 02777u, 06777u}) {
      ExpectCleared(std::string(change.name) + "_" + std::to_string(mode), mode, change.command);
    }
  }
}

// Not the owner's uid but the capability decides: root without
// CAP_FSETID loses the bits too, as on ext4.
TEST_P(SetIdTest, WriteByRootWithoutFsetidClearsSetIdBits) {
  for (const char* command :
       {"dd if=/dev/zero bs=1 count=1 seek=10 conv=notrunc status=none of=PATH",
        "truncate -s 100 PATH"}) {
    ExpectCleared("root_" + std::string(command).substr(0, 2), 04755, command,
                  /*as_root_without_fsetid=*/true);
  }
}

INSTANTIATE_TEST_SUITE_P(CacheModes, SetIdTest,
                         ::testing::Values("writearound", "writethrough", "writeback"));

// --- open directories (item 2) ---

TEST(OpenDirectoryTest, ReplacedByRenameStillAnswersFstatWithNoLinks) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(mkdir(fs.Path("a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(fs.Path("b").c_str(), 0750), 0);
  const int fd = open(fs.Path("b").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  struct stat before;
  ASSERT_EQ(fstat(fd, &before), 0);
  ASSERT_EQ(rename(fs.Path("a").c_str(), fs.Path("b").c_str()), 0);
  struct stat after;
  ASSERT_EQ(fstat(fd, &after), 0) << strerror(errno);
  EXPECT_EQ(after.st_nlink, 0u);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(after.st_mode, before.st_mode);
  EXPECT_NE(Stat(fs.Path("b")).st_ino, before.st_ino);
  // The kernel refuses to list or create in a dead directory itself.
  EXPECT_EQ(close(fd), 0);
}

TEST(OpenDirectoryTest, RemovedWhileOpenStillAnswersFstatWithNoLinks) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(mkdir(fs.Path("d").c_str(), 0700), 0);
  const int fd = open(fs.Path("d").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(rmdir(fs.Path("d").c_str()), 0);
  struct stat after;
  ASSERT_EQ(fstat(fd, &after), 0) << strerror(errno);
  EXPECT_EQ(after.st_nlink, 0u);
  EXPECT_TRUE(S_ISDIR(after.st_mode));
  EXPECT_EQ(close(fd), 0);
  // Closed, it is gone; a new directory of that name is another inode.
  ASSERT_EQ(mkdir(fs.Path("d").c_str(), 0700), 0);
  EXPECT_NE(Stat(fs.Path("d")).st_ino, after.st_ino);
}

// --- sizes the OSTs cannot hold (item 3) ---

// ext4's own limit for a block size (s_maxbytes with extents):
// 2^32 - 1 blocks.
uint64_t Ext4Limit(const std::string& dir) {
  CommandResult block = Shell("stat -f -c %S " + dir);
  EXPECT_EQ(block.exit_code, 0) << block.output;
  return ((1ull << 32) - 1) * std::stoull(block.output);
}

int TruncateTo(const std::string& path, uint64_t size) {
  return truncate(path.c_str(), static_cast<off_t>(size)) == 0 ? 0 : errno;
}

TEST(SizeLimitTest, OneStripeOnExt4StopsAtTheObjectLimitBeforeAnythingChanges) {
  MountedFs::Options options;
  options.osts = 1;
  options.stripe_count = 1;
  options.before_mkfs = [](MountedFs& fs) {
    std::string device;
    ASSERT_TRUE(fs.MountExt4(0, 32, &device));
  };
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const uint64_t limit = Ext4Limit(fs.ost_dir(0));
  const std::string f = fs.Path("f");
  ASSERT_TRUE(WriteFile(f, "hello"));

  EXPECT_EQ(TruncateTo(f, static_cast<uint64_t>(INT64_MAX)), EFBIG);
  EXPECT_EQ(TruncateTo(f, limit + 1), EFBIG);
  EXPECT_EQ(Stat(f).st_size, 5);
  EXPECT_EQ(ReadFile(f), "hello");
  const int fd = open(f.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  errno = 0;
  EXPECT_EQ(pwrite(fd, "x", 1, static_cast<off_t>(limit)), -1);
  EXPECT_EQ(errno, EFBIG);
  EXPECT_EQ(fallocate(fd, 0, static_cast<off_t>(limit - 4096), 8192), -1);
  EXPECT_EQ(errno, EFBIG);
  EXPECT_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(limit - 4096), 8192), -1);
  EXPECT_EQ(errno, EFBIG);
  EXPECT_EQ(Stat(f).st_size, 5);

  // Up to the limit everything works; a write across it is short.
  EXPECT_EQ(TruncateTo(f, limit), 0);
  EXPECT_EQ(static_cast<uint64_t>(Stat(f).st_size), limit);
  EXPECT_EQ(pwrite(fd, "yz", 2, static_cast<off_t>(limit - 1)), 1) << strerror(errno);
  EXPECT_EQ(static_cast<uint64_t>(Stat(f).st_size), limit);
  char byte = 0;
  EXPECT_EQ(pread(fd, &byte, 1, static_cast<off_t>(limit - 1)), 1);
  EXPECT_EQ(byte, 'y');
  EXPECT_EQ(close(fd), 0);
}

TEST(SizeLimitTest, TwoStripesHoldTwiceTheObjectLimitRoundedToTheStripePattern) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  options.stripe_size = "1M";
  options.before_mkfs = [](MountedFs& fs) {
    std::string device;
    ASSERT_TRUE(fs.MountExt4(0, 32, &device));
    ASSERT_TRUE(fs.MountExt4(1, 32, &device));
  };
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const uint64_t object = Ext4Limit(fs.ost_dir(0));
  ASSERT_EQ(object, Ext4Limit(fs.ost_dir(1)));
  const uint64_t chunk = 1 << 20;
  // Whole rows of two chunks, then stripe 0's share of the next row.
  const uint64_t limit = 2 * (object / chunk) * chunk + object % chunk;
  const std::string f = fs.Path("f");
  ASSERT_TRUE(WriteFile(f, ""));
  EXPECT_EQ(TruncateTo(f, limit + 1), EFBIG);
  EXPECT_EQ(Stat(f).st_size, 0);
  EXPECT_EQ(TruncateTo(f, limit), 0);
  const int fd = open(f.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(pwrite(fd, "x", 1, static_cast<off_t>(limit - 1)), 1) << strerror(errno);
  errno = 0;
  EXPECT_EQ(pwrite(fd, "x", 1, static_cast<off_t>(limit)), -1);
  EXPECT_EQ(errno, EFBIG);
  EXPECT_EQ(static_cast<uint64_t>(Stat(f).st_size), limit);
  EXPECT_EQ(close(fd), 0);
}

}  // namespace
}  // namespace sfs::test
