#include "layout/layout_spec.h"

#include <gtest/gtest.h>

namespace sfs::layout {
namespace {

TEST(LayoutSpecTest, ParsesEveryKeyAndFormatsBack) {
  auto spec = ParseLayoutSpec("stripe_count=3 stripe_size=1M pool=fast osts=3,0,2\n");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->stripe_count, 3);
  EXPECT_EQ(spec->stripe_size, 1u << 20);
  EXPECT_EQ(spec->pool, "fast");
  EXPECT_EQ(spec->osts, (std::vector<uint32_t>{3, 0, 2}));
  EXPECT_EQ(FormatLayoutSpec(*spec), "stripe_count=3 stripe_size=1048576 pool=fast osts=3,0,2");
  auto again = ParseLayoutSpec(FormatLayoutSpec(*spec));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *spec);
}

TEST(LayoutSpecTest, DefaultsAllAndEmpty) {
  auto all = ParseLayoutSpec("stripe_count=-1");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->stripe_count, -1);
  auto empty = ParseLayoutSpec("  ");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(FormatLayoutSpec(*empty), "");
  auto zero = ParseLayoutSpec("stripe_count=0 stripe_size=0 pool=");
  ASSERT_TRUE(zero.ok());
  EXPECT_TRUE(zero->empty());
}

TEST(LayoutSpecTest, RefusesMalformedValues) {
  for (const char* bad :
       {"stripe_count=-2", "stripe_count=2001", "stripe_count=x", "stripe_size=100K",
        "stripe_size=1Q", "pool=-bad", "pool=a/b", "osts=", "osts=1,1", "osts=1-3", "osts=a",
        "colour=blue", "stripe_count", "stripe_count=1 stripe_count=2"}) {
    auto spec = ParseLayoutSpec(bad);
    EXPECT_FALSE(spec.ok()) << bad;
    EXPECT_EQ(spec.err(), EINVAL) << bad;
  }
}

// Lustre's rule: a stripe count and an OST list must agree; -1 or no count
// means "as many as listed". stripe_count=4 osts=1 once became one stripe.
TEST(LayoutSpecTest, CountMustMatchTheOstList) {
  for (const char* bad : {"stripe_count=4 osts=1", "osts=1 stripe_count=4",
                          "stripe_count=1 osts=0,1", "stripe_count=2 osts=0,1,2 pool=p"}) {
    auto spec = ParseLayoutSpec(bad);
    EXPECT_EQ(spec.err(), EINVAL) << bad;
    if (!spec.ok()) {
      EXPECT_NE(spec.status().message().find("osts lists"), std::string::npos)
          << spec.status().message();
    }
  }
  for (const char* good : {"stripe_count=2 osts=3,1", "stripe_count=-1 osts=3,1", "osts=3,1",
                           "stripe_count=0 osts=3,1", "stripe_count=1 osts=2"}) {
    auto spec = ParseLayoutSpec(good);
    ASSERT_TRUE(spec.ok()) << good << ": " << spec.status().message();
    auto again = ParseLayoutSpec(FormatLayoutSpec(*spec));
    ASSERT_TRUE(again.ok()) << good;
    EXPECT_EQ(*again, *spec) << good;
  }
}

}  // namespace
}  // namespace sfs::layout
