// The epoch handler of seed 002 as a pure state machine: every transition,
// eviction, rejoin and refusal, with an injected clock and no threads.
#include "nrs/epoch_handler.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>
#include <vector>

#include "nrs/epoch_hub.h"

namespace sfs::nrs {
namespace {

using std::chrono::milliseconds;

// Concatenation of the parts in participant order is not commutative, so
// the tests use a sum of bytes: associative and commutative.
EpochData Sum(const EpochData& a, const EpochData& b) {
  EpochData out(std::max(a.size(), b.size()), 0);
  for (size_t i = 0; i < a.size(); i++) out[i] += a[i];
  for (size_t i = 0; i < b.size(); i++) out[i] += b[i];
  return out;
}

// What each participant's callbacks received.
struct Recorder {
  std::map<ParticipantId, std::vector<Epoch>> epochs;
  std::map<ParticipantId, std::vector<EpochData>> data;
  EpochCallback For(ParticipantId who) {
    return [this, who](Epoch epoch, std::shared_ptr<const EpochData> reduced) {
      epochs[who].push_back(epoch);
      data[who].push_back(reduced != nullptr ? *reduced : EpochData{});
    };
  }
};

class EpochHandlerTest : public ::testing::Test {
 protected:
  EpochDeliveries Next(ParticipantId who, Epoch epoch, uint8_t value) {
    return eh_.NextEpoch(who, epoch, EpochData{value}, rec_.For(who), now_);
  }
  static void Run(const EpochDeliveries& deliveries) {
    for (const auto& d : deliveries) d.Run();
  }

  TimePoint now_ = TimePoint() + std::chrono::hours(1);
  EpochHandler eh_{Sum, milliseconds(100)};
  Recorder rec_;
};

TEST_F(EpochHandlerTest, ALoneParticipantStartsEpochOneAtOnce) {
  EXPECT_EQ(eh_.state(), EhState::kIdle);
  EXPECT_EQ(eh_.StandingOf(1), Standing::kAbsent);
  Run(Next(1, kFirstEpoch, 7));
  EXPECT_EQ(rec_.epochs[1], std::vector<Epoch>{1});
  EXPECT_EQ(rec_.data[1][0], EpochData{7});
  EXPECT_EQ(eh_.state(), EhState::kWaiting);
  EXPECT_EQ(eh_.epoch(), 1);
  EXPECT_EQ(eh_.StandingOf(1), Standing::kMember);
  EXPECT_FALSE(eh_.deadline().has_value());
  Run(Next(1, 1, 3));
  EXPECT_EQ(rec_.epochs[1], (std::vector<Epoch>{1, 2}));
}

TEST_F(EpochHandlerTest, TheEpochStartsWhenAllHaveAskedWithTheReducedData) {
  Run(Next(1, kFirstEpoch, 1));
  Run(Next(2, kFirstEpoch, 2));
  // 1 got epoch 1 alone; 2 joins the next barrier, which 1 must ask for.
  EXPECT_EQ(rec_.epochs[1], std::vector<Epoch>{1});
  EXPECT_TRUE(rec_.epochs[2].empty());
  EXPECT_EQ(eh_.state(), EhState::kClosing);
  ASSERT_TRUE(eh_.deadline().has_value());
  EXPECT_EQ(*eh_.deadline(), now_ + milliseconds(100));
  EXPECT_EQ(eh_.StandingOf(2), Standing::kAsked);

  Run(Next(1, 1, 10));
  EXPECT_EQ(rec_.epochs[1], (std::vector<Epoch>{1, 2}));
  EXPECT_EQ(rec_.epochs[2], std::vector<Epoch>{2});
  // Both got the same reduction: 10 + 2.
  EXPECT_EQ(rec_.data[1][1], EpochData{12});
  EXPECT_EQ(rec_.data[2][0], EpochData{12});
  EXPECT_EQ(eh_.state(), EhState::kWaiting);

  // Nothing happens until the last one asks, whatever the order.
  Run(Next(2, 2, 5));
  EXPECT_EQ(eh_.state(), EhState::kClosing);
  EXPECT_EQ(rec_.epochs[2].size(), 1u);
  Run(Next(1, 2, 6));
  EXPECT_EQ(rec_.epochs[2], (std::vector<Epoch>{2, 3}));
  EXPECT_EQ(rec_.data[2][1], EpochData{11});
}

TEST_F(EpochHandlerTest, ALateParticipantIsEvictedAfterTheTimeoutAndRejoins) {
  Run(Next(1, kFirstEpoch, 1));
  Run(Next(2, kFirstEpoch, 1));
  Run(Next(1, 1, 1));  // epoch 2 for 1 and 2
  ASSERT_EQ(eh_.epoch(), 2);
  now_ += milliseconds(10);
  Run(Next(1, 2, 4));  // 2 never asks
  Run(eh_.Tick(now_ + milliseconds(99)));
  EXPECT_EQ(eh_.state(), EhState::kClosing) << "not yet";
  EXPECT_EQ(rec_.epochs[1].size(), 2u);
  Run(eh_.Tick(now_ + milliseconds(100)));
  EXPECT_EQ(eh_.evictions(), 1u);
  EXPECT_EQ(eh_.StandingOf(2), Standing::kEvicted);
  // 1's epoch started without 2's data.
  EXPECT_EQ(rec_.epochs[1].back(), 3);
  EXPECT_EQ(rec_.data[1].back(), EpochData{4});
  EXPECT_EQ(eh_.participants(), 1u);

  // 2 comes back with the epoch it knew: told it was evicted...
  Run(Next(2, 2, 9));
  EXPECT_EQ(rec_.epochs[2].back(), -ETIMEDOUT);
  EXPECT_EQ(eh_.StandingOf(2), Standing::kEvicted);
  // ... and rejoins with the first epoch, in the next barrier.
  Run(Next(2, kFirstEpoch, 9));
  EXPECT_EQ(eh_.StandingOf(2), Standing::kAsked);
  Run(Next(1, 3, 1));
  EXPECT_EQ(rec_.epochs[2].back(), 4);
  EXPECT_EQ(rec_.data[2].back(), EpochData{10});
  EXPECT_EQ(eh_.participants(), 2u);
}

TEST_F(EpochHandlerTest, EvictionOfTheLastOneAwaitedStartsTheEpoch) {
  Run(Next(1, kFirstEpoch, 1));
  Run(Next(2, kFirstEpoch, 1));
  Run(Next(1, 1, 1));
  Run(Next(1, 2, 1));
  EXPECT_EQ(eh_.state(), EhState::kClosing);
  Run(eh_.Evict(2, now_));
  EXPECT_EQ(rec_.epochs[1].back(), 3);
  EXPECT_EQ(eh_.StandingOf(2), Standing::kEvicted);
  // An asked participant that is evicted is told at once.
  Run(Next(2, kFirstEpoch, 1));
  Run(eh_.Evict(2, now_));
  EXPECT_EQ(rec_.epochs[2].back(), -ETIMEDOUT);
}

TEST_F(EpochHandlerTest, LastEpochLeavesAndTheRestGoOn) {
  Run(Next(1, kFirstEpoch, 1));
  Run(Next(2, kFirstEpoch, 1));
  Run(Next(1, 1, 1));
  Run(Next(1, 2, 5));
  EpochDeliveries out;
  EXPECT_TRUE(eh_.LastEpoch(2, 2, now_, &out).ok());
  Run(out);
  EXPECT_EQ(rec_.epochs[1].back(), 3);
  EXPECT_EQ(eh_.StandingOf(2), Standing::kAbsent);
  // The last one leaving: IDLE.
  out.clear();
  EXPECT_TRUE(eh_.LastEpoch(1, 3, now_, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(eh_.state(), EhState::kWaiting);
  EXPECT_EQ(eh_.participants(), 0u);
}

TEST_F(EpochHandlerTest, NoParticipantLeftAfterEvictionsMeansIdle) {
  Run(Next(1, kFirstEpoch, 1));
  Run(Next(2, kFirstEpoch, 1));  // 2 asked, 1 has not
  EpochDeliveries out;
  EXPECT_TRUE(eh_.LastEpoch(2, 1, now_, &out).ok());
  Run(out);
  EXPECT_EQ(rec_.epochs[2].back(), -ESHUTDOWN) << "a pending callback is always answered";
  // 1 is the only member and has not asked: the barrier waits for it.
  EXPECT_EQ(eh_.state(), EhState::kClosing);
  Run(eh_.Tick(now_ + milliseconds(100)));
  EXPECT_EQ(eh_.StandingOf(1), Standing::kEvicted);
  EXPECT_EQ(eh_.state(), EhState::kIdle);
  EXPECT_FALSE(eh_.deadline().has_value());
  // And it starts again from IDLE, keeping the epoch count (never reused).
  Run(Next(3, kFirstEpoch, 1));
  EXPECT_EQ(rec_.epochs[3], std::vector<Epoch>{2});
}

TEST_F(EpochHandlerTest, RefusalsAreNegativeErrnosDeliveredAtOnce) {
  Run(Next(1, kFirstEpoch, 1));
  Run(Next(2, kFirstEpoch, 1));
  Run(Next(1, 7, 1));  // wrong epoch number
  EXPECT_EQ(rec_.epochs[1].back(), -EINVAL);
  Run(Next(2, 1, 1));  // asked already
  EXPECT_EQ(rec_.epochs[2].back(), -EALREADY);
  Run(Next(9, 1, 1));  // never joined
  EXPECT_EQ(rec_.epochs[9].back(), -EINVAL);
  Run(eh_.NextEpoch(1, 1, EpochData(kMaxEpochData + 1), rec_.For(1), now_));
  EXPECT_EQ(rec_.epochs[1].back(), -EMSGSIZE);
  // None of them changed anything: 1 can still ask properly.
  Run(Next(1, 1, 1));
  EXPECT_EQ(rec_.epochs[1].back(), 2);
  EpochDeliveries out;
  EXPECT_EQ(eh_.LastEpoch(1, 1, now_, &out).err(), EINVAL);
  EXPECT_EQ(eh_.StandingOf(1), Standing::kAbsent) << "leaves anyway";
}

TEST(LocalEpochHubTest, CompletesAtOnceWithTheCallersOwnData) {
  LocalEpochHub hub;
  std::vector<Epoch> got;
  EpochData seen;
  auto cb = [&](Epoch e, std::shared_ptr<const EpochData> d) {
    got.push_back(e);
    if (d != nullptr) seen = *d;
  };
  hub.NextEpoch(4, kFirstEpoch, EpochData{1, 2}, cb);
  hub.NextEpoch(4, 1, EpochData{3}, cb);
  hub.NextEpoch(4, 5, EpochData{3}, cb);
  EXPECT_EQ(got, (std::vector<Epoch>{1, 2, -EINVAL}));
  EXPECT_EQ(seen, EpochData{3});
  EXPECT_EQ(hub.StandingOf(4), Standing::kMember);
  hub.LastEpoch(4, 2);
  EXPECT_EQ(hub.StandingOf(4), Standing::kAbsent);
}

TEST(SharedEpochHubTest, RunsCallbacksOutsideItsLockSoTheyMayCallAgain) {
  SharedEpochHub hub(Sum, milliseconds(50));
  std::vector<Epoch> got;
  // A participant that asks for the next epoch from inside its callback, as
  // an OST does when it rejoins: would deadlock if the lock were held.
  std::function<void(Epoch, std::shared_ptr<const EpochData>)> cb;
  cb = [&](Epoch e, std::shared_ptr<const EpochData>) {
    got.push_back(e);
    if (got.size() < 3) hub.NextEpoch(1, e, EpochData{1}, cb);
  };
  hub.NextEpoch(1, kFirstEpoch, EpochData{1}, cb);
  EXPECT_EQ(got, (std::vector<Epoch>{1, 2, 3}));
  EXPECT_EQ(hub.epoch(), 3);
  // Eviction through Tick with the hub's own deadline.
  hub.NextEpoch(2, kFirstEpoch, EpochData{1}, [&](Epoch e, auto) { got.push_back(e); });
  hub.Tick(Clock::now() + milliseconds(60));
  EXPECT_EQ(hub.StandingOf(1), Standing::kEvicted);
  EXPECT_EQ(got.back(), 4);
  EXPECT_EQ(hub.evictions(), 1u);
}

}  // namespace
}  // namespace sfs::nrs
