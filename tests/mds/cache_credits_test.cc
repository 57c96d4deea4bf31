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

}  // namespace
}  // namespace sfs::mds
