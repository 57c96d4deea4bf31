#include "resource/id_ranges.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace sfs::resource {
namespace {

class IdRangesTest : public ::testing::Test {
 protected:
  IdRanges ranges_{100, 10, [this](uint64_t mark) {
                     if (fail_) return Status::Error(ENOSPC, "disk full");
                     persisted_.push_back(mark);
                     return Status::Ok();
                   }};
  std::vector<uint64_t> persisted_;
  bool fail_ = false;
};

TEST_F(IdRangesTest, AnOwnerSpendsItsRangeAndTheMarkIsPersistedFirst) {
  const OwnerId mdt = ranges_.AddOwner("mdt");
  EXPECT_EQ(*ranges_.Take(mdt, 1), 100u);
  EXPECT_EQ(persisted_, std::vector<uint64_t>{110});
  for (uint64_t id = 101; id < 110; ++id) EXPECT_EQ(*ranges_.Take(mdt, 1), id);
  EXPECT_EQ(persisted_.size(), 1u);  // nine more ids, no master
  EXPECT_EQ(*ranges_.Take(mdt, 1), 110u);  // grown in place: nothing skipped
  EXPECT_EQ(persisted_.back(), 120u);
}

TEST_F(IdRangesTest, ALargeRequestIsContiguousAndGrowsTheRange) {
  const OwnerId layouts = ranges_.AddOwner("placement");
  EXPECT_EQ(*ranges_.Take(layouts, 3), 100u);
  EXPECT_EQ(*ranges_.Take(layouts, 25), 103u);  // 7 left, 18 more granted
  EXPECT_EQ(ranges_.mark(), 128u);
  EXPECT_EQ(ranges_.left(layouts), 0u);
}

TEST_F(IdRangesTest, OwnersNeverShareAnIdAndAFailedPersistHandsOutNothing) {
  const OwnerId a = ranges_.AddOwner("a");
  const OwnerId b = ranges_.AddOwner("b");
  std::set<uint64_t> seen;
  for (int i = 0; i < 100; ++i) {
    auto id = ranges_.Take(i % 3 ? a : b, 1 + i % 4);
    ASSERT_TRUE(id.ok());
    for (uint64_t j = 0; j < 1 + static_cast<uint64_t>(i % 4); ++j) {
      EXPECT_TRUE(seen.insert(*id + j).second) << *id + j;
    }
  }
  for (uint64_t id : seen) EXPECT_LT(id, ranges_.mark());
  const uint64_t mark = ranges_.mark();
  ranges_.RemoveOwner(a);  // its unused ids are gone for good
  EXPECT_EQ(ranges_.Take(a, 1).err(), EINVAL);
  fail_ = true;
  while (ranges_.left(b) > 0) ASSERT_TRUE(ranges_.Take(b, 1).ok());
  EXPECT_EQ(ranges_.Take(b, 1).err(), ENOSPC);
  EXPECT_EQ(ranges_.mark(), mark);
  fail_ = false;
  EXPECT_GE(*ranges_.Take(b, 1), mark);
}

TEST_F(IdRangesTest, RaiseSkipsEverythingBelowTheNewMark) {
  const OwnerId a = ranges_.AddOwner("a");
  ASSERT_TRUE(ranges_.Take(a, 1).ok());
  ASSERT_TRUE(ranges_.Raise(500).ok());
  EXPECT_EQ(persisted_.back(), 500u);
  EXPECT_EQ(*ranges_.Take(a, 1), 500u);
  ASSERT_TRUE(ranges_.Raise(200).ok());  // never lowered
  EXPECT_GE(*ranges_.Take(a, 1), 510u);
}

}  // namespace
}  // namespace sfs::resource
