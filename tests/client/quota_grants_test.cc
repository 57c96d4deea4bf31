#include "client/quota_grants.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <thread>

namespace sfs::client {
namespace {

using namespace std::chrono_literals;

const control::QuotaOwner kOwner{1000, 1000, 0};

// A fake MDS: grants `bytes + chunk` (or refuses), records what it heard.
struct FakeMds {
  uint64_t chunk = 100;
  bool unlimited = false;
  int refuse_with = 0;
  uint64_t next_id = 1;
  std::vector<uint64_t> asked_bytes;
  std::vector<uint64_t> heard_done;
  std::function<void()> during_ask;

  QuotaGrants::Ask Ask() {
    return [this](const control::QuotaOwner&, uint32_t, size_t, uint64_t bytes,
                  const std::vector<uint64_t>& done) -> Result<QuotaGrant> {
      asked_bytes.push_back(bytes);
      heard_done.insert(heard_done.end(), done.begin(), done.end());
      if (during_ask) during_ask();
      if (refuse_with != 0) return Status::Error(refuse_with, "refused");
      return QuotaGrant{next_id++, bytes + chunk, unlimited};
    };
  }
};

TEST(QuotaGrantsTest, WritesSpendAGrantLocallyAndTellItDoneWithTheNextAsk) {
  FakeMds mds;
  QuotaGrants grants(mds.Ask());
  for (int i = 0; i < 11; ++i) {  // 11 x 10 bytes from a grant of 110
    auto hold = grants.ReserveBytes(kOwner, 1000, 0, 10);
    ASSERT_TRUE(hold.ok());
    ASSERT_NE(*hold, nullptr);
    (*hold)->Use(10);
  }
  EXPECT_EQ(mds.asked_bytes.size(), 1u);
  auto more = grants.ReserveBytes(kOwner, 1000, 0, 10);  // spent: asks again
  ASSERT_TRUE(more.ok());
  ASSERT_EQ(mds.asked_bytes.size(), 2u);
  EXPECT_EQ(mds.heard_done, std::vector<uint64_t>{1});
  EXPECT_EQ(grants.held_grants(), 1u);
}

// What a write did not use goes back to the grant's room.
TEST(QuotaGrantsTest, AnUnusedReservationReturnsToItsGrant) {
  FakeMds mds;
  QuotaGrants grants(mds.Ask());
  for (int i = 0; i < 50; ++i) {
    auto hold = grants.ReserveBytes(kOwner, 1000, 0, 60);  // grant of 160, nothing used
    ASSERT_TRUE(hold.ok());
  }
  EXPECT_EQ(mds.asked_bytes.size(), 1u);
}

TEST(QuotaGrantsTest, OwnersAndRootCallersHaveGrantsOfTheirOwn) {
  FakeMds mds;
  QuotaGrants grants(mds.Ask());
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 1000, 0, 10).ok());
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 0, 0, 10).ok());  // root: exempt at the MDS
  ASSERT_TRUE(grants.ReserveBytes({1000, 1000, 7}, 1000, 0, 10).ok());
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 1000, 0, 10).ok());
  EXPECT_EQ(mds.asked_bytes.size(), 3u);
}

TEST(QuotaGrantsTest, AnOwnerWithNoLimitAsksOnceAndHoldsNothing) {
  FakeMds mds;
  mds.unlimited = true;
  QuotaGrants grants(mds.Ask());
  for (int i = 0; i < 3; ++i) {
    auto hold = grants.ReserveBytes(kOwner, 1000, 0, 1 << 20);
    ASSERT_TRUE(hold.ok());
    EXPECT_EQ(*hold, nullptr);
  }
  EXPECT_EQ(mds.asked_bytes.size(), 1u);
  grants.Revoke({1});  // a limit was set: the next write asks
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 1000, 0, 1).ok());
  EXPECT_EQ(mds.asked_bytes.size(), 2u);
  EXPECT_TRUE(mds.heard_done.empty());  // the MDS freed the revoked one itself
}

TEST(QuotaGrantsTest, ARefusalIsTheCallersAndDoneGrantsAreToldOnce) {
  FakeMds mds;
  mds.chunk = 0;
  QuotaGrants grants(mds.Ask());
  {
    auto hold = grants.ReserveBytes(kOwner, 1000, 0, 10);
    ASSERT_TRUE(hold.ok());
    (*hold)->Use(10);
  }
  mds.refuse_with = EDQUOT;
  auto refused = grants.ReserveBytes(kOwner, 1000, 0, 10);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.err(), EDQUOT);
  EXPECT_EQ(mds.heard_done, std::vector<uint64_t>{1});
  EXPECT_TRUE(grants.done_for_tests().empty());  // an MDS that refused heard them
  mds.refuse_with = EIO;
  mds.heard_done.clear();
  ASSERT_FALSE(grants.ReserveBytes(kOwner, 1000, 0, 10).ok());
  EXPECT_TRUE(mds.heard_done.empty());
}

TEST(QuotaGrantsTest, DoneGrantsAreToldAgainAfterAnUnansweredAsk) {
  FakeMds mds;
  mds.chunk = 0;
  QuotaGrants grants(mds.Ask());
  {
    auto hold = grants.ReserveBytes(kOwner, 1000, 0, 10);
    ASSERT_TRUE(hold.ok());
  }
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 1000, 0, 20).ok());  // supersedes grant 1
  mds.refuse_with = EIO;
  ASSERT_FALSE(grants.ReserveBytes(kOwner, 1000, 0, 50).ok());  // grant 2 (20) is too small
  // Grant 2 ended with its write (the hold above was a temporary): both done.
  EXPECT_EQ(grants.done_for_tests(), (std::vector<uint64_t>{2}));
  EXPECT_EQ(mds.heard_done, (std::vector<uint64_t>{1, 2}));
}

// A revocation waits for the writes in flight under the grant; the next
// write asks again.
TEST(QuotaGrantsTest, ARevocationWaitsForTheWritesInFlight) {
  FakeMds mds;
  QuotaGrants grants(mds.Ask());
  auto hold = grants.ReserveBytes(kOwner, 1000, 0, 10);
  ASSERT_TRUE(hold.ok());
  std::atomic<bool> revoked{false};
  std::thread revoker([&] {
    grants.Revoke({1});
    revoked = true;
  });
  // Once the revocation is under way it waits (the hold below is in flight).
  while (grants.revoking_for_tests() == 0) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(revoked.load());
  // Meanwhile a write makes no reservation from the grant being revoked.
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 1000, 0, 10).ok());
  EXPECT_EQ(mds.asked_bytes.size(), 2u);
  hold->reset();
  revoker.join();
  EXPECT_TRUE(revoked.load());
  EXPECT_EQ(grants.held_grants(), 1u);  // grant 2
  EXPECT_TRUE(grants.done_for_tests().empty());
}

// A revocation that overtakes the reply of the grant it takes back: the
// grant is not used, and the write asks again.
TEST(QuotaGrantsTest, AGrantRevokedBeforeItsReplyCameIsNotUsed) {
  FakeMds mds;
  QuotaGrants grants(mds.Ask());
  grants.Revoke({1});  // grant 1 is not known yet
  auto hold = grants.ReserveBytes(kOwner, 1000, 0, 10);
  ASSERT_TRUE(hold.ok());
  EXPECT_EQ(mds.asked_bytes.size(), 2u);  // grant 1 dropped, grant 2 used
  EXPECT_EQ(grants.held_grants(), 1u);
  // Taken back before every reply (ids 3 on): EDQUOT after a few asks.
  for (uint64_t id = 3; id < 20; ++id) grants.Revoke({id});
  hold->reset();
  auto refused = grants.ReserveBytes(kOwner, 1000, 0, 200);  // more than grant 2 has
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.err(), EDQUOT);
  EXPECT_EQ(mds.asked_bytes.size(), 6u);  // 2, then 4 taken back
}

TEST(QuotaGrantsTest, ALostStreamForgetsEveryGrant) {
  FakeMds mds;
  QuotaGrants grants(mds.Ask());
  auto hold = grants.ReserveBytes(kOwner, 1000, 0, 10);
  ASSERT_TRUE(hold.ok());
  grants.Forget();
  EXPECT_EQ(grants.held_grants(), 0u);
  hold->reset();  // ends after: told nowhere
  EXPECT_TRUE(grants.done_for_tests().empty());
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 1000, 0, 10).ok());
  EXPECT_EQ(mds.asked_bytes.size(), 2u);
}

// A grant whose ask overlapped a lost stream serves its own write only.
TEST(QuotaGrantsTest, AGrantAskedAcrossALostStreamServesOneWrite) {
  FakeMds mds;
  QuotaGrants grants(mds.Ask());
  mds.during_ask = [&] { grants.Forget(); };
  {
    auto hold = grants.ReserveBytes(kOwner, 1000, 0, 10);
    ASSERT_TRUE(hold.ok());
    ASSERT_NE(*hold, nullptr);
  }
  mds.during_ask = nullptr;
  EXPECT_EQ(grants.done_for_tests(), std::vector<uint64_t>{1});
  ASSERT_TRUE(grants.ReserveBytes(kOwner, 1000, 0, 10).ok());
  EXPECT_EQ(mds.asked_bytes.size(), 2u);
}

}  // namespace
}  // namespace sfs::client
