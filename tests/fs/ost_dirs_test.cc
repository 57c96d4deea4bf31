// The directory checks of `ost add` (WalkToLocalDir) and mkfs (PathsOverlap),
// on real directories; and the OST table's growth.
#include "fs/ost_dirs.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "fs/ost_table.h"
#include "ost/local_service.h"
#include "ost/backend.h"

namespace sfs::fs {
namespace {

class OstDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sfs-ost-dirs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(OstDirsTest, WalkCreatesWhatIsMissingPrivately) {
  const std::string target = dir_ + "/a/b/c";
  ASSERT_TRUE(WalkToLocalDir(target).ok());
  struct stat st {};
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat((dir_ + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // Existing directories are walked as they are.
  ASSERT_EQ(chmod((dir_ + "/a").c_str(), 0755), 0);
  ASSERT_TRUE(WalkToLocalDir(target).ok());
  ASSERT_EQ(stat((dir_ + "/a").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST_F(OstDirsTest, WalkRefusesSymlinksFilesAndPathsThatAreNotCanonical) {
  ASSERT_EQ(mkdir((dir_ + "/real").c_str(), 0700), 0);
  ASSERT_EQ(symlink((dir_ + "/real").c_str(), (dir_ + "/link").c_str()), 0);
  Status through_link = WalkToLocalDir(dir_ + "/link/ost");
  EXPECT_EQ(through_link.err(), EINVAL);
  EXPECT_NE(through_link.message().find(dir_ + "/link is a symlink"), std::string::npos)
      << through_link.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/real/ost"));
  EXPECT_EQ(WalkToLocalDir(dir_ + "/link").err(), EINVAL);

  std::ofstream(dir_ + "/file") << "x";
  EXPECT_EQ(WalkToLocalDir(dir_ + "/file").err(), ENOTDIR);
  EXPECT_EQ(WalkToLocalDir(dir_ + "/file/below").err(), ENOTDIR);

  for (const std::string& bad : {dir_ + "/real/../real", dir_ + "/./real", dir_ + "//real",
                                 dir_ + "/real/", std::string("relative"), std::string("/")}) {
    EXPECT_EQ(WalkToLocalDir(bad).err(), EINVAL) << bad;
  }
}

TEST_F(OstDirsTest, WalkRefusesDirectoriesOthersOwnOrMayWrite) {
  // The test's own directory is root's and 0700 (mkdtemp as root).
  const std::string theirs = dir_ + "/theirs";
  ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(chown(theirs.c_str(), 65534, 65534), 0);
  Status owned = WalkToLocalDir(theirs + "/ost");
  EXPECT_EQ(owned.err(), EPERM);
  EXPECT_NE(owned.message().find(theirs + " belongs to uid 65534"), std::string::npos)
      << owned.ToString();
  EXPECT_FALSE(std::filesystem::exists(theirs + "/ost"));

  const std::string open_to_all = dir_ + "/open";
  ASSERT_EQ(mkdir(open_to_all.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open_to_all.c_str(), 0777), 0);
  Status writable = WalkToLocalDir(open_to_all + "/ost");
  EXPECT_EQ(writable.err(), EPERM);
  EXPECT_NE(writable.message().find("may be written by others than root (mode 777)"),
            std::string::npos) << writable.ToString();

  // Sticky, as /tmp: others cannot replace root's entries there, so it may
  // be on the way, but not be the OST itself.
  const std::string sticky = dir_ + "/sticky";
  ASSERT_EQ(mkdir(sticky.c_str(), 0700), 0);
  ASSERT_EQ(chmod(sticky.c_str(), 01777), 0);
  EXPECT_TRUE(WalkToLocalDir(sticky + "/ost").ok());
  EXPECT_EQ(WalkToLocalDir(sticky).err(), EPERM);
}

TEST(PathsOverlapTest, OneInsideTheOtherOrTheSame) {
  EXPECT_TRUE(PathsOverlap("/a/b", "/a/b"));
  EXPECT_TRUE(PathsOverlap("/a/b", "/a/b/c"));
  EXPECT_TRUE(PathsOverlap("/a/b/c", "/a/b"));
  EXPECT_FALSE(PathsOverlap("/a/b", "/a/bc"));
  EXPECT_FALSE(PathsOverlap("/a/bc", "/a/b"));
  EXPECT_FALSE(PathsOverlap("/a/b", "/a/c"));
}

std::unique_ptr<ost::Service> MemService(uint32_t index) {
  ost::ServiceOptions options;
  options.index = index;
  options.threads = 1;
  return std::make_unique<ost::LocalService>(options, ost::NewMemBackend());
}

TEST(OstTableTest, GrowsUpToItsCapacityAndKeepsWhatItPublished) {
  OstTable table(2);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.All().empty());
  ASSERT_TRUE(table.Add(MemService(0)).ok());
  ost::Service* first = &table[0];
  ASSERT_TRUE(table.Add(MemService(1)).ok());
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(&table[0], first);  // slots never move
  EXPECT_EQ(table.at(1).index(), 1u);
  EXPECT_EQ(table.All().size(), 2u);
  EXPECT_EQ(table.Add(MemService(2)).err(), ENOSPC);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_THROW(table.at(2), std::out_of_range);
  table.Clear();
  EXPECT_EQ(table.size(), 0u);
}

}  // namespace
}  // namespace sfs::fs
