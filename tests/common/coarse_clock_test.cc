// CoarseSteadyNow is on steady_clock's epoch: between two precise readings
// around it, less its tick's lag (a tick is at most 10 ms at HZ=100; the
// bound is wide so a descheduled thread cannot fail it).
#include "common/coarse_clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace sfs {
namespace {

TEST(CoarseClockTest, ReadsTheSteadyClockEpoch) {
  using std::chrono::steady_clock;
  for (int i = 0; i < 1000; ++i) {
    const steady_clock::time_point before = steady_clock::now();
    const steady_clock::time_point coarse = CoarseSteadyNow();
    const steady_clock::time_point after = steady_clock::now();
    ASSERT_LE(coarse, after);
    ASSERT_GE(coarse, before - std::chrono::seconds(1));
  }
}

TEST(CoarseClockTest, MovesForward) {
  const auto first = CoarseSteadyNow();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (CoarseSteadyNow() <= first) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the coarse clock never advanced";
  }
}

}  // namespace
}  // namespace sfs
