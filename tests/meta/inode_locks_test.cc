// The store's inode stripes (meta/inode_locks.h): order, dedup, the
// try-below rule, and no deadlock among threads taking random sets.
#include "meta/inode_locks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

namespace sfs::meta {
namespace {

constexpr uint64_t kStripes = InodeLocks::kStripes;

TEST(InodeLocksTest, InodesOfOneStripeShareItAndOthersDoNot) {
  InodeLocks locks;
  auto held = locks.Lock({5, 5 + kStripes, 7});  // two inodes of stripe 5
  EXPECT_TRUE(held.Add(5 + 2 * kStripes));        // held already
  std::atomic<bool> other_done{false};
  // Another thread takes a stripe nobody holds without waiting for us.
  std::thread other([&] {
    auto mine = locks.Lock({6});
    other_done = true;
  });
  other.join();
  EXPECT_TRUE(other_done.load());
}

TEST(InodeLocksTest, AStripeBelowOneHeldIsOnlyTried) {
  InodeLocks locks;
  auto low = locks.Lock({3});
  std::thread other([&] {
    auto held = locks.Lock({9});
    EXPECT_TRUE(held.Add(12));   // above: taken
    EXPECT_FALSE(held.Add(3));   // below and busy: the caller starts again
    EXPECT_TRUE(held.Add(4));    // below but free: taken
    EXPECT_EQ(held.wanted(), (std::vector<uint64_t>{9, 12, 3, 4}));
  });
  other.join();
}

TEST(InodeLocksTest, ReleasedOnDestructionAndMove) {
  InodeLocks locks;
  {
    auto held = locks.Lock({1, 2});
    auto moved = std::move(held);
  }
  auto all = locks.LockAll();  // would wait forever if a stripe stayed taken
  EXPECT_TRUE(all.Add(12345));
}

// Threads take random sets, then add random inodes the way mutations do
// (start again with everything when Add says so), while one thread now
// and then takes every stripe. Finishing is the test: a cycle would hang
// (ctest's timeout).
TEST(InodeLocksTest, RandomSetsNeverDeadlock) {
  InodeLocks locks;
  std::atomic<uint64_t> restarts{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(77 + t);
      // Few stripes in play, so sets collide all the time.
      auto ino = [&] { return static_cast<uint64_t>(rng() % 8) + (rng() % 3) * kStripes; };
      for (int i = 0; i < 3000; ++i) {
        if (t == 0 && i % 100 == 0) {
          auto all = locks.LockAll();
          continue;
        }
        std::vector<uint64_t> want = {ino(), ino()};
        const uint64_t later = ino();
        for (;;) {
          auto held = locks.Lock(want);
          if (!held.Add(later)) {
            want = held.wanted();
            ++restarts;
            continue;
          }
          break;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  SUCCEED() << restarts.load() << " restarts";
}

}  // namespace
}  // namespace sfs::meta
