#include "fs/fuse_workers.h"

#include <gtest/gtest.h>

namespace sfs::fs {
namespace {

// The 4 workers measured best on 2 CPUs stay; beyond, two per CPU.
TEST(FuseWorkersTest, TwoPerCpuAtLeastFour) {
  EXPECT_EQ(FuseWorkersFor(1), 4u);
  EXPECT_EQ(FuseWorkersFor(2), 4u);
  EXPECT_EQ(FuseWorkersFor(3), 6u);
  EXPECT_EQ(FuseWorkersFor(16), 32u);
}

TEST(FuseWorkersTest, UsableCpusIsTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  EXPECT_EQ(UsableCpus(), static_cast<unsigned>(CPU_COUNT(&set)));
  EXPECT_GE(UsableCpus(), 1u);
}

}  // namespace
}  // namespace sfs::fs
