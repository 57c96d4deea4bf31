#include "resource/counted.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace sfs::resource {
namespace {

using namespace std::chrono_literals;

class CountedTest : public ::testing::Test {
 protected:
  explicit CountedTest(uint64_t total = 1000, CountedTunables tunables = {.chunk = 100})
      : pool_(total, tunables) {}
  // A reservation of `reserved` whose change used `used`: the store's
  // batch charges the usage, then the reservation ends.
  void Spend(OwnerId owner, uint64_t reserved, uint64_t used) {
    pool_.Charge(static_cast<int64_t>(used));
    pool_.Put(owner, reserved, used, now_);
  }
  CountedCredits pool_;
  Clock::time_point now_{};
};

TEST_F(CountedTest, AnOwnerTakesAChunkAndThenSpendsLocally) {
  const OwnerId ost = pool_.AddOwner("ost0");
  ASSERT_TRUE(pool_.Get(ost, 10, now_));
  EXPECT_EQ(pool_.Stats(ost).asked, 1u);
  EXPECT_EQ(pool_.Stats(ost).held, 10u);
  EXPECT_EQ(pool_.Stats(ost).cached, 100u);  // the chunk beyond its need
  Spend(ost, 10, 10);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(pool_.Get(ost, 10, now_));
    Spend(ost, 10, 10);
  }
  EXPECT_EQ(pool_.Stats(ost).asked, 1u);  // every later request was local
  EXPECT_EQ(pool_.Stats(ost).cached, 0u);
  EXPECT_EQ(pool_.total(), 1000 - 110);  // what was spent left the pool
}

TEST_F(CountedTest, AnUnusedReservationGoesBackToTheOwner) {
  const OwnerId ost = pool_.AddOwner("ost0");
  ASSERT_TRUE(pool_.Get(ost, 50, now_));
  Spend(ost, 50, 20);  // a short write
  EXPECT_EQ(pool_.Stats(ost).cached, 130u);
  EXPECT_EQ(pool_.total(), 980);
}

TEST_F(CountedTest, NearTheLimitOtherOwnersChunksAreTakenBack) {
  const OwnerId a = pool_.AddOwner("a");
  const OwnerId b = pool_.AddOwner("b");
  ASSERT_TRUE(pool_.Get(a, 400, now_));
  ASSERT_TRUE(pool_.Get(b, 400, now_));
  const uint64_t b_cached = pool_.Stats(b).cached;
  ASSERT_GT(b_cached, 0u);
  // a needs more than it caches and the root has free: b's unused chunk
  // comes back.
  ASSERT_TRUE(pool_.Get(a, pool_.Stats(a).cached + static_cast<uint64_t>(pool_.free()) + 1, now_));
  EXPECT_EQ(pool_.Stats(b).cached, 0u);
  EXPECT_EQ(pool_.Stats(b).revoked, 1u);
  EXPECT_EQ(pool_.total(), 1000);
}

TEST_F(CountedTest, MoreThanIsLeftIsDeniedAndChangesNothing) {
  const OwnerId a = pool_.AddOwner("a");
  const OwnerId b = pool_.AddOwner("b");
  ASSERT_TRUE(pool_.Get(b, 10, now_));
  const CountedStats before = pool_.Stats(b);
  EXPECT_FALSE(pool_.Get(a, 991, now_));
  EXPECT_EQ(pool_.Stats(b).revoked, 0u);  // not worth taking anything back
  EXPECT_EQ(pool_.Stats(b).cached, before.cached);
  EXPECT_EQ(pool_.Stats(a).held, 0u);
  EXPECT_TRUE(pool_.Get(a, 990, now_));  // exactly what is left
}

TEST_F(CountedTest, ALowerTotalTakesChunksBackAndReservationsPayTheRest) {
  const OwnerId a = pool_.AddOwner("a");
  ASSERT_TRUE(pool_.Get(a, 300, now_));
  pool_.SetTotal(200);  // the limit went down below what a holds
  EXPECT_EQ(pool_.Stats(a).cached, 0u);
  EXPECT_EQ(pool_.free(), -100);
  EXPECT_FALSE(pool_.Get(a, 1, now_));
  pool_.Put(a, 300, 0, now_);  // nothing written: it all comes back
  EXPECT_EQ(pool_.free() + static_cast<int64_t>(pool_.Stats(a).cached), 200);
  EXPECT_EQ(pool_.total(), 200);
}

TEST_F(CountedTest, ReleasedUsageIsFreeAgain) {
  const OwnerId a = pool_.AddOwner("a");
  ASSERT_TRUE(pool_.Get(a, 1000, now_));
  Spend(a, 1000, 1000);
  EXPECT_FALSE(pool_.Get(a, 1, now_));
  pool_.Charge(-300);  // files removed
  EXPECT_TRUE(pool_.Get(a, 300, now_));
}

// Usage that came without a reservation (root is exempt from user and
// group limits) counts all the same: the pool goes below zero and nobody
// else is granted anything until usage falls.
TEST_F(CountedTest, UnreservedUsageOverTheLimitDeniesEveryoneUntilItFalls) {
  const OwnerId a = pool_.AddOwner("a");
  ASSERT_TRUE(pool_.Get(a, 10, now_));
  ASSERT_GT(pool_.Stats(a).cached, 0u);
  pool_.Charge(1200);
  EXPECT_EQ(pool_.Stats(a).cached, 0u);  // its chunk paid part of the debt
  EXPECT_FALSE(pool_.Get(a, 1, now_));
  Spend(a, 10, 10);
  EXPECT_EQ(pool_.total(), 1000 - 1210);
  pool_.Charge(-1210);
  EXPECT_EQ(pool_.total(), 1000);
  EXPECT_TRUE(pool_.Get(a, 1000, now_));
}

// The store charges a change while its reservation is still held: for
// that moment the pool counts it twice, so a request is refused early,
// never granted past the limit.
TEST_F(CountedTest, AChargeBeforeItsReservationEndsIsConservative) {
  const OwnerId a = pool_.AddOwner("a");
  const OwnerId b = pool_.AddOwner("b");
  ASSERT_TRUE(pool_.Get(a, 600, now_));
  pool_.Charge(600);
  EXPECT_FALSE(pool_.Get(b, 400, now_));  // 400 are left, but not yet seen
  pool_.Put(a, 600, 600, now_);
  EXPECT_TRUE(pool_.Get(b, 400, now_));
  EXPECT_FALSE(pool_.Get(b, 1, now_));
}

TEST_F(CountedTest, UnusedChunksGoBackWhenTheirLeaseEnds) {
  const OwnerId a = pool_.AddOwner("a");
  ASSERT_TRUE(pool_.Get(a, 10, now_));
  Spend(a, 10, 10);
  pool_.Expire(now_ + CountedTunables{}.lease - 1ms);
  EXPECT_EQ(pool_.Stats(a).cached, 100u);
  pool_.Expire(now_ + CountedTunables{}.lease);
  EXPECT_EQ(pool_.Stats(a).cached, 0u);
  EXPECT_EQ(pool_.free(), 990);
}

TEST_F(CountedTest, ARemovedOwnerGivesEverythingBack) {
  const OwnerId a = pool_.AddOwner("a");
  ASSERT_TRUE(pool_.Get(a, 10, now_));
  pool_.RemoveOwner(a);
  EXPECT_EQ(pool_.free(), 1000);
  EXPECT_FALSE(pool_.Get(a, 1, now_));
  pool_.Put(a, 10, 10, now_);  // too late: ignored
  EXPECT_EQ(pool_.free(), 1000);
}

// Random reservations from four owners: what is spent never exceeds the
// total, a request is denied only when the total minus what is held is
// short of it, and nothing is created or lost.
TEST_F(CountedTest, RandomTrafficNeverSpendsMoreThanTheTotal) {
  std::mt19937 random(7);
  OwnerId owners[4];
  for (auto& owner : owners) owner = pool_.AddOwner("o");
  struct Reservation {
    OwnerId owner;
    uint64_t amount;
  };
  std::vector<Reservation> open;
  uint64_t spent = 0;
  for (int step = 0; step < 20000; ++step) {
    now_ += std::chrono::milliseconds(random() % 100);
    if (!open.empty() && random() % 2 == 0) {
      const size_t i = random() % open.size();
      const uint64_t used = random() % (open[i].amount + 1);
      Spend(open[i].owner, open[i].amount, used);
      spent += used;
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (random() % 50 == 0 && spent > 0) {
      const uint64_t back = random() % (spent + 1);
      pool_.Charge(-static_cast<int64_t>(back));
      spent -= back;
    } else {
      const OwnerId owner = owners[random() % 4];
      const uint64_t amount = 1 + random() % 60;
      uint64_t held = 0;
      for (const auto& r : open) held += r.amount;
      const bool granted = pool_.Get(owner, amount, now_);
      EXPECT_EQ(granted, spent + held + amount <= 1000) << "step " << step;
      if (granted) open.push_back({owner, amount});
    }
    if (random() % 100 == 0) pool_.Expire(now_);
    ASSERT_EQ(pool_.total() + static_cast<int64_t>(spent), 1000) << "step " << step;
  }
}

}  // namespace
}  // namespace sfs::resource
