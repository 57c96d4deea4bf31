// Identifier ranges: contiguity, high-water marks, and no reuse after a
// reopen or a crash.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "meta/keys.h"
#include "meta/meta_store.h"
#include "tests/meta/meta_test_util.h"

namespace sfs::meta {
namespace {

class IdsTest : public test_util::StoreTest {
 protected:
  // What a crash right now would leave on disk: a copy of the live store
  // directory (every write so far has reached the WAL file).
  std::string CrashCopy() {
    const std::string copy = tmp_.path() + "/crash" + std::to_string(copies_++);
    std::error_code ec;
    std::filesystem::copy(db_dir_, copy, std::filesystem::copy_options::recursive, ec);
    EXPECT_FALSE(ec) << ec.message();
    return copy;
  }

  // The persisted high-water mark `key` in the store at `dir`.
  uint64_t PersistedMark(const std::string& dir, std::string_view key) {
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::OpenForReadOnly(test_util::RawDbOptions(), dir, &raw);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return 0;
    std::unique_ptr<rocksdb::DB> db(raw);
    std::string value;
    s = db->Get(rocksdb::ReadOptions(), rocksdb::Slice(key.data(), key.size()), &value);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto mark = DecodeCounter(value);
    EXPECT_TRUE(mark.ok());
    return mark.ok() ? *mark : 0;
  }

  int copies_ = 0;
};

TEST_F(IdsTest, ObjectIdsAreContiguousAcrossRefills) {
  auto a = store_->AllocateObjectIds(1);
  SFS_ASSERT_OK(a);
  EXPECT_EQ(*a, 1u);
  auto b = store_->AllocateObjectIds(1000);
  SFS_ASSERT_OK(b);
  EXPECT_EQ(*b, 2u);
  auto c = store_->AllocateObjectIds(100);  // crosses the first range's end
  SFS_ASSERT_OK(c);
  EXPECT_EQ(*c, 1002u);
  // A request larger than a range gets a range of its own size.
  auto d = store_->AllocateObjectIds(5000);
  SFS_ASSERT_OK(d);
  EXPECT_EQ(*d, 1102u);
  auto e = store_->AllocateObjectIds(1);
  SFS_ASSERT_OK(e);
  EXPECT_EQ(*e, 6102u);
  SFS_EXPECT_ERR(store_->AllocateObjectIds(0), EINVAL);
}

TEST_F(IdsTest, MarksArePersistedBeforeUse) {
  // Freshly formatted: nothing handed out yet.
  EXPECT_EQ(PersistedMark(CrashCopy(), kNextInoKey), 2u);
  EXPECT_EQ(PersistedMark(CrashCopy(), kNextObjKey), 1u);
  uint64_t max_ino = 0;
  for (int i = 0; i < 5; ++i) {
    auto f = File(kRootIno, "f" + std::to_string(i));
    SFS_ASSERT_OK(f);
    max_ino = std::max(max_ino, f->ino);
    EXPECT_GT(PersistedMark(CrashCopy(), kNextInoKey), max_ino);
  }
  EXPECT_EQ(PersistedMark(CrashCopy(), kNextInoKey), 2u + 1024u);
  auto first = store_->AllocateObjectIds(1000);
  SFS_ASSERT_OK(first);
  EXPECT_EQ(PersistedMark(CrashCopy(), kNextObjKey), 1u + 1024u);
  auto second = store_->AllocateObjectIds(100);
  SFS_ASSERT_OK(second);
  const uint64_t last_obj = *second + 99;
  uint64_t obj_mark = PersistedMark(CrashCopy(), kNextObjKey);
  EXPECT_GT(obj_mark, last_obj);
  EXPECT_EQ(obj_mark, 1u + 2 * 1024u);
}

TEST_F(IdsTest, ReopenNeverReusesIds) {
  uint64_t max_ino = 0;
  for (int i = 0; i < 3; ++i) {
    auto f = File(kRootIno, "f" + std::to_string(i));
    SFS_ASSERT_OK(f);
    max_ino = std::max(max_ino, f->ino);
  }
  auto objs = store_->AllocateObjectIds(10);
  SFS_ASSERT_OK(objs);
  const uint64_t max_obj = *objs + 9;
  EXPECT_EQ(max_ino, 4u);
  EXPECT_EQ(max_obj, 10u);

  Reopen();
  auto f = File(kRootIno, "after");
  SFS_ASSERT_OK(f);
  EXPECT_GT(f->ino, max_ino);
  EXPECT_EQ(f->ino, 2u + 1024u);  // restarts at the persisted mark
  auto more = store_->AllocateObjectIds(1);
  SFS_ASSERT_OK(more);
  EXPECT_GT(*more, max_obj);
  EXPECT_EQ(*more, 1u + 1024u);
}

TEST_F(IdsTest, CrashNeverReusesIds) {
  uint64_t max_ino = 0;
  for (int i = 0; i < 3; ++i) {
    auto f = File(kRootIno, "f" + std::to_string(i));
    SFS_ASSERT_OK(f);
    max_ino = std::max(max_ino, f->ino);
  }
  auto objs = store_->AllocateObjectIds(2000);
  SFS_ASSERT_OK(objs);
  const uint64_t max_obj = *objs + 1999;

  // Open what a crash would have left, while the original is still open.
  auto crashed = MetaStore::Open(CrashCopy());
  SFS_ASSERT_OK(crashed);
  EXPECT_EQ(InoOf(kRootIno, "f2"), max_ino);  // the namespace made it too
  NewNode node;
  node.mode = S_IFREG | 0600;
  auto f = (*crashed)->Create(kRootIno, "after", node);
  SFS_ASSERT_OK(f);
  EXPECT_GT(f->ino, max_ino);
  auto more = (*crashed)->AllocateObjectIds(1);
  SFS_ASSERT_OK(more);
  EXPECT_GT(*more, max_obj);
}

// Object ids and inode numbers are handed out under their own mutex, not
// the inode locks: creates and allocations racing across many range
// refills still never hand out one number twice.
TEST_F(IdsTest, RacingCreatesAndAllocationsNeverShareANumber) {
  constexpr int kThreads = 4;
  constexpr int kEach = 600;  // 4 x 600 x 3 object ids: several refills
  std::vector<std::vector<uint64_t>> inos(kThreads), objects(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto file = File(kRootIno, "t" + std::to_string(t) + "-" + std::to_string(i));
        if (file.ok()) inos[t].push_back(file->ino);
        auto first = store_->AllocateObjectIds(3);
        if (!first.ok()) continue;
        for (uint64_t id = *first; id < *first + 3; ++id) objects[t].push_back(id);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<uint64_t> all_inos, all_objects;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(inos[t].size(), static_cast<size_t>(kEach));
    EXPECT_EQ(objects[t].size(), static_cast<size_t>(kEach) * 3);
    all_inos.insert(inos[t].begin(), inos[t].end());
    all_objects.insert(objects[t].begin(), objects[t].end());
  }
  EXPECT_EQ(all_inos.size(), static_cast<size_t>(kThreads * kEach));
  EXPECT_EQ(all_objects.size(), static_cast<size_t>(kThreads * kEach * 3));
}

}  // namespace
}  // namespace sfs::meta
