#include "control/space_grants.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <optional>
#include <mutex>
#include <thread>

namespace sfs::control {
namespace {

using namespace std::chrono_literals;
using Clock = SpaceGrants::Clock;

// One OST on its own disk, its sample and destroys set by the test.
struct OneOst {
  OneOst()
      : grants([this](uint32_t) { return Sample(); }, [this](uint32_t) { asked++; },
               [this](uint32_t) { return destroys.load(); }) {}
  ost::SpaceSample Sample() {
    std::lock_guard<std::mutex> lock(mu);
    return sample;
  }
  void SetFree(uint64_t bytes, Clock::time_point at) {
    std::lock_guard<std::mutex> lock(mu);
    ost::SpaceInfo space;
    space.block_size = 1;
    space.total_blocks = 100 << 20;  // a margin of 1 MiB
    space.free_blocks = bytes;
    space.device = 7;
    sample.space = space;
    sample.at = at;
    sample.until = at + 1ms;
  }
  std::mutex mu;
  ost::SpaceSample sample;  // GUARDED_BY(mu)
  std::atomic<int> asked{0};
  std::atomic<uint64_t> destroys{0};
  SpaceGrants grants;
};

constexpr uint64_t kMiB = 1 << 20;

TEST(SpaceGrantsTest, SpaceFreedIsGrantedAgainWithoutASample) {
  OneOst ost;
  ost.SetFree(11 * kMiB, Clock::now() - 1s);  // 10 MiB above the margin
  {
    auto held = ost.grants.Reserve({{0, 8 * kMiB}}, /*may_wait=*/false);
    ASSERT_TRUE(held.ok());
  }  // written: counted used until a later sample
  EXPECT_EQ(ost.grants.Reserve({{0, 8 * kMiB}}, false).err(), ENOSPC);
  ost.grants.Freed(0, 8 * kMiB, Clock::now());  // its file was deleted
  EXPECT_TRUE(ost.grants.Reserve({{0, 8 * kMiB}}, false).ok());
}

// A free that began before the sample in use returned may be in it: not
// credited again.
TEST(SpaceGrantsTest, AFreeTheSampleMayShowIsNotCountedTwice) {
  OneOst ost;
  const auto freed_at = Clock::now() - 1s;
  ost.SetFree(11 * kMiB, freed_at);  // returned 1 ms after the free began
  ASSERT_TRUE(ost.grants.Reserve({{0, kMiB}}, false).ok());  // makes the pool
  ost.grants.Freed(0, 8 * kMiB, freed_at);
  EXPECT_EQ(ost.grants.Reserve({{0, 11 * kMiB}}, false).err(), ENOSPC);
}

// An unlink replies before its objects are destroyed: a refused grant
// waits for the destroys in flight on its OST and is granted what they
// free.
TEST(SpaceGrantsTest, ARefusedGrantWaitsForDestroysInFlight) {
  OneOst ost;
  ost.SetFree(11 * kMiB, Clock::now() - 1s);
  { ASSERT_TRUE(ost.grants.Reserve({{0, 8 * kMiB}}, false).ok()); }
  ost.destroys = 1;
  std::thread destroyer([&] {
    std::this_thread::sleep_for(20ms);
    ost.grants.Freed(0, 8 * kMiB, Clock::now());
    ost.destroys = 0;
  });
  auto held = ost.grants.Reserve({{0, 8 * kMiB}}, /*may_wait=*/true);
  destroyer.join();
  EXPECT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_GE(ost.asked.load(), 1);
}

// Without destroys in flight, the fresh sample decides: a full disk is
// refused once it arrives.
TEST(SpaceGrantsTest, AFreshSampleOfAFullDiskRefuses) {
  OneOst ost;
  ost.SetFree(2 * kMiB, Clock::now() - 1s);
  std::thread sampler([&] {
    while (ost.asked.load() == 0) std::this_thread::sleep_for(1ms);
    ost.SetFree(2 * kMiB, Clock::now());
  });
  auto held = ost.grants.Reserve({{0, 8 * kMiB}}, /*may_wait=*/true);
  sampler.join();
  EXPECT_EQ(held.err(), ENOSPC);
}

// A caller that must not wait (an OST service thread) is answered at once
// when one try decides...
TEST(SpaceGrantsTest, ReserveSoonAnswersAtOnceWhenATryDecides) {
  OneOst ost;
  ost.SetFree(11 * kMiB, Clock::now() - 1s);
  std::optional<std::thread::id> answered_on;
  ost.grants.ReserveSoon({{0, 8 * kMiB}}, [&](SpaceGrants::Granted held) {
    EXPECT_TRUE(held.ok());
    answered_on = std::this_thread::get_id();
  });
  ASSERT_TRUE(answered_on.has_value());
  EXPECT_EQ(*answered_on, std::this_thread::get_id());
  EXPECT_EQ(ost.asked.load(), 0);
}

// ... and a refusal for room, which a fresh sample may undo (a free taken
// as shown by a sample that ran beside it), is waited out on the grants'
// own thread: the caller goes on at once.
TEST(SpaceGrantsTest, ReserveSoonWaitsOutARefusalOnItsOwnThread) {
  OneOst ost;
  ost.SetFree(2 * kMiB, Clock::now() - 1s);
  std::mutex mu;
  std::condition_variable answered;
  std::optional<SpaceGrants::Granted> result;  // GUARDED_BY(mu)
  std::thread::id answered_on;                  // GUARDED_BY(mu)
  ost.grants.ReserveSoon({{0, 8 * kMiB}}, [&](SpaceGrants::Granted held) {
    std::lock_guard<std::mutex> lock(mu);
    result = std::move(held);
    answered_on = std::this_thread::get_id();
    answered.notify_all();
  });
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_FALSE(result.has_value());  // not refused on the caller's thread
  }
  // The sample it asked for shows the room.
  while (ost.asked.load() == 0) std::this_thread::sleep_for(1ms);
  ost.SetFree(20 * kMiB, Clock::now());
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(answered.wait_for(lock, 10s, [&] { return result.has_value(); }));
  EXPECT_TRUE(result->ok()) << result->status().ToString();
  EXPECT_NE(answered_on, std::this_thread::get_id());
}

// Once the waiter is stopped (the mount goes), a refusal is final at once.
TEST(SpaceGrantsTest, ReserveSoonAfterStopRefusesAtOnce) {
  OneOst ost;
  ost.SetFree(2 * kMiB, Clock::now() - 1s);
  ost.grants.StopWaiter();
  std::optional<int> err;
  ost.grants.ReserveSoon({{0, 8 * kMiB}}, [&](SpaceGrants::Granted held) { err = held.err(); });
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(*err, ENOSPC);
}

}  // namespace
}  // namespace sfs::control
