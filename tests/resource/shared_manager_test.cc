#include "resource/shared_manager.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <thread>
#include <vector>

namespace sfs::resource {
namespace {

// Threads write their own mark over a shared range while they hold a write
// credit on it, and readers check the range holds one mark throughout
// their read credit: what the filesystem relies on for untorn I/O.
TEST(SharedCreditManagerTest, HoldersOfClashingCreditsNeverOverlapInTime) {
  SharedCreditManager manager(NewExtentType(), Tunables{}, [] { return Clock::now(); });
  constexpr int kSlots = 64;
  std::vector<std::atomic<int>> slots(kSlots);
  std::atomic<int> torn{0};
  std::atomic<int> queued{0};
  // Held until every thread queued behind it, so the threads meet however
  // the machine schedules them.
  const OwnerId gate = manager.AddOwner("gate");
  auto gate_credit = manager.Get(gate, Credit{Kind::kExtent, 1, 0, kSlots, Mode::kWrite}, {},
                                 [](Outcome, Ticket) {}, nullptr);
  ASSERT_EQ(gate_credit.state, CreditManager::State::kGranted);
  auto worker = [&](int id) {
    const OwnerId owner = manager.AddOwner("t" + std::to_string(id));
    for (int i = 0; i < 2000; ++i) {
      const bool write = (i + id) % 3 == 0;
      const Credit wanted{Kind::kExtent, 1, 0, kSlots, write ? Mode::kWrite : Mode::kRead};
      std::mutex mu;
      std::condition_variable cv;
      bool ready = false;
      auto result = manager.Get(
          owner, wanted, {},
          [&](Outcome outcome, Ticket) {
            std::lock_guard<std::mutex> lock(mu);
            ready = true;
            cv.notify_one();
          },
          nullptr);
      if (result.state == CreditManager::State::kQueued) {
        ++queued;
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return ready; });
      } else {
        ASSERT_EQ(result.state, CreditManager::State::kGranted);
      }
      if (write) {
        for (auto& slot : slots) slot.store(id * 100000 + i);
      } else {
        const int first = slots[0].load();
        for (auto& slot : slots) torn += slot.load() != first;
      }
      manager.Put(result.ticket);
    }
    manager.RemoveOwner(owner);
  };
  std::vector<std::thread> threads;
  for (int id = 1; id <= 4; ++id) threads.emplace_back(worker, id);
  while (queued.load() < 4) std::this_thread::yield();
  manager.Put(gate_credit.ticket);
  manager.RemoveOwner(gate);
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GE(queued.load(), 4);
  EXPECT_EQ(manager.owners(), 0u);
  EXPECT_EQ(manager.Stats(kRootOwner).granted, 0u);
}

}  // namespace
}  // namespace sfs::resource
