#include "mds/extent_master.h"

#include <gtest/gtest.h>

namespace sfs::mds {
namespace {

using Mode = ExtentMaster::Mode;

TEST(ExtentMasterTest, ReadersShareAndAWriterIsAlone) {
  ExtentMaster master;
  std::vector<ExtentMaster::Grant> conflicts;
  EXPECT_TRUE(master.Ask(9, 1, 1, Mode::kRead, &conflicts));
  EXPECT_TRUE(master.Ask(9, 2, 1, Mode::kRead, &conflicts));
  EXPECT_TRUE(master.Ask(8, 3, 1, Mode::kWrite, &conflicts));  // another file
  EXPECT_FALSE(master.Ask(9, 3, 1, Mode::kWrite, &conflicts));
  ASSERT_EQ(conflicts.size(), 2u);
  for (const auto& grant : conflicts) master.Revoked(9, grant);
  EXPECT_TRUE(master.Ask(9, 3, 1, Mode::kWrite, &conflicts));
  EXPECT_FALSE(master.Ask(9, 1, 1, Mode::kRead, &conflicts));
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].session, 3u);
  // The holder asks again (more, or after a revocation it overtook).
  EXPECT_TRUE(master.Ask(9, 3, 1, Mode::kRead, &conflicts));
}

// A revocation settles only the grant it revoked: the holder granted
// again meanwhile keeps the new grant.
TEST(ExtentMasterTest, ARevocationEndsOnlyTheGrantItRevoked) {
  ExtentMaster master;
  std::vector<ExtentMaster::Grant> conflicts;
  ASSERT_TRUE(master.Ask(9, 1, 1, Mode::kWrite, &conflicts));
  ASSERT_FALSE(master.Ask(9, 2, 1, Mode::kWrite, &conflicts));
  const ExtentMaster::Grant revoked = conflicts.at(0);
  ASSERT_TRUE(master.Ask(9, 1, 1, Mode::kWrite, &conflicts));  // granted again
  master.Revoked(9, revoked);
  EXPECT_FALSE(master.Ask(9, 2, 1, Mode::kWrite, &conflicts));
  EXPECT_EQ(master.size(), 1u);
}

TEST(ExtentMasterTest, ClosesAndEndedStreamsDropWhatTheyHeld) {
  ExtentMaster master;
  std::vector<ExtentMaster::Grant> conflicts;
  ASSERT_TRUE(master.Ask(9, 1, 1, Mode::kWrite, &conflicts));
  ASSERT_TRUE(master.Ask(8, 1, 2, Mode::kWrite, &conflicts));
  ASSERT_TRUE(master.Ask(7, 2, 1, Mode::kWrite, &conflicts));
  master.Closed(7, 2);
  EXPECT_TRUE(master.Ask(7, 3, 1, Mode::kWrite, &conflicts));
  // Session 1's first stream ended: what it was granted under its second
  // stays.
  master.StreamEnded(1, 1);
  EXPECT_TRUE(master.Ask(9, 3, 1, Mode::kWrite, &conflicts));
  EXPECT_FALSE(master.Ask(8, 3, 1, Mode::kWrite, &conflicts));
  master.StreamEnded(1, 2);
  EXPECT_TRUE(master.Ask(8, 3, 1, Mode::kWrite, &conflicts));
}

}  // namespace
}  // namespace sfs::mds
