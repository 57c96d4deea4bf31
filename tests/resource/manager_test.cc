#include "resource/manager.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace sfs::resource {
namespace {

using namespace std::chrono_literals;
using State = CreditManager::State;

Credit Extent(uint64_t start, uint64_t end, Mode mode, uint64_t file = 7) {
  return Credit{Kind::kExtent, file, start, end, mode};
}

class ManagerTest : public ::testing::Test {
 protected:
  explicit ManagerTest(Tunables tunables = {}) : manager_(NewExtentType(), tunables) {}

  CreditManager::GetResult Get(OwnerId owner, const Credit& wanted, GetFlags flags = {}) {
    return manager_.Get(
        owner, wanted, flags,
        [this](Outcome outcome, Ticket ticket) { decided_.push_back({ticket, outcome}); },
        [this, owner] { ++blocking_runs_[owner]; }, now_);
  }
  // Runs what the manager left for its caller.
  void RunCallbacks() {
    for (auto& callback : manager_.TakeCallbacks()) callback();
  }

  CreditManager manager_;
  Clock::time_point now_{};
  std::vector<std::pair<Ticket, Outcome>> decided_;
  std::map<OwnerId, int> blocking_runs_;  // OnBlocking runs, by the owner that held
};

TEST_F(ManagerTest, AnOwnerAloneCachesTheWholeFileAndNeedsNoMasterAfter) {
  const OwnerId a = manager_.AddOwner("a");
  auto first = Get(a, Extent(0, 4096, Mode::kRead));
  ASSERT_EQ(first.state, State::kGranted);
  manager_.Put(first.ticket, now_);
  EXPECT_EQ(manager_.Stats(a).cached, 1u);
  // Anywhere, either mode: the cached whole-file write credit matches, so
  // even a request that may not ask the master is granted.
  auto later = Get(a, Extent(1 << 30, (1 << 30) + 10, Mode::kWrite), {.non_block_local = true});
  ASSERT_EQ(later.state, State::kGranted);
  EXPECT_EQ(manager_.Stats(kRootOwner).granted, 1u);
  EXPECT_EQ(manager_.Stats(a).held, 1u);
  EXPECT_EQ(manager_.Stats(a).cached, 0u);
}

TEST_F(ManagerTest, ASecondOwnerRevokesTheFirstOnesUnusedCredit) {
  const OwnerId a = manager_.AddOwner("a");
  auto use = Get(a, Extent(0, 10, Mode::kWrite));
  manager_.Put(use.ticket, now_);
  const OwnerId b = manager_.AddOwner("b");
  auto other = Get(b, Extent(100, 200, Mode::kWrite));
  ASSERT_EQ(other.state, State::kGranted);
  RunCallbacks();
  EXPECT_EQ(manager_.Stats(a).revoked, 1u);
  EXPECT_EQ(blocking_runs_[a], 0);  // a held nothing: b waited for nobody
  EXPECT_EQ(manager_.Stats(a).cached, 0u);
  // Two owners now: a write is granted what was asked, so a's next
  // request elsewhere clashes with nothing b has.
  auto again = Get(a, Extent(0, 10, Mode::kWrite));
  EXPECT_EQ(again.state, State::kGranted);
  EXPECT_EQ(manager_.Stats(b).revoked, 0u);
}

TEST_F(ManagerTest, ACreditInUseIsRevokedOnlyWhenPut) {
  const OwnerId a = manager_.AddOwner("a");
  auto held = Get(a, Extent(0, 10, Mode::kWrite));  // granted the whole file
  const OwnerId b = manager_.AddOwner("b");
  auto waits = Get(b, Extent(500, 600, Mode::kWrite));
  ASSERT_EQ(waits.state, State::kQueued);
  RunCallbacks();
  EXPECT_EQ(manager_.Stats(a).revoked, 1u);
  // b waits for a's request, which held the grant b's range is in
  // (though not b's range itself).
  EXPECT_EQ(blocking_runs_[a], 1);
  EXPECT_TRUE(decided_.empty());
  EXPECT_EQ(manager_.Stats(b).pending_out, 1u);
  EXPECT_EQ(manager_.Stats(kRootOwner).pending_in, 1u);
  manager_.Put(held.ticket, now_);
  RunCallbacks();
  ASSERT_EQ(decided_.size(), 1u);
  EXPECT_EQ(decided_[0], std::make_pair(waits.ticket, Outcome::kGranted));
  EXPECT_EQ(manager_.Stats(a).cached, 0u);  // the revoked credit went with the Put
}

// Seed 000's nrs_priority, the credit side: a request that must wait
// runs the OnBlocking of each hold it waits for, once per hold; one that
// waits for nothing, or is denied by a flag, runs none.
TEST_F(ManagerTest, AWaitRunsTheHoldersOnBlockingOnce) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  const OwnerId c = manager_.AddOwner("c");
  auto held = Get(a, Extent(0, 10, Mode::kWrite));
  auto apart = Get(c, Extent(100, 110, Mode::kWrite));
  ASSERT_EQ(held.state, State::kGranted);
  ASSERT_EQ(apart.state, State::kGranted);
  EXPECT_EQ(Get(b, Extent(5, 6, Mode::kRead), {.non_block_local = true}).state, State::kDenied);
  RunCallbacks();
  EXPECT_TRUE(blocking_runs_.empty());
  ASSERT_EQ(Get(b, Extent(5, 6, Mode::kRead)).state, State::kQueued);
  RunCallbacks();
  EXPECT_EQ(blocking_runs_[a], 1);
  EXPECT_EQ(blocking_runs_[c], 0);
  // A second waiter for the same hold: already told.
  ASSERT_EQ(Get(c, Extent(0, 1, Mode::kWrite)).state, State::kQueued);
  RunCallbacks();
  EXPECT_EQ(blocking_runs_[a], 1);
  // The root's own users' holds are told as well (a truncate without a
  // handle).
  manager_.Put(apart.ticket, now_);
  auto truncate = Get(kRootOwner, Extent(200, kWholeRange, Mode::kWrite));
  ASSERT_EQ(truncate.state, State::kGranted);
  ASSERT_EQ(Get(b, Extent(300, 301, Mode::kRead)).state, State::kQueued);
  RunCallbacks();
  EXPECT_EQ(blocking_runs_[kRootOwner], 1);
  // Granted in the end, in order, and nothing runs for a released hold.
  manager_.Put(held.ticket, now_);
  manager_.Put(truncate.ticket, now_);
  RunCallbacks();
  EXPECT_EQ(decided_.size(), 3u);
  EXPECT_EQ(blocking_runs_[a], 1);
}

TEST_F(ManagerTest, ConflictingRequestsAreGrantedInArrivalOrderOthersPass) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  auto first = Get(a, Extent(0, 10, Mode::kWrite));
  auto second = Get(b, Extent(0, 10, Mode::kWrite));
  auto third = Get(a, Extent(5, 15, Mode::kRead));  // clashes with second
  auto elsewhere = Get(b, Extent(100, 110, Mode::kWrite));
  ASSERT_EQ(first.state, State::kGranted);
  ASSERT_EQ(second.state, State::kQueued);
  ASSERT_EQ(third.state, State::kQueued);
  EXPECT_EQ(elsewhere.state, State::kGranted);
  manager_.Put(first.ticket, now_);
  RunCallbacks();
  ASSERT_EQ(decided_.size(), 1u);
  EXPECT_EQ(decided_[0].first, second.ticket);
  manager_.Put(second.ticket, now_);
  RunCallbacks();
  ASSERT_EQ(decided_.size(), 2u);
  EXPECT_EQ(decided_[1].first, third.ticket);
}

TEST_F(ManagerTest, ALaterReadDoesNotOvertakeAQueuedWriteItOverlaps) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  auto reading = Get(a, Extent(0, 100, Mode::kRead));
  auto writing = Get(b, Extent(50, 60, Mode::kWrite));
  auto reading_too = Get(a, Extent(0, 100, Mode::kRead));
  EXPECT_EQ(reading.state, State::kGranted);
  EXPECT_EQ(writing.state, State::kQueued);
  // Shares with the held read, but would starve the write: waits.
  EXPECT_EQ(reading_too.state, State::kQueued);
}

TEST_F(ManagerTest, ReadersBesideOthersCacheTheWholeFileUntilAWriterComes) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  manager_.Put(Get(a, Extent(0, 10, Mode::kRead)).ticket, now_);
  manager_.Put(Get(b, Extent(500, 510, Mode::kRead)).ticket, now_);
  // Each reads anywhere from its own cache now.
  EXPECT_EQ(Get(a, Extent(1000, 1010, Mode::kRead), {.non_block_local = true}).state,
            State::kGranted);
  EXPECT_EQ(Get(b, Extent(7, 8, Mode::kRead), {.non_block_local = true}).state,
            State::kGranted);
  EXPECT_EQ(manager_.Stats(kRootOwner).granted, 2u);
  // A write is not expanded beside others, and takes back what it clashes
  // with once it is no longer in use.
  const OwnerId c = manager_.AddOwner("c");
  auto writing = Get(c, Extent(100, 110, Mode::kWrite));
  EXPECT_EQ(writing.state, State::kQueued);  // a's and b's reads above still hold
  EXPECT_EQ(manager_.Stats(a).revoked, 1u);
  EXPECT_EQ(manager_.Stats(b).revoked, 1u);
}

// A reader whose whole-file credit is being revoked for a waiting write
// gets what it asks for, not a new whole-file credit the write would have
// to revoke again.
TEST_F(ManagerTest, AWaitingWriterIsNotStarvedByExpandedReads) {
  const OwnerId reader = manager_.AddOwner("reader");
  const OwnerId writer = manager_.AddOwner("writer");
  auto first = Get(reader, Extent(0, 10, Mode::kRead));
  ASSERT_EQ(first.state, State::kGranted);
  auto writing = Get(writer, Extent(100, 110, Mode::kWrite));
  ASSERT_EQ(writing.state, State::kQueued);
  auto second = Get(reader, Extent(0, 10, Mode::kRead));  // no overlap with the write
  ASSERT_EQ(second.state, State::kGranted);
  manager_.Put(first.ticket, now_);
  RunCallbacks();
  ASSERT_EQ(decided_.size(), 1u);
  EXPECT_EQ(decided_[0], std::make_pair(writing.ticket, Outcome::kGranted));
}

TEST_F(ManagerTest, ReadsShare) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  EXPECT_EQ(Get(a, Extent(0, 100, Mode::kRead)).state, State::kGranted);
  EXPECT_EQ(Get(b, Extent(50, 150, Mode::kRead)).state, State::kGranted);
  EXPECT_EQ(Get(kRootOwner, Extent(0, 200, Mode::kRead)).state, State::kGranted);
}

TEST_F(ManagerTest, NonBlockLocalIsDeniedWithoutAMatchingCreditAndQueuesNothing) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  EXPECT_EQ(Get(a, Extent(0, 10, Mode::kRead), {.non_block_local = true}).state,
            State::kDenied);
  auto held = Get(a, Extent(0, 10, Mode::kWrite));
  manager_.Put(held.ticket, now_);
  EXPECT_EQ(Get(a, Extent(2, 8, Mode::kRead), {.non_block_local = true}).state,
            State::kGranted);
  // b's use clashes: denied at once rather than queued behind it.
  auto busy = Get(b, Extent(20, 30, Mode::kWrite));
  ASSERT_EQ(busy.state, State::kGranted);
  const OwnerId c = manager_.AddOwner("c");
  EXPECT_EQ(Get(c, Extent(25, 26, Mode::kRead), {.non_block_local = true}).state,
            State::kDenied);
  EXPECT_EQ(manager_.Stats(c).pending_out, 0u);
  EXPECT_EQ(manager_.Stats(kRootOwner).pending_in, 0u);
}

TEST_F(ManagerTest, AnUnusedCreditGoesWhenItsLeaseEnds) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  auto use = Get(a, Extent(0, 10, Mode::kWrite));
  manager_.Put(use.ticket, now_);
  const auto lease = Tunables{}.lease;
  now_ += lease - 1ms;
  auto other = Get(b, Extent(100, 110, Mode::kWrite));
  manager_.Put(other.ticket, now_);
  EXPECT_EQ(manager_.Stats(a).cached, 1u);
  now_ += 1ms;
  manager_.Put(Get(b, Extent(200, 210, Mode::kWrite)).ticket, now_);
  EXPECT_EQ(manager_.Stats(a).cached, 0u);
  EXPECT_EQ(manager_.Stats(a).revoked, 0u);  // reclaimed, not revoked
  EXPECT_EQ(manager_.Stats(b).cached, 2u);   // their leases started later
}

class SmallCacheTest : public ManagerTest {
 protected:
  SmallCacheTest() : ManagerTest(Tunables{.max_cached_per_owner = 2}) {}
};

TEST_F(SmallCacheTest, AnOwnerKeepsOnlyItsMostRecentlyUsedCredits) {
  const OwnerId a = manager_.AddOwner("a");
  manager_.AddOwner("b");  // no whole-file grants: one credit per range
  for (uint64_t i = 0; i < 3; ++i) {
    now_ += 1ms;
    manager_.Put(Get(a, Extent(i * 10, i * 10 + 10, Mode::kWrite)).ticket, now_);
  }
  EXPECT_EQ(manager_.Stats(a).cached, 2u);
  EXPECT_EQ(Get(a, Extent(0, 10, Mode::kWrite), {.non_block_local = true}).state,
            State::kDenied);
  EXPECT_EQ(Get(a, Extent(20, 30, Mode::kWrite), {.non_block_local = true}).state,
            State::kGranted);
}

TEST_F(ManagerTest, ARemovedOwnersWaitsFailAndItsCreditsGo) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  auto held = Get(a, Extent(0, 10, Mode::kWrite));
  auto waiting = Get(b, Extent(0, 10, Mode::kWrite));
  ASSERT_EQ(waiting.state, State::kQueued);
  manager_.RemoveOwner(b, now_);
  RunCallbacks();
  ASSERT_EQ(decided_.size(), 1u);
  EXPECT_EQ(decided_[0], std::make_pair(waiting.ticket, Outcome::kError));
  EXPECT_EQ(Get(b, Extent(50, 60, Mode::kRead)).state, State::kError);
  // a's credit, still in use when a goes, leaves with its Put.
  manager_.RemoveOwner(a, now_);
  EXPECT_EQ(manager_.Stats(kRootOwner).granted, 1u);
  manager_.Put(held.ticket, now_);
  EXPECT_EQ(manager_.Stats(kRootOwner).granted, 0u);
  EXPECT_EQ(manager_.owners(), 0u);
}

TEST_F(ManagerTest, TheRootsOwnUsersRevokeCachedCreditsToo) {
  const OwnerId a = manager_.AddOwner("a");
  manager_.Put(Get(a, Extent(0, 10, Mode::kRead)).ticket, now_);
  auto truncating = Get(kRootOwner, Extent(5, kWholeRange, Mode::kWrite));
  EXPECT_EQ(truncating.state, State::kGranted);
  EXPECT_EQ(manager_.Stats(a).revoked, 1u);
  EXPECT_EQ(manager_.Stats(kRootOwner).held, 1u);
}

TEST_F(ManagerTest, OtherFilesNeverClash) {
  const OwnerId a = manager_.AddOwner("a");
  const OwnerId b = manager_.AddOwner("b");
  EXPECT_EQ(Get(a, Extent(0, 10, Mode::kWrite, 1)).state, State::kGranted);
  EXPECT_EQ(Get(b, Extent(0, 10, Mode::kWrite, 2)).state, State::kGranted);
}

// Random gets and puts from three owners and the root over a small file:
// at no point are two clashing credits held, and each request is granted
// only after every earlier request it clashes with.
TEST_F(ManagerTest, RandomTrafficNeverHoldsClashingCreditsAndKeepsOrder) {
  std::mt19937 random(12345);
  const OwnerId owners[] = {kRootOwner, manager_.AddOwner("a"), manager_.AddOwner("b"),
                            manager_.AddOwner("c")};
  struct Request {
    Credit credit;
    bool granted = false;
  };
  std::map<Ticket, Request> live;  // asked, not yet put
  std::vector<Ticket> order;       // of asking
  auto extent_type = NewExtentType();
  auto check_granted = [&](Ticket ticket) {
    Request& request = live.at(ticket);
    for (const auto& [other_ticket, other] : live) {
      if (other_ticket == ticket || !extent_type->Conflicts(other.credit, request.credit)) {
        continue;
      }
      ASSERT_FALSE(other.granted) << "clashing credits held at once";
      ASSERT_GT(other_ticket, ticket) << "granted before an earlier clashing request";
    }
    request.granted = true;
  };
  for (int step = 0; step < 20000; ++step) {
    now_ += std::chrono::milliseconds(random() % 50);
    const bool put = !live.empty() && random() % 2 == 0;
    if (put) {
      std::vector<Ticket> granted;
      for (const auto& [ticket, request] : live) {
        if (request.granted) granted.push_back(ticket);
      }
      if (!granted.empty()) {
        const Ticket ticket = granted[random() % granted.size()];
        live.erase(ticket);
        manager_.Put(ticket, now_);
        decided_.clear();
        RunCallbacks();
        for (const auto& [ticket2, outcome] : decided_) {
          ASSERT_EQ(outcome, Outcome::kGranted);
          check_granted(ticket2);
        }
        continue;
      }
    }
    const uint64_t start = random() % 64;
    const Credit credit =
        Extent(start, start + 1 + random() % 16, random() % 3 == 0 ? Mode::kWrite : Mode::kRead);
    auto result = Get(owners[random() % 4], credit);
    RunCallbacks();
    ASSERT_TRUE(result.state == State::kGranted || result.state == State::kQueued);
    live[result.ticket] = Request{credit};
    if (result.state == State::kGranted) check_granted(result.ticket);
  }
  EXPECT_GT(manager_.Stats(owners[1]).revoked + manager_.Stats(owners[2]).revoked, 0u);
}

}  // namespace
}  // namespace sfs::resource
