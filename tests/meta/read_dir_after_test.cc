// ReadDirAfter: batches of a directory resumed after a name, while the
// directory changes between batches.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

class ReadDirAfterTest : public test_util::StoreTest {
 protected:
  // The names of one batch; empty (and a test failure) on error.
  std::vector<std::string> Names(uint64_t dir, const std::string& after, size_t max_entries) {
    auto batch = store_->ReadDirAfter(dir, after, max_entries);
    EXPECT_TRUE(batch.ok()) << batch.status().ToString();
    std::vector<std::string> names;
    if (!batch.ok()) return names;
    for (const DirEntry& entry : *batch) names.push_back(entry.name);
    return names;
  }

  // The whole directory, `per_batch` entries at a time, each batch resumed
  // after the last name of the one before.
  std::vector<std::string> ListInBatches(uint64_t dir, size_t per_batch) {
    std::vector<std::string> all;
    std::string after;
    for (;;) {
      std::vector<std::string> batch = Names(dir, after, per_batch);
      all.insert(all.end(), batch.begin(), batch.end());
      if (batch.size() < per_batch) return all;
      after = batch.back();
    }
  }
};

using Strings = std::vector<std::string>;

TEST_F(ReadDirAfterTest, BatchesResumeAfterAName) {
  auto dir = Dir(kRootIno, "d");
  SFS_ASSERT_OK(dir);
  for (const char* name : {"e", "a", "c", "b", "d"}) SFS_ASSERT_OK(File(dir->ino, name));
  SFS_ASSERT_OK(File(kRootIno, "z"));  // another directory's entry is never listed

  EXPECT_EQ(Names(dir->ino, "", 2), (Strings{"a", "b"}));
  EXPECT_EQ(Names(dir->ino, "b", 2), (Strings{"c", "d"}));
  EXPECT_EQ(Names(dir->ino, "d", 2), (Strings{"e"}));
  EXPECT_EQ(Names(dir->ino, "e", 2), Strings{});
  // The position need not be a name in the directory, and a name that is a
  // prefix of another sorts before it.
  EXPECT_EQ(Names(dir->ino, "bb", 10), (Strings{"c", "d", "e"}));
  SFS_ASSERT_OK(File(dir->ino, "cc"));
  EXPECT_EQ(Names(dir->ino, "c", 1), Strings{"cc"});
  EXPECT_EQ(Names(dir->ino, "", 0), Strings{});

  for (size_t per_batch : {1, 2, 3, 100}) {
    EXPECT_EQ(ListInBatches(dir->ino, per_batch), (Strings{"a", "b", "c", "cc", "d", "e"}))
        << per_batch;
  }
}

TEST_F(ReadDirAfterTest, EntriesCarryInodeAndType) {
  auto sub = Dir(kRootIno, "sub");
  auto file = File(kRootIno, "file");
  auto link = Make(kRootIno, "link", S_IFLNK | 0777, "file");
  SFS_ASSERT_OK(sub);
  SFS_ASSERT_OK(file);
  SFS_ASSERT_OK(link);
  auto batch = store_->ReadDirAfter(kRootIno, "", 10);
  SFS_ASSERT_OK(batch);
  ASSERT_EQ(batch->size(), 3u);
  EXPECT_EQ((*batch)[0].name, "file");
  EXPECT_EQ((*batch)[0].ino, file->ino);
  EXPECT_EQ((*batch)[0].mode, static_cast<uint32_t>(S_IFREG));
  EXPECT_EQ((*batch)[1].name, "link");
  EXPECT_EQ((*batch)[1].mode, static_cast<uint32_t>(S_IFLNK));
  EXPECT_EQ((*batch)[2].name, "sub");
  EXPECT_EQ((*batch)[2].ino, sub->ino);
  EXPECT_EQ((*batch)[2].mode, static_cast<uint32_t>(S_IFDIR));
}

// What changed before the cursor is not listed again; what changed after it
// is seen by the next batch; what stayed is listed exactly once.
TEST_F(ReadDirAfterTest, ChangesBetweenBatches) {
  auto dir = Dir(kRootIno, "d");
  SFS_ASSERT_OK(dir);
  for (const char* name : {"b", "d", "f", "h", "j"}) SFS_ASSERT_OK(File(dir->ino, name));

  EXPECT_EQ(Names(dir->ino, "", 2), (Strings{"b", "d"}));
  SFS_ASSERT_OK(File(dir->ino, "a"));            // added before the cursor
  SFS_ASSERT_OK(File(dir->ino, "c"));            // added before the cursor
  SFS_ASSERT_OK(store_->Unlink(dir->ino, "b"));  // removed, already listed
  SFS_ASSERT_OK(File(dir->ino, "e"));            // added after the cursor
  SFS_ASSERT_OK(store_->Unlink(dir->ino, "h"));  // removed, not yet listed
  EXPECT_EQ(Names(dir->ino, "d", 2), (Strings{"e", "f"}));
  SFS_ASSERT_OK(store_->Rename(dir->ino, "j", dir->ino, "g", RenameMode::kReplace));
  EXPECT_EQ(Names(dir->ino, "f", 2), Strings{"g"});
}

TEST_F(ReadDirAfterTest, CursorNameRemovedOrReplaced) {
  auto dir = Dir(kRootIno, "d");
  SFS_ASSERT_OK(dir);
  for (const char* name : {"a", "b", "c", "d"}) SFS_ASSERT_OK(File(dir->ino, name));

  EXPECT_EQ(Names(dir->ino, "", 2), (Strings{"a", "b"}));
  // The last name returned is gone: the next batch starts after where it was.
  SFS_ASSERT_OK(store_->Unlink(dir->ino, "b"));
  EXPECT_EQ(Names(dir->ino, "b", 1), Strings{"c"});
  // The cursor name now names another file: it was listed, so it is not
  // listed again.
  SFS_ASSERT_OK(store_->Unlink(dir->ino, "c"));
  SFS_ASSERT_OK(File(dir->ino, "c"));
  EXPECT_EQ(Names(dir->ino, "c", 5), Strings{"d"});
}

TEST_F(ReadDirAfterTest, EveryStableEntryOnceWhileChurning) {
  auto dir = Dir(kRootIno, "d");
  SFS_ASSERT_OK(dir);
  std::set<std::string> stable;
  for (int i = 0; i < 200; i += 2) {
    char name[16];
    snprintf(name, sizeof(name), "n%03d", i);
    SFS_ASSERT_OK(File(dir->ino, name));
    stable.insert(name);
  }
  // Between every two batches, odd names appear and disappear all over the
  // range, before and after the cursor.
  std::vector<std::string> listed;
  std::string after;
  for (int round = 0;; ++round) {
    std::vector<std::string> batch = Names(dir->ino, after, 7);
    listed.insert(listed.end(), batch.begin(), batch.end());
    if (batch.size() < 7) break;
    after = batch.back();
    for (int k = 0; k < 4; ++k) {
      char name[16];
      snprintf(name, sizeof(name), "n%03d", (round * 37 + k * 53) % 100 * 2 + 1);
      if (!File(dir->ino, name).ok()) SFS_ASSERT_OK(store_->Unlink(dir->ino, name));
    }
  }
  std::set<std::string> seen;
  for (const std::string& name : listed) EXPECT_TRUE(seen.insert(name).second) << name;
  for (const std::string& name : stable) EXPECT_EQ(seen.count(name), 1u) << name;
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
}

TEST_F(ReadDirAfterTest, EmptyDirectory) {
  auto dir = Dir(kRootIno, "d");
  SFS_ASSERT_OK(dir);
  EXPECT_EQ(Names(dir->ino, "", 10), Strings{});
  EXPECT_EQ(Names(dir->ino, "x", 10), Strings{});
  // Its neighbours in key order (the parent, a later directory) do not leak in.
  SFS_ASSERT_OK(File(kRootIno, "zz"));
  auto later = Dir(kRootIno, "later");
  SFS_ASSERT_OK(later);
  SFS_ASSERT_OK(File(later->ino, "inside"));
  EXPECT_EQ(Names(dir->ino, "", 10), Strings{});
}

TEST_F(ReadDirAfterTest, NotADirectoryOrMissing) {
  auto file = File(kRootIno, "f");
  SFS_ASSERT_OK(file);
  SFS_EXPECT_ERR(store_->ReadDirAfter(file->ino, "", 10), ENOTDIR);
  SFS_EXPECT_ERR(store_->ReadDirAfter(file->ino, "a", 0), ENOTDIR);
  SFS_EXPECT_ERR(store_->ReadDirAfter(999, "", 10), ENOENT);
  auto dir = Dir(kRootIno, "d");
  SFS_ASSERT_OK(dir);
  SFS_ASSERT_OK(store_->Rmdir(kRootIno, "d"));
  SFS_EXPECT_ERR(store_->ReadDirAfter(dir->ino, "", 10), ENOENT);
}

TEST_F(ReadDirAfterTest, SurvivesReopen) {
  for (const char* name : {"a", "b", "c"}) SFS_ASSERT_OK(File(kRootIno, name));
  EXPECT_EQ(Names(kRootIno, "", 1), Strings{"a"});
  Reopen();
  EXPECT_EQ(Names(kRootIno, "a", 5), (Strings{"b", "c"}));
}

}  // namespace
}  // namespace sfs::meta
