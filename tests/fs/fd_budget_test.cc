#include "fs/fd_budget.h"

#include <gtest/gtest.h>

namespace sfs::fs {
namespace {

// Everything handed out plus what the split reserves fits in the limit.
uint64_t Used(const FdBudget& b, size_t osts, int threads) {
  return b.objects_per_ost * osts + static_cast<uint64_t>(b.rocksdb_files) + 64 + 64 +
         osts * (8 + static_cast<uint64_t>(threads));
}

TEST(FdBudgetTest, SharesFitTheLimit) {
  for (uint64_t limit : {256ull, 1024ull, 4096ull, 65536ull, 1048576ull}) {
    for (size_t osts : {1u, 4u, 16u}) {
      if (limit < 1024 && osts > 4) continue;  // see TinyLimitStillGivesEachOstSomeObjects
      const FdBudget b = SplitDescriptors(limit, osts, 2);
      EXPECT_LE(Used(b, osts, 2), limit) << limit << " " << osts;
      EXPECT_GE(b.rocksdb_files, 20);
      EXPECT_LE(b.rocksdb_files, 1000);
      EXPECT_GE(b.objects_per_ost, 4u);
    }
  }
}

TEST(FdBudgetTest, ObjectsGetWhatIsLeftSplitEvenly) {
  const FdBudget b = SplitDescriptors(1024, 4, 2);
  EXPECT_EQ(b.rocksdb_files, 128);
  // 1024 - 64 - 64 - 128 (read pipes) - 17 (metrics sockets) - 4 * (8 + 2)
  // - 128 = 583, over 4 OSTs.
  EXPECT_EQ(b.objects_per_ost, 145u);
  // A huge limit is capped: more open objects than 65,536 buy nothing.
  EXPECT_EQ(SplitDescriptors(1 << 30, 4, 2).objects_per_ost, 16384u);
}

TEST(FdBudgetTest, TinyLimitStillGivesEachOstSomeObjects) {
  const FdBudget b = SplitDescriptors(64, 8, 2);
  EXPECT_EQ(b.objects_per_ost, 4u);
  EXPECT_EQ(b.rocksdb_files, 20);
}

}  // namespace
}  // namespace sfs::fs
