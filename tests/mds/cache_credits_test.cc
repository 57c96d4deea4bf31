#include "mds/cache_credits.h"

#include <gtest/gtest.h>

namespace sfs::mds {
namespace {

TEST(CacheCreditsTest, AChangeRevokesEveryOtherHolderAndKeepsTheChangers) {
  CacheCredits credits;
  credits.Grant(10, 1);
  credits.Grant(10, 2);
  credits.Grant(10, 3);
  credits.Grant(10, 2);  // twice: one credit
  EXPECT_EQ(credits.size(), 3u);
  auto revoked = credits.Change({10}, {}, 2);
  ASSERT_EQ(revoked.size(), 2u);
  EXPECT_EQ(revoked[1], (Revocation{{10}, {}}));
  EXPECT_EQ(revoked[3], (Revocation{{10}, {}}));
  EXPECT_EQ(credits.size(), 1u);
  EXPECT_EQ(credits.held_by(2), 1u);
  // Nobody else holds it now: a second change revokes nothing.
  EXPECT_TRUE(credits.Change({10}, {}, 2).empty());
  EXPECT_TRUE(credits.Change({10}, {}, 1).count(2));
}

TEST(CacheCreditsTest, DirectoriesAndInodesOfOneChangeMakeOneRevocationPerClient) {
  CacheCredits credits;
  credits.Grant(1, 7);   // a directory
  credits.Grant(20, 7);  // a file in it
  credits.Grant(1, 8);
  auto revoked = credits.Change({20, 1}, {1}, 9);
  ASSERT_EQ(revoked.size(), 2u);
  // The directory once, as a directory, though named as an inode too.
  EXPECT_EQ(revoked[7], (Revocation{{20}, {1}}));
  EXPECT_EQ(revoked[8], (Revocation{{}, {1}}));
  EXPECT_EQ(credits.size(), 0u);
}

TEST(CacheCreditsTest, ASessionThatGoesHoldsNothing) {
  CacheCredits credits;
  for (uint64_t ino = 1; ino <= 100; ++ino) credits.Grant(ino, 4);
  credits.Grant(50, 5);
  EXPECT_EQ(credits.held_by(4), 100u);
  credits.DropSession(4);
  EXPECT_EQ(credits.held_by(4), 0u);
  EXPECT_EQ(credits.size(), 1u);
  auto revoked = credits.Change({50}, {}, 6);
  ASSERT_EQ(revoked.size(), 1u);
  EXPECT_TRUE(revoked.count(5));
}

// A client past its limit gives back what it was granted least recently
// (a grant again counts as recent), and only once it acknowledged.
TEST(CacheCreditsTest, ATrimPicksTheLeastRecentlyGrantedAndEndsThemWhenAcknowledged) {
  CacheCredits credits;
  for (uint64_t ino = 1; ino <= 12; ++ino) credits.Grant(ino, 4);
  credits.Grant(1, 4);  // looked at again: the most recent now
  EXPECT_TRUE(credits.Trim(4, 12, 8).empty());  // not past the limit
  credits.Grant(13, 4);
  auto trimmed = credits.Trim(4, 12, 8);
  std::vector<uint64_t> inodes;
  for (const auto& one : trimmed) inodes.push_back(one.ino);
  EXPECT_EQ(inodes, (std::vector<uint64_t>{2, 3, 4, 5, 6}));
  EXPECT_EQ(credits.held_by(4), 13u);           // held until acknowledged
  EXPECT_TRUE(credits.Trim(4, 12, 8).empty());  // those being trimmed do not count
  // A change meanwhile still revokes a trimmed credit; one granted again
  // meanwhile is kept.
  auto revoked = credits.Change({2}, {}, 9);
  EXPECT_EQ(revoked[4], (Revocation{{2}, {}}));
  credits.Grant(3, 4);
  credits.EndTrim(4, trimmed);
  EXPECT_EQ(credits.held_by(4), 9u);  // 1, 3, 7..13
  EXPECT_TRUE(credits.Change({4, 5, 6}, {}, 9).empty());
  EXPECT_EQ(credits.Change({3}, {}, 9).size(), 1u);
}

// Grants again and again of a few inodes (the order is compacted on the
// way) still trim the least recently granted.
TEST(CacheCreditsTest, ManyGrantsOfAFewInodesTrimTheLeastRecent) {
  CacheCredits credits;
  for (int round = 0; round < 5000; ++round) credits.Grant(1 + round % 3, 4);
  EXPECT_EQ(credits.held_by(4), 3u);
  // Past a limit of 2: one goes, the least recently granted of the three.
  auto trimmed = credits.Trim(4, 2, 2);
  ASSERT_EQ(trimmed.size(), 1u);
  EXPECT_EQ(trimmed[0].ino, 3u);  // the last rounds granted 3 (4997), 1 (4998), 2 (4999)
}

}  // namespace
}  // namespace sfs::mds
