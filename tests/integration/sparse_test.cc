// st_blocks is the objects' real allocation and SEEK_DATA / SEEK_HOLE find
// data and holes (issue 8, item 8), so du, cp --sparse and tar -S see a
// sparse file as sparse and keep its holes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr off_t kMiB = 1 << 20;
constexpr off_t kGiB = 1 << 30;

int64_t Allocated(const std::string& path) {
  return static_cast<int64_t>(Stat(path).st_blocks) * 512;
}

// 1 MiB of data at 0, 4 KiB at 100 MiB, `size` in all: two islands of data.
std::string MakeSparse(const MountedFs& fs, const std::string& name, off_t size = kGiB) {
  const std::string path = fs.Path(name);
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  EXPECT_GE(fd, 0);
  EXPECT_TRUE(PwriteAll(fd, RandomBytes(kMiB, 1), 0));
  EXPECT_TRUE(PwriteAll(fd, RandomBytes(4096, 2), 100 * kMiB));
  EXPECT_EQ(ftruncate(fd, size), 0);
  close(fd);
  return path;
}

off_t SeekOf(const std::string& path, off_t offset, int whence) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1000 - errno;
  off_t found = lseek(fd, offset, whence);
  const int err = errno;
  close(fd);
  return found < 0 ? -err : found;
}

TEST(SparseTest, BlocksAreTheRealAllocationOpenClosedAndAfterRemount) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  const std::string path = MakeSparse(fs, "sparse");
  // Data is 1 MiB + 4 KiB; the OSTs' filesystems add at most some blocks.
  EXPECT_GE(Allocated(path), kMiB + 4096);
  EXPECT_LT(Allocated(path), 2 * kMiB);
  EXPECT_EQ(Stat(path).st_size, kGiB);
  CommandResult du = Shell("du -B1 " + path);
  EXPECT_LT(std::stoll(du.output), 2 * kMiB) << du.output;

  // Stored: the same after a remount.
  const int64_t before = Allocated(path);
  ASSERT_TRUE(fs.Unmount());
  ASSERT_TRUE(fs.Mount());
  EXPECT_EQ(Allocated(path), before);

  // Punching and truncating give the blocks back, seen at once.
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, kMiB), 0);
  EXPECT_LT(Allocated(path), 64 * 1024);
  ASSERT_EQ(ftruncate(fd, 0), 0);
  EXPECT_EQ(Allocated(path), 0);
  // A preallocation counts too.
  ASSERT_EQ(fallocate(fd, 0, 0, 8 * kMiB), 0);
  EXPECT_GE(Allocated(path), 8 * kMiB);
  close(fd);
  EXPECT_GE(Allocated(path), 8 * kMiB);
}

TEST(SparseTest, SeekDataAndSeekHoleAcrossStripes) {
  MountedFs fs;  // 4 stripes of 1 MiB: 100 MiB lies in stripe 0 again
  ASSERT_TRUE(fs.mounted());
  const std::string path = MakeSparse(fs, "sparse");
  EXPECT_EQ(SeekOf(path, 0, SEEK_DATA), 0);
  EXPECT_EQ(SeekOf(path, 0, SEEK_HOLE), kMiB);
  EXPECT_EQ(SeekOf(path, 4096, SEEK_DATA), 4096);
  EXPECT_EQ(SeekOf(path, kMiB, SEEK_DATA), 100 * kMiB);
  EXPECT_EQ(SeekOf(path, 100 * kMiB + 10, SEEK_DATA), 100 * kMiB + 10);
  EXPECT_EQ(SeekOf(path, 100 * kMiB, SEEK_HOLE), 100 * kMiB + 4096);
  EXPECT_EQ(SeekOf(path, 100 * kMiB + 4096, SEEK_DATA), -ENXIO);
  EXPECT_EQ(SeekOf(path, 500 * kMiB, SEEK_HOLE), 500 * kMiB);
  EXPECT_EQ(SeekOf(path, kGiB - 1, SEEK_HOLE), kGiB - 1);
  EXPECT_EQ(SeekOf(path, kGiB, SEEK_DATA), -ENXIO);
  EXPECT_EQ(SeekOf(path, kGiB, SEEK_HOLE), -ENXIO);
  // Data in another stripe: 2 MiB + 5 lies in stripe 2.
  int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, "z", 2 * kMiB + 5));
  close(fd);
  EXPECT_EQ(SeekOf(path, kMiB, SEEK_DATA), 2 * kMiB);          // its block starts there
  EXPECT_EQ(SeekOf(path, 2 * kMiB, SEEK_HOLE), 2 * kMiB + 6);  // past the object's end
  // A file without holes: data everywhere, the hole at its end.
  ASSERT_TRUE(WriteFile(fs.Path("dense"), RandomBytes(5 * kMiB + 3, 4)));
  EXPECT_EQ(SeekOf(fs.Path("dense"), 3 * kMiB, SEEK_DATA), 3 * kMiB);
  EXPECT_EQ(SeekOf(fs.Path("dense"), 0, SEEK_HOLE), 5 * kMiB + 3);
}

TEST(SparseTest, CpSparseAndTarKeepHoles) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  // Small enough that reading it whole (to compare) stays quick.
  const std::string path = MakeSparse(fs, "sparse", 128 * kMiB);
  const std::string expected = *ReadFile(path);

  CommandResult copied = Shell("cp --sparse=auto " + path + " " + fs.Path("copy"));
  ASSERT_EQ(copied.exit_code, 0) << copied.output;
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("copy")), expected));
  EXPECT_LT(Allocated(fs.Path("copy")), 2 * kMiB);

  const std::string archive = fs.root() + "/sparse.tar";
  CommandResult packed = Shell("tar -S -cf " + archive + " -C " + fs.mnt() + " sparse");
  ASSERT_EQ(packed.exit_code, 0) << packed.output;
  struct stat st;
  ASSERT_EQ(stat(archive.c_str(), &st), 0);
  EXPECT_LT(st.st_size, 4 * kMiB);  // the holes are not in the archive
  ASSERT_EQ(mkdir(fs.Path("x").c_str(), 0755), 0);
  CommandResult unpacked = Shell("tar -xf " + archive + " -C " + fs.Path("x"));
  ASSERT_EQ(unpacked.exit_code, 0) << unpacked.output;
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("x/sparse")), expected));
  EXPECT_LT(Allocated(fs.Path("x/sparse")), 2 * kMiB);
}

}  // namespace
}  // namespace sfs::test
