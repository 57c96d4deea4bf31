// Extent credits on a real mount (issue 11): overlapping striped O_DIRECT
// writes and reads never mix while the OSTs' schedulers reorder, and the
// mount works without them (extent_credits=off) as before.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

const std::string kTornIo = std::string(SFS_BUILD_DIR) + "/tools/bench/torn_io";

struct TornCount {
  long reads = -1;
  long torn = -1;
  long writes = -1;
};

TornCount RunTornIo(const std::string& file, const std::string& size, int reads) {
  CommandResult r = Shell(kTornIo + " " + file + " " + size + " 2 2 " + std::to_string(reads));
  TornCount count;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(sscanf(r.output.c_str(), "reads %ld torn %ld writes %ld", &count.reads, &count.torn,
                   &count.writes),
            3)
      << r.output;
  return count;
}

MountedFs::Options Striped64K() {
  MountedFs::Options options;
  options.osts = 4;
  options.stripe_count = 4;
  options.stripe_size = "64K";  // a 512 KiB request spans every OST twice
  return options;
}

// One FUSE request per read and per write (512 KiB: within max_read and
// max_write), each cut into a part per OST that the OST's policy orders on
// its own: with the credits no read sees two writes.
TEST(ExtentTest, OverlappingStripedDirectIoIsNeverTornWhileOstsReorder) {
  MountedFs fs(Striped64K());
  ASSERT_TRUE(fs.mounted());
  for (const char* policies : {"orr", "tbf uid", "crrn"}) {
    ASSERT_EQ(SetSetting(fs, "nrs_policies", policies), 0) << policies;
    const std::string file = fs.Path(std::string("torn_") + policies[0]);
    TornCount count = RunTornIo(file, "512K", 1500);
    EXPECT_EQ(count.reads, 1500) << policies;
    EXPECT_EQ(count.torn, 0) << policies;
    EXPECT_GT(count.writes, 0) << policies;
  }
}

// Without credits the same I/O runs and stores what the last write wrote.
TEST(ExtentTest, WithoutCreditsTheMountStillWorks) {
  MountedFs::Options options = Striped64K();
  options.mount_options = {"extent_credits=off"};
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  TornCount count = RunTornIo(fs.Path("plain"), "512K", 200);
  EXPECT_EQ(count.reads, 200);
  ASSERT_EQ(Shell("dd if=/dev/urandom of=" + fs.root() + "/src bs=1M count=3 status=none").exit_code, 0);
  ASSERT_EQ(Shell("cp " + fs.root() + "/src " + fs.Path("copy")).exit_code, 0);
  EXPECT_EQ(Shell("cmp " + fs.root() + "/src " + fs.Path("copy")).exit_code, 0);
}

// All threads through one handle: the handle alone caches a write credit
// over the whole file (lockless mode), and its users still keep order.
TEST(ExtentTest, OneHandleAloneKeepsItsOwnUsersInOrder) {
  MountedFs fs(Striped64K());
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(SetSetting(fs, "nrs_policies", "orr"), 0);
  CommandResult r = Shell(kTornIo + " " + fs.Path("one") + " 512K 2 2 1000 one-handle");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  long reads = -1, torn = -1;
  ASSERT_EQ(sscanf(r.output.c_str(), "reads %ld torn %ld", &reads, &torn), 2) << r.output;
  EXPECT_EQ(reads, 1000);
  EXPECT_EQ(torn, 0);
}

}  // namespace
}  // namespace sfs::test
