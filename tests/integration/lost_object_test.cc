// A lost object is an error, never silent zeros (issue 8, item 5): after
// `rm -rf OST1/objects`, reading a file whose stripe lived there fails with
// EIO and one log line names the file, stripe, OST and object, while a
// stripe that was never written (a hole) still reads as zeros; the marks
// that tell the two apart survive a remount, and nothing recreates a lost
// object behind the caller's back.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr int kLost = 1;
constexpr size_t kMiB = 1 << 20;

// The stripe of `path` whose object is on OST `ost` and that object's id
// ("0x1f"), from the layout; {-1, ""} if none.
std::pair<int, std::string> StripeOn(const std::string& path, int ost) {
  const std::string layout = Xattr(path, "user.stripefs.layout");
  const size_t at = layout.find("=ost" + std::to_string(ost) + ":");
  if (at == std::string::npos) return {-1, ""};
  const int stripe = layout[layout.rfind("stripe", at) + 6] - '0';
  const size_t id = layout.find(':', at) + 1;
  return {stripe, layout.substr(id, layout.find(' ', id) - id)};
}

uint64_t InodeOf(const std::string& path) { return Stat(path).st_ino; }

void DropCaches() { ASSERT_EQ(Shell("echo 3 > /proc/sys/vm/drop_caches").exit_code, 0); }

TEST(LostObjectTest, LostStripeIsEioWithALogLineAndAHoleStaysZeros) {
  MountedFs fs;  // 4 OSTs, 4 stripes of 1 MiB
  ASSERT_TRUE(fs.mounted());
  const std::string data = RandomBytes(8 * kMiB, 11);
  ASSERT_TRUE(WriteFile(fs.Path("written"), data));
  // A sparse file: only stripe 0 is ever written; the others are holes. The
  // stripe on the OST to lose must be one of those (placement is random).
  const std::string head = RandomBytes(kMiB, 12);
  std::string sparse;
  int hole_stripe = 0;
  for (int i = 0; i < 50 && hole_stripe <= 0; ++i) {
    sparse = fs.Path("sparse" + std::to_string(i));
    ASSERT_TRUE(WriteFile(sparse, head));
    ASSERT_EQ(truncate(sparse.c_str(), 8 * kMiB), 0);
    hole_stripe = StripeOn(sparse, kLost).first;
  }
  ASSERT_GT(hole_stripe, 0);
  const auto [lost_stripe, lost_object] = StripeOn(fs.Path("written"), kLost);
  ASSERT_GE(lost_stripe, 0);

  // The marks are in the store: a remount knows which objects were written.
  ASSERT_TRUE(fs.Unmount());
  ASSERT_TRUE(fs.Mount());
  ASSERT_EQ(Shell("rm -rf " + fs.ost_dir(kLost) + "/objects").exit_code, 0);
  DropCaches();

  int fd = open(fs.Path("written").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::string buf(kMiB, '\0');
  EXPECT_EQ(ErrnoOf(pread(fd, buf.data(), kMiB, lost_stripe * kMiB)), EIO);
  // Other stripes of the same file still read.
  const int kept = (lost_stripe + 1) % 4;
  EXPECT_EQ(PreadAll(fd, kMiB, kept * kMiB), data.substr(kept * kMiB, kMiB));
  // A write does not recreate the lost object (the rest of it would read as
  // zeros): EIO, and the object stays missing.
  EXPECT_EQ(ErrnoOf(pwrite(fd, "x", 1, lost_stripe * kMiB)), EIO);
  close(fd);
  EXPECT_TRUE(fs.Objects(kLost).empty());
  EXPECT_EQ(ReadFile(fs.Path("written")), std::nullopt);
  EXPECT_EQ(errno, EIO);

  // The log names file, stripe, OST and object.
  const std::string log = fs.Log();
  const std::string line = "object " + lost_object + " of inode " +
                           std::to_string(InodeOf(fs.Path("written"))) + " stripe " +
                           std::to_string(lost_stripe) + " is missing although it was written";
  EXPECT_TRUE(Contains(log, line)) << line << "\n" << log;
  EXPECT_TRUE(Contains(log, "ost " + std::to_string(kLost) + " (")) << log;

  // The never written stripe is a hole: zeros, no error.
  std::string expected = head + std::string(7 * kMiB, '\0');
  EXPECT_TRUE(SameBytes(ReadFile(sparse), expected));
  // And writing it creates its object, as for any hole.
  fd = open(sparse.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(pwrite(fd, "y", 1, hole_stripe * kMiB), 1) << strerror(errno);
  close(fd);
  expected[hole_stripe * kMiB] = 'y';
  DropCaches();
  EXPECT_TRUE(SameBytes(ReadFile(sparse), expected));
}

}  // namespace
}  // namespace sfs::test
