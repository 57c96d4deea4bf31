// Writing marks (MetaStore::MarkWriting): set and erased per inode, listed
// in order, kept across a reopen (what the mount after an unclean stop
// reads), and independent of the orphan marks.
#include <gtest/gtest.h>

#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

using WritingMarksTest = test_util::StoreTest;

TEST_F(WritingMarksTest, MarksAreListedInOrderAndSurviveAReopen) {
  auto none = store_->Writing();
  SFS_ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
  SFS_ASSERT_OK(store_->MarkWriting(300, true));
  SFS_ASSERT_OK(store_->MarkWriting(7, true));
  SFS_ASSERT_OK(store_->MarkWriting(7, true));  // twice is one mark
  SFS_ASSERT_OK(store_->MarkWriting(1ull << 40, true));
  Reopen();
  auto marked = store_->Writing();
  SFS_ASSERT_OK(marked);
  EXPECT_EQ(*marked, (std::vector<uint64_t>{7, 300, 1ull << 40}));
  SFS_ASSERT_OK(store_->MarkWriting(300, false));
  SFS_ASSERT_OK(store_->MarkWriting(12345, false));  // erasing no mark is fine
  marked = store_->Writing();
  SFS_ASSERT_OK(marked);
  EXPECT_EQ(*marked, (std::vector<uint64_t>{7, 1ull << 40}));
  // An erase skips the WAL; a clean close still keeps it.
  Reopen();
  marked = store_->Writing();
  SFS_ASSERT_OK(marked);
  EXPECT_EQ(*marked, (std::vector<uint64_t>{7, 1ull << 40}));
}

TEST_F(WritingMarksTest, AreNotOrphanMarksAndOutliveNoInodeCheck) {
  auto f = File(kRootIno, "f");
  SFS_ASSERT_OK(f);
  SFS_ASSERT_OK(store_->MarkWriting(f->ino, true));
  auto orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_TRUE(orphans->empty());
  // The file goes (last link, no objects): its mark stays for the mount to
  // erase, and does not stop the unlink.
  auto removed = store_->Unlink(kRootIno, "f", [](uint64_t, const std::string&) { return true; });
  SFS_ASSERT_OK(removed);
  EXPECT_TRUE(removed->purged);
  auto marked = store_->Writing();
  SFS_ASSERT_OK(marked);
  EXPECT_EQ(*marked, std::vector<uint64_t>{f->ino});
  orphans = store_->Orphans();
  SFS_ASSERT_OK(orphans);
  EXPECT_TRUE(orphans->empty());
}

}  // namespace
}  // namespace sfs::meta
