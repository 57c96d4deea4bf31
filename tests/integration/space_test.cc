// Free-space grants on a real mount (issue 11): a striped write that one
// full OST cannot take is refused with ENOSPC before any of its stripes
// lands, so an overwrite never leaves a mix of old and new bytes, and
// space freed is granted again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr int kSmall = 2;         // the OST on a small tmpfs
constexpr size_t kStripe = 64 << 10;
constexpr size_t kRow = 4 * kStripe;  // one stripe on each of the 4 OSTs

MountedFs::Options SmallOst() {
  MountedFs::Options options;
  options.stripe_size = "64K";
  options.before_mkfs = [](MountedFs& fs) { ASSERT_TRUE(fs.MountTmpfs(kSmall, "2m")); };
  return options;
}

TEST(SpaceTest, AWriteThatCannotFitLandsNowhere) {
  MountedFs fs(SmallOst());
  ASSERT_TRUE(fs.mounted());
  // A file written whole before the disk fills: rewriting it in place
  // needs no new room.
  const std::string dense = fs.Path("dense");
  ASSERT_TRUE(WriteFile(dense, std::string(2 * kRow, 'd')));
  // A sparse file as large as the small OST can hold four times over: every
  // row written allocates on all four OSTs.
  const std::string path = fs.Path("f");
  const off_t size = 16 << 20;
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_DIRECT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, size), 0);
  void* buffer = nullptr;
  ASSERT_EQ(posix_memalign(&buffer, 4096, kRow), 0);
  int err = 0;
  off_t at = 0;
  int rows = 0;
  for (; at < size; at += kRow, ++rows) {
    std::memset(buffer, 'a' + rows % 26, kRow);
    if (pwrite(fd, buffer, kRow, at) != static_cast<ssize_t>(kRow)) {
      err = errno;
      break;
    }
  }
  EXPECT_EQ(err, ENOSPC);
  ASSERT_GT(rows, 2);
  ASSERT_LT(at, size);
  // Nothing of the refused row anywhere: it still reads as the hole it
  // was, on every OST, and the rows before it are whole.
  auto back = PreadAll(fd, static_cast<size_t>(at + kRow), 0);
  ASSERT_TRUE(back.has_value());
  for (int row = 0; row < rows; ++row) {
    EXPECT_TRUE(SameBytes(back->substr(row * kRow, kRow), std::string(kRow, 'a' + row % 26)))
        << "row " << row;
  }
  EXPECT_TRUE(SameBytes(back->substr(at, kRow), std::string(kRow, '\0')));
  for (const std::string& object : ObjectPaths(fs, path)) {
    struct stat st = Stat(object);
    EXPECT_LE(st.st_blocks * 512, static_cast<off_t>(rows * kStripe)) << object;
  }
  EXPECT_TRUE(Contains(fs.Log(), "OST " + std::to_string(kSmall) + " has no room")) << fs.Log();
  // With the small OST full, an overwrite of the dense file goes on (its
  // objects have no holes), and so do reads.
  close(fd);
  free(buffer);
  int dense_fd = open(dense.c_str(), O_WRONLY);
  ASSERT_GE(dense_fd, 0);
  EXPECT_TRUE(PwriteAll(dense_fd, std::string(2 * kRow, 'e'), 0)) << strerror(errno);
  close(dense_fd);
  EXPECT_TRUE(SameBytes(ReadFile(dense), std::string(2 * kRow, 'e')));
  // Space freed is granted again (a fresh sample shows it).
  ASSERT_EQ(unlink(path.c_str()), 0);
  ASSERT_EQ(unlink(dense.c_str()), 0);
  ASSERT_TRUE(WaitFor([&] { return fs.Objects(kSmall).empty(); }));
  const std::string again = RandomBytes(1 << 20, 9);
  ASSERT_TRUE(WriteFile(fs.Path("again"), again)) << strerror(errno);
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("again")), again));
}

// A preallocation is granted the same way: refused whole.
TEST(SpaceTest, APreallocationThatCannotFitAllocatesNothing) {
  MountedFs fs(SmallOst());
  ASSERT_TRUE(fs.mounted());
  const std::string path = fs.Path("p");
  int fd = open(path.c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(posix_fallocate(fd, 0, 16 << 20), ENOSPC);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 0);
  for (const std::string& object : ObjectPaths(fs, path)) {
    struct stat ost;
    if (stat(object.c_str(), &ost) == 0) EXPECT_EQ(ost.st_blocks, 0) << object;
  }
  EXPECT_EQ(posix_fallocate(fd, 0, 1 << 20), 0);
  close(fd);
}

}  // namespace
}  // namespace sfs::test
