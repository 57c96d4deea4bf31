#include "resource/free_space.h"

#include <gtest/gtest.h>

namespace sfs::resource {
namespace {

using namespace std::chrono_literals;
using Clock = FreeSpace::Clock;

TEST(FreeSpaceTest, BeforeAnySampleEverythingIsGranted) {
  FreeSpace space(100);
  EXPECT_FALSE(space.left().has_value());
  EXPECT_TRUE(space.Get(1ULL << 40));
}

TEST(FreeSpaceTest, GrantsInFlightAndTheMarginAreNotGivenTwice) {
  FreeSpace space(100);
  const Clock::time_point t0{};
  space.Sample(1000, t0);
  EXPECT_TRUE(space.Get(600));
  EXPECT_FALSE(space.Get(301));  // 1000 - 600 - 100
  EXPECT_TRUE(space.Get(300));
  EXPECT_EQ(*space.left(), 0);
  space.Cancel(300);  // refused elsewhere, never sent
  EXPECT_EQ(*space.left(), 300);
}

// A completed write counts as used until a sample taken after it shows
// the disk: then the sample alone says.
TEST(FreeSpaceTest, WrittenBytesCountUntilALaterSampleShowsThem) {
  FreeSpace space(0);
  const Clock::time_point t0{};
  space.Sample(1000, t0);
  ASSERT_TRUE(space.Get(400));
  space.Put(400, t0 + 1s);
  EXPECT_EQ(*space.left(), 600);
  space.Sample(900, t0 + 500ms);  // taken before the write ended: still counted
  EXPECT_EQ(*space.left(), 500);
  space.Sample(700, t0 + 2s);  // after: an overwrite may have used only 300
  EXPECT_EQ(*space.left(), 700);
  space.Sample(5000, t0 + 1500ms);  // older than what is known: ignored
  EXPECT_EQ(*space.left(), 700);
}

TEST(FreeSpaceTest, ASampleBetweenWritesOfOneMarkCountsTheLaterOnes) {
  FreeSpace space(0);
  const Clock::time_point t0{};
  space.Sample(1000, t0);
  ASSERT_TRUE(space.Get(100));
  space.Put(100, t0 + 100ms);
  ASSERT_TRUE(space.Get(100));
  space.Put(100, t0 + 105ms);  // within the spacing: the same mark
  // A sample between the two cannot tell whether it shows the second: it
  // counts both as written since.
  space.Sample(900, t0 + 102ms);
  EXPECT_EQ(*space.left(), 700);
  // One after the last write of the mark shows them all.
  space.Sample(800, t0 + 106ms);
  EXPECT_EQ(*space.left(), 800);
}

// A burst of writes, then quiet: the next sample is believed whole.
TEST(FreeSpaceTest, AfterABurstTheNextSampleShowsEverything) {
  FreeSpace space(0);
  const Clock::time_point t0{};
  space.Sample(10000, t0);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(space.Get(100));
    space.Put(100, t0 + std::chrono::microseconds(100 * i));
  }
  EXPECT_EQ(*space.left(), 5000);
  space.Sample(5000, t0 + 1s);
  EXPECT_EQ(*space.left(), 5000);
  space.Sample(9000, t0 + 2s);  // files removed
  EXPECT_EQ(*space.left(), 9000);
}

// A completion told late (its thread waited for the lock) counts as of
// the latest time known: a sample between never takes it as shown.
TEST(FreeSpaceTest, ACompletionToldLateNeverCountsAsShownEarlier) {
  FreeSpace space(0);
  const Clock::time_point t0{};
  space.Sample(1000, t0);
  ASSERT_TRUE(space.Get(100));
  ASSERT_TRUE(space.Get(100));
  space.Put(100, t0 + 100ms);
  space.Put(100, t0 + 115ms);
  space.Put(0, t0 + 99ms);  // late, and earlier than the mark's last
  space.Sample(900, t0 + 105ms);  // saw at most the first write
  EXPECT_EQ(*space.left(), 700);
}

TEST(FreeSpaceTest, AFullOrReadOnlyDiskGrantsNothing) {
  FreeSpace space(0);
  space.Sample(0, Clock::time_point{} + 1s);
  EXPECT_FALSE(space.Get(1));
  EXPECT_TRUE(space.Get(0));
}

// Space freed is granted at once, until a sample that may show it: one
// whose statvfs returned after the free began.
TEST(FreeSpaceTest, FreedSpaceCountsUntilASampleMayShowIt) {
  FreeSpace space(0);
  const Clock::time_point t0{};
  space.Sample(1000, t0, t0 + 1ms);
  ASSERT_TRUE(space.Get(800));
  space.Put(800, t0 + 10ms);
  EXPECT_EQ(*space.left(), 200);
  space.Freed(800, t0 + 20ms);  // the file written is deleted
  EXPECT_EQ(*space.left(), 1000);
  EXPECT_TRUE(space.Get(900));
  space.Cancel(900);
  // A sample asked before the delete began, whose statvfs returned after
  // it: it may or may not show it, so the free no longer counts (low).
  space.Sample(200, t0 + 15ms, t0 + 25ms);
  EXPECT_EQ(space.freed(), 0u);
  EXPECT_EQ(*space.left(), 200);
  // A free begun before the sample in use returned is taken as shown.
  space.Freed(100, t0 + 24ms);
  EXPECT_EQ(*space.left(), 200);
  // One begun after it cannot be in it.
  space.Freed(300, t0 + 30ms);
  EXPECT_EQ(*space.left(), 500);
  // The next sample shows it (it returned after the free began).
  space.Sample(1000, t0 + 40ms, t0 + 41ms);
  EXPECT_EQ(*space.left(), 1000);
}

// Frees told out of order, or merged into a mark, are dropped no later
// than the sample that may show the earliest of them.
TEST(FreeSpaceTest, AFreeMarkIsDroppedWithItsEarliestFree) {
  FreeSpace space(0);
  const Clock::time_point t0{};
  space.Sample(100, t0, t0);
  space.Freed(10, t0 + 100ms);
  space.Freed(20, t0 + 105ms);  // the same mark
  space.Freed(40, t0 + 50ms);   // told late, earlier than the mark
  space.Freed(80, t0 + 300ms);
  EXPECT_EQ(*space.left(), 250);
  space.Sample(100, t0 + 1ms, t0 + 60ms);  // may show the 40
  EXPECT_EQ(*space.left(), 210);
  space.Sample(100, t0 + 2ms, t0 + 102ms);  // may show the 10 (and so its mark)
  EXPECT_EQ(*space.left(), 180);
  space.Sample(100, t0 + 3ms, t0 + 400ms);
  EXPECT_EQ(*space.left(), 100);
  EXPECT_EQ(space.freed(), 0u);
}

// Thousands of frees keep a bounded number of marks, each dropped no later
// than its earliest free allows.
TEST(FreeSpaceTest, ManyFreesStayBoundedAndNeverCountTwice) {
  FreeSpace space(0);
  const Clock::time_point t0{};
  space.Sample(0, t0, t0);
  for (int i = 1; i <= 5000; ++i) space.Freed(1, t0 + std::chrono::milliseconds(100 * i));
  EXPECT_EQ(*space.left(), 5000);
  // A sample that may show the first 2,500: what is left is at most the rest.
  space.Sample(2500, t0 + 1ms, t0 + std::chrono::milliseconds(250000));
  EXPECT_LE(*space.left(), 5000);
  EXPECT_GE(*space.left(), 2500);
}

}  // namespace
}  // namespace sfs::resource
