// AdaptiveMutex: mutual exclusion under contention, try_lock, and waiting
// on it with std::condition_variable_any (what mdt::Service does).
#include "common/adaptive_mutex.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace sfs {
namespace {

TEST(AdaptiveMutexTest, ExcludesUnderContention) {
  AdaptiveMutex mu;
  // A read-modify-write split by a yield: lost updates if two threads were
  // ever inside at once.
  long counter = 0;
  constexpr int kThreads = 4, kRounds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<AdaptiveMutex> lock(mu);
        const long seen = counter;
        if (i % 64 == 0) std::this_thread::yield();
        counter = seen + 1;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, static_cast<long>(kThreads) * kRounds);
}

TEST(AdaptiveMutexTest, TryLockFailsWhileHeldElsewhere) {
  AdaptiveMutex mu;
  std::unique_lock<AdaptiveMutex> held(mu);
  bool got = true;
  std::thread other([&] { got = mu.try_lock(); });
  other.join();
  EXPECT_FALSE(got);
  held.unlock();
  EXPECT_TRUE(mu.try_lock());
  mu.unlock();
}

TEST(AdaptiveMutexTest, WaitsWithConditionVariableAny) {
  AdaptiveMutex mu;
  std::condition_variable_any changed;
  bool ready = false;
  std::thread setter([&] {
    std::lock_guard<AdaptiveMutex> lock(mu);
    ready = true;
    changed.notify_all();
  });
  std::unique_lock<AdaptiveMutex> lock(mu);
  changed.wait(lock, [&] { return ready; });
  EXPECT_TRUE(ready);
  lock.unlock();
  setter.join();
}

}  // namespace
}  // namespace sfs
