#include "common/id_list.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace sfs {
namespace {

TEST(IdListTest, IdsAndRanges) {
  IdList list;
  ASSERT_TRUE(list.Add("uid", "1000-1999").ok());
  ASSERT_TRUE(list.Add("uid", "500").ok());
  ASSERT_TRUE(list.Add("uid", "4294967295-4294967295").ok());
  EXPECT_EQ(list.ToString(), "1000-1999 500 4294967295");
  EXPECT_EQ(list.ToString(","), "1000-1999,500,4294967295");
  for (uint32_t id : {500u, 1000u, 1001u, 1999u, 4294967295u}) EXPECT_TRUE(list.Contains(id)) << id;
  for (uint32_t id : {0u, 499u, 501u, 999u, 2000u, 4294967294u}) {
    EXPECT_FALSE(list.Contains(id)) << id;
  }
  list.Sort();
  EXPECT_EQ(list.ToString(), "500 1000-1999 4294967295");
}

TEST(IdListTest, AWholeRangeIsOneEntry) {
  IdList list;
  ASSERT_TRUE(list.Add("gid", "0-4294967295").ok());
  EXPECT_EQ(list.ranges().size(), 1u);
  EXPECT_TRUE(list.Contains(0));
  EXPECT_TRUE(list.Contains(4294967295u));
}

TEST(IdListTest, SortDropsExactDuplicatesOnly) {
  IdList list;
  for (const char* entry : {"5", "1-9", "5", "1-9", "1-8"})
    ASSERT_TRUE(list.Add("uid", entry).ok());
  list.Sort();
  EXPECT_EQ(list.ToString(), "1-8 1-9 5");
}

TEST(IdListTest, RefusesWhatIsNotAnIdOrRange) {
  for (const char* bad : {"", "-", "-5", "5-", "9-1", "1-2-3", "+5", "0x10", "4294967296",
                          "1-4294967296", " 5", "5 ", "a-b", "1--2"}) {
    IdList list;
    Status s = list.Add("uid", bad);
    EXPECT_EQ(s.err(), EINVAL) << "'" << bad << "'";
    EXPECT_NE(s.message().find("uid"), std::string::npos) << s.message();
    EXPECT_TRUE(list.empty());
  }
}

}  // namespace
}  // namespace sfs
