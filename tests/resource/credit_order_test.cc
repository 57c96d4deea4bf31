#include <gtest/gtest.h>

#include "resource/credit.h"

namespace sfs::resource {
namespace {

// A write's sequence (docs/design.md, "The total order"): its extent
// credit, then its quota ids in order, then space.
TEST(CreditOrderTest, AWritesCreditsInTheTotalOrderPass) {
  CreditOrder order;
  EXPECT_TRUE(order.Take(Kind::kExtent, 12, 4096));
  EXPECT_TRUE(order.Take(Kind::kQuota, 0));  // user
  EXPECT_TRUE(order.Take(Kind::kQuota, 1));  // group
  EXPECT_TRUE(order.Take(Kind::kSpace));
}

TEST(CreditOrderTest, OutOfOrderIsRefusedAndStopsADebugBuild) {
  auto quota_then_extent = [] {
    CreditOrder order;
    return order.Take(Kind::kQuota, 5) && order.Take(Kind::kExtent, 12);
  };
  auto twice = [] {
    CreditOrder order;
    return order.Take(Kind::kExtent, 12, 0) && order.Take(Kind::kExtent, 12, 0);
  };
  auto ids_backwards = [] {
    CreditOrder order;
    return order.Take(Kind::kQuota, 2) && order.Take(Kind::kQuota, 1);
  };
#ifdef NDEBUG
  EXPECT_FALSE(quota_then_extent());
  EXPECT_FALSE(twice());
  EXPECT_FALSE(ids_backwards());
#else
  EXPECT_DEATH(quota_then_extent(), "total order");
  EXPECT_DEATH(twice(), "total order");
  EXPECT_DEATH(ids_backwards(), "total order");
#endif
}

}  // namespace
}  // namespace sfs::resource
