#include "fs/open_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "fs/filesystem.h"

namespace sfs::fs {
namespace {

std::shared_ptr<OpenFile> NewFile(uint64_t ino) {
  auto file = std::make_shared<OpenFile>();
  file->ino = ino;
  return file;
}

// Two inodes that fall in different shards, and two in the same one.
struct Pairs {
  uint64_t apart_a = 0, apart_b = 0, together_a = 0, together_b = 0;
};
Pairs FindPairs() {
  Pairs pairs;
  pairs.apart_a = pairs.together_a = 2;
  for (uint64_t ino = 3; pairs.apart_b == 0 || pairs.together_b == 0; ++ino) {
    const bool same = OpenTable::ShardOf(ino) == OpenTable::ShardOf(2);
    if (same && pairs.together_b == 0) pairs.together_b = ino;
    if (!same && pairs.apart_b == 0) pairs.apart_b = ino;
  }
  return pairs;
}

TEST(OpenTableTest, FindsWhatWasInsertedUntilErased) {
  OpenTable table;
  EXPECT_EQ(table.Find(7), nullptr);
  auto file = NewFile(7);
  table.Lock(7).Insert(7, file);
  EXPECT_EQ(table.Find(7), file);
  EXPECT_TRUE(table.Lock(7).IsOpen(7));
  table.Lock(7).Erase(7);
  EXPECT_EQ(table.Find(7), nullptr);
  EXPECT_FALSE(table.Lock(7).IsOpen(7));
}

TEST(OpenTableTest, InodesOfOneShardStayApart) {
  const Pairs pairs = FindPairs();
  OpenTable table;
  auto a = NewFile(pairs.together_a);
  table.Lock(pairs.together_a).Insert(pairs.together_a, a);
  // Same shard, another inode: not open, and erasing it leaves the first.
  EXPECT_EQ(table.Find(pairs.together_b), nullptr);
  table.Lock(pairs.together_b).Erase(pairs.together_b);
  EXPECT_EQ(table.Find(pairs.together_a), a);
  EXPECT_FALSE(table.Lock(pairs.together_a).Destroying(pairs.together_b));
}

TEST(OpenTableTest, DestroyBeginsOnce) {
  OpenTable table;
  EXPECT_FALSE(table.Lock(9).Destroying(9));
  EXPECT_TRUE(table.Lock(9).BeginDestroy(9));
  EXPECT_TRUE(table.Lock(9).Destroying(9));
  EXPECT_FALSE(table.Lock(9).BeginDestroy(9));
  table.Lock(9).EndDestroy(9);
  EXPECT_FALSE(table.Lock(9).Destroying(9));
  EXPECT_TRUE(table.Lock(9).BeginDestroy(9));
}

TEST(OpenTableTest, RemovedCountsEachInodeOnceOverAllShards) {
  const Pairs pairs = FindPairs();
  OpenTable table;
  EXPECT_EQ(table.removed(), 0u);
  table.Lock(pairs.apart_a).MarkRemoved(pairs.apart_a);
  table.Lock(pairs.apart_a).MarkRemoved(pairs.apart_a);  // a set: still one
  table.Lock(pairs.apart_b).MarkRemoved(pairs.apart_b);
  EXPECT_EQ(table.removed(), 2u);
  table.Lock(pairs.together_b).UnmarkRemoved(pairs.together_b);  // never marked
  EXPECT_EQ(table.removed(), 2u);
  table.Lock(pairs.apart_a).UnmarkRemoved(pairs.apart_a);
  table.Lock(pairs.apart_a).UnmarkRemoved(pairs.apart_a);
  EXPECT_EQ(table.removed(), 1u);
}

TEST(OpenTableTest, AllListsEveryShard) {
  OpenTable table;
  std::vector<uint64_t> inos;
  for (uint64_t ino = 1; ino <= 200; ++ino) {
    table.Lock(ino).Insert(ino, NewFile(ino));
    inos.push_back(ino);
  }
  std::vector<uint64_t> listed;
  for (const auto& file : table.All()) listed.push_back(file->ino);
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, inos);
}

// Inode numbers come in runs (meta::MetaStore hands out ranges): a run must
// use every shard, none much more than the others.
TEST(OpenTableTest, ARunOfInodesSpreadsOverEveryShard) {
  for (uint64_t first : {1ull, 1000ull, 1ull << 32}) {
    std::vector<size_t> count(OpenTable::kShards, 0);
    const size_t run = OpenTable::kShards * 16;
    for (uint64_t ino = first; ino < first + run; ++ino) count[OpenTable::ShardOf(ino)]++;
    EXPECT_GE(*std::min_element(count.begin(), count.end()), 8u) << first;
    EXPECT_LE(*std::max_element(count.begin(), count.end()), 32u) << first;
  }
}

// A shard held by one thread does not stop another thread working on an
// inode of another shard (with one table-wide mutex this test would hang).
TEST(OpenTableTest, AnotherShardIsFreeWhileOneIsHeld) {
  const Pairs pairs = FindPairs();
  OpenTable table;
  OpenTable::Locked held = table.Lock(pairs.apart_a);
  held.Insert(pairs.apart_a, NewFile(pairs.apart_a));
  std::thread other([&] { table.Lock(pairs.apart_b).Insert(pairs.apart_b, NewFile(pairs.apart_b)); });
  other.join();
  EXPECT_NE(table.Find(pairs.apart_b), nullptr);
}

// TryLock (an unlink's check under the store's lock) never waits: a held
// shard says no, a free one is taken. Tried from another thread, as an
// unlink would.
TEST(OpenTableTest, TryLockTakesOnlyAFreeShard) {
  const Pairs pairs = FindPairs();
  OpenTable table;
  auto try_from_another_thread = [&](uint64_t ino) {
    bool taken = false;
    std::thread([&] { taken = table.TryLock(ino).has_value(); }).join();
    return taken;
  };
  {
    OpenTable::Locked held = table.Lock(pairs.together_a);
    EXPECT_FALSE(try_from_another_thread(pairs.together_b));
    EXPECT_FALSE(try_from_another_thread(pairs.together_a));
    EXPECT_TRUE(try_from_another_thread(pairs.apart_b));
  }
  EXPECT_TRUE(try_from_another_thread(pairs.together_b));
  auto tried = table.TryLock(pairs.apart_a);
  ASSERT_TRUE(tried.has_value());
  tried->Insert(pairs.apart_a, NewFile(pairs.apart_a));
  tried.reset();
  EXPECT_NE(table.Find(pairs.apart_a), nullptr);
}

// Many threads opening and closing their own inodes while others look them
// up: each inode's opens count ends at zero, the table empty.
TEST(OpenTableTest, ConcurrentOpensAndClosesKeepEveryCount) {
  OpenTable table;
  constexpr int kThreads = 8;
  constexpr int kRounds = 2000;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        // Threads share inodes pairwise: t and t^1 open the same ones.
        const uint64_t ino = 100 + static_cast<uint64_t>((t / 2) * kRounds + round % 50);
        {
          OpenTable::Locked locked = table.Lock(ino);
          if (auto open = locked.Find(ino)) {
            open->opens++;
          } else {
            auto file = NewFile(ino);
            file->opens = 1;
            locked.Insert(ino, file);
          }
        }
        if (auto seen = table.Find(ino); seen == nullptr || seen->ino != ino) mismatches++;
        OpenTable::Locked locked = table.Lock(ino);
        auto open = locked.Find(ino);
        if (open == nullptr) {
          mismatches++;
          continue;
        }
        if (--open->opens == 0) locked.Erase(ino);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_TRUE(table.All().empty());
}

}  // namespace
}  // namespace sfs::fs
