#include "resource/quota.h"

#include <gtest/gtest.h>

#include <random>

namespace sfs::resource {
namespace {

using namespace std::chrono_literals;

constexpr QuotaId kUser{QuotaType::kUser, 1000};
constexpr QuotaId kGroup{QuotaType::kGroup, 100};
constexpr QuotaId kProject{QuotaType::kProject, 7};

// The store's side of a change: usage moves, then the reservation ends.
class QuotaTest : public ::testing::Test {
 protected:
  QuotaTest() : quota_(QuotaTunables{{.chunk = 100, .lease = 30s}, {.chunk = 4, .lease = 30s}}) {
    quota_.SetBlockOwners(2);
  }
  void Store(const std::vector<QuotaId>& ids, int64_t bytes, int64_t inodes) {
    for (const QuotaId& id : ids) {
      QuotaUsage& u = usage_[id];
      u.bytes += bytes;
      u.inodes += inodes;
      quota_.Observe(id, u, now_sec_);
    }
  }
  // A write of `bytes` new bytes through OST `ost`: true if granted.
  bool Write(const std::vector<QuotaId>& ids, size_t ost, uint64_t bytes) {
    QuotaEnforcer::Reservation r;
    if (quota_.ReserveBlocks(ids, ost, bytes, now_, now_sec_, &r)) return false;
    Store(ids, static_cast<int64_t>(bytes), 0);
    quota_.Settle(r, bytes, now_);
    return true;
  }
  QuotaEnforcer quota_;
  std::map<QuotaId, QuotaUsage> usage_;
  Clock::time_point now_{};
  int64_t now_sec_ = 1'000'000;
};

TEST_F(QuotaTest, AHardLimitHoldsExactlyAcrossOsts) {
  quota_.SetLimits(kUser, QuotaLimits{0, 1000, 0, 0}, now_sec_);
  const std::vector<QuotaId> ids{kUser, kGroup};
  int64_t written = 0;
  for (int i = 0; i < 100; ++i) {
    if (Write(ids, i % 2, 30)) written += 30;
  }
  EXPECT_EQ(written, 990);  // 33 writes of 30; the 34th would pass 1000
  EXPECT_TRUE(Write(ids, 0, 10));
  EXPECT_FALSE(Write(ids, 1, 1));
  EXPECT_EQ(quota_.Report(kUser).usage.bytes, 1000);
  // Freed usage is free again, through any OST.
  Store(ids, -500, 0);
  EXPECT_TRUE(Write(ids, 1, 500));
  EXPECT_FALSE(Write(ids, 0, 1));
}

TEST_F(QuotaTest, EachOstSpendsItsChunkWithoutTheMaster) {
  quota_.SetLimits(kUser, QuotaLimits{0, 1'000'000, 0, 0}, now_sec_);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(Write({kUser}, 0, 10));
  // One ask for a chunk of 100 beyond the need, then one per 100 bytes.
  EXPECT_LE(quota_.BlockStats(kUser, 0).asked, 6u);
  EXPECT_EQ(quota_.BlockStats(kUser, 1).asked, 0u);
}

TEST_F(QuotaTest, NearTheLimitAnotherOstsUnusedChunkIsRevoked) {
  quota_.SetLimits(kUser, QuotaLimits{0, 300, 0, 0}, now_sec_);
  ASSERT_TRUE(Write({kUser}, 0, 10));  // OST 0 caches a share of what is free
  const uint64_t cached = quota_.BlockStats(kUser, 0).cached;
  ASSERT_GT(cached, 0u);
  ASSERT_TRUE(Write({kUser}, 1, 290));  // needs OST 0's chunk back
  EXPECT_EQ(quota_.BlockStats(kUser, 0).revoked, 1u);
  EXPECT_EQ(quota_.BlockStats(kUser, 0).cached, 0u);
  EXPECT_FALSE(Write({kUser}, 0, 1));
}

TEST_F(QuotaTest, AllIdsOrNoneAndTheDeniedOneIsNamed) {
  quota_.SetLimits(kUser, QuotaLimits{0, 1000, 0, 0}, now_sec_);
  quota_.SetLimits(kProject, QuotaLimits{0, 50, 0, 0}, now_sec_);
  QuotaEnforcer::Reservation r;
  auto denied = quota_.ReserveBlocks({kUser, kGroup, kProject}, 0, 60, now_, now_sec_, &r);
  ASSERT_TRUE(denied.has_value());
  EXPECT_EQ(*denied, kProject);
  EXPECT_TRUE(r.parts.empty());
  EXPECT_EQ(quota_.BlockStats(kUser, 0).held, 0u);  // the user's part was given back
  EXPECT_FALSE(quota_.ReserveBlocks({kUser, kGroup, kProject}, 0, 50, now_, now_sec_, &r));
  EXPECT_EQ(r.parts.size(), 2u);  // the group has no limit: no part
}

TEST_F(QuotaTest, ASoftLimitHoldsAsHardOnceItsGraceRunsOut) {
  quota_.SetLimits(kUser, QuotaLimits{100, 1000, 0, 0}, now_sec_);
  ASSERT_TRUE(Write({kUser}, 0, 150));  // above soft: the store starts a grace period
  usage_[kUser].block_grace_end = now_sec_ + 60;
  quota_.Observe(kUser, usage_[kUser], now_sec_);
  EXPECT_TRUE(Write({kUser}, 0, 50));
  now_sec_ += 61;
  EXPECT_FALSE(Write({kUser}, 0, 1));
  EXPECT_EQ(quota_.Report(kUser).usage.bytes, 200);
  // Back to or below the soft limit: the store clears the grace end, and
  // writes go on up to the hard limit.
  usage_[kUser].block_grace_end = 0;
  Store({kUser}, -150, 0);
  EXPECT_TRUE(Write({kUser}, 1, 900));
}

TEST_F(QuotaTest, InodesHaveLimitsOfTheirOwn) {
  quota_.SetLimits(kGroup, QuotaLimits{0, 0, 0, 3}, now_sec_);
  for (int i = 0; i < 3; ++i) {
    QuotaEnforcer::Reservation r;
    ASSERT_FALSE(quota_.ReserveInodes({kUser, kGroup}, 1, now_, now_sec_, &r));
    Store({kUser, kGroup}, 0, 1);
    quota_.Settle(r, 1, now_);
  }
  QuotaEnforcer::Reservation r;
  EXPECT_EQ(quota_.ReserveInodes({kUser, kGroup}, 1, now_, now_sec_, &r), kGroup);
  EXPECT_TRUE(Write({kUser, kGroup}, 0, 1'000'000));  // bytes are not limited
}

TEST_F(QuotaTest, UsageAboveANewLimitDeniesUntilItFalls) {
  ASSERT_TRUE(Write({kUser}, 0, 500));  // no limit yet: no reservation, but observed
  quota_.SetLimits(kUser, QuotaLimits{0, 300, 0, 0}, now_sec_);
  EXPECT_FALSE(Write({kUser}, 0, 1));
  Store({kUser}, -250, 0);
  EXPECT_TRUE(Write({kUser}, 0, 50));
  EXPECT_FALSE(Write({kUser}, 0, 1));
  quota_.SetLimits(kUser, QuotaLimits{}, now_sec_);  // removed
  EXPECT_TRUE(Write({kUser}, 0, 1'000'000));
}

TEST_F(QuotaTest, AReservationFromBeforeALimitWasRemadeIsIgnored) {
  quota_.SetLimits(kUser, QuotaLimits{0, 100, 0, 0}, now_sec_);
  QuotaEnforcer::Reservation old;
  ASSERT_FALSE(quota_.ReserveBlocks({kUser}, 0, 80, now_, now_sec_, &old));
  quota_.SetLimits(kUser, QuotaLimits{}, now_sec_);
  quota_.SetLimits(kUser, QuotaLimits{0, 100, 0, 0}, now_sec_);
  quota_.Settle(old, 0, now_);  // belongs to the pool that went
  EXPECT_TRUE(Write({kUser}, 0, 100));
  EXPECT_FALSE(Write({kUser}, 1, 1));
}

// Random writes and frees through two OSTs against a limit that changes:
// usage never passes the limit by a reserved write, and a write is refused
// only when it would.
TEST_F(QuotaTest, RandomTrafficNeverPassesTheLimit) {
  std::mt19937 random(11);
  uint64_t limit = 1000;
  quota_.SetLimits(kUser, QuotaLimits{0, limit, 0, 0}, now_sec_);
  for (int step = 0; step < 20000; ++step) {
    now_ += std::chrono::milliseconds(random() % 50);
    const int64_t used = usage_[kUser].bytes;
    switch (random() % 10) {
      case 0:
        if (used > 0) Store({kUser}, -static_cast<int64_t>(random() % (used + 1)), 0);
        break;
      case 1:
        if (random() % 20 == 0) {
          limit = 500 + random() % 1000;
          quota_.SetLimits(kUser, QuotaLimits{0, limit, 0, 0}, now_sec_);
        }
        break;
      default: {
        const uint64_t bytes = 1 + random() % 80;
        const bool granted = Write({kUser}, random() % 2, bytes);
        EXPECT_EQ(granted, used + static_cast<int64_t>(bytes) <= static_cast<int64_t>(limit))
            << "step " << step << " used " << used << " bytes " << bytes << " limit " << limit;
      }
    }
    if (random() % 100 == 0) quota_.Expire(now_);
  }
}

}  // namespace
}  // namespace sfs::resource
