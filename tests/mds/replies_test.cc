#include "mds/replies.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace sfs::mds {
namespace {

using namespace std::chrono_literals;
using Clock = ReplyLedger::Clock;

TEST(ReplyLedgerTest, RecordsBelowTheOldestUnansweredGoInSteps) {
  const Clock::time_point t0{};
  ReplyLedger ledger(20s, t0);
  EXPECT_EQ(ledger.Heard(7, 1, t0), 0u);
  EXPECT_EQ(ledger.Heard(7, ReplyLedger::kDropEvery - 1, t0), 0u);
  EXPECT_EQ(ledger.Heard(7, ReplyLedger::kDropEvery, t0), ReplyLedger::kDropEvery);
  EXPECT_EQ(ledger.Heard(7, ReplyLedger::kDropEvery + 10, t0), 0u);
  // Another client counts on its own.
  EXPECT_EQ(ledger.Heard(8, 3 * ReplyLedger::kDropEvery, t0), 3 * ReplyLedger::kDropEvery);
  EXPECT_EQ(ledger.Heard(7, 2 * ReplyLedger::kDropEvery, t0), 2 * ReplyLedger::kDropEvery);
}

// A client silent for a window loses its records; one heard within it, or
// one with a call running, keeps them; one from before the MDS started has
// a window from the start.
TEST(ReplyLedgerTest, ClientsSilentForAWindowAreGone) {
  const Clock::time_point t0{};
  ReplyLedger ledger(20s, t0);
  ledger.Heard(1, 1, t0 + 5s);
  ledger.Heard(2, 1, t0 + 5s);
  ledger.Begin(2, 9);
  // 3 has records from before the start and is never heard.
  EXPECT_TRUE(ledger.Gone({1, 2, 3}, t0 + 19s).empty());
  EXPECT_EQ(ledger.Gone({1, 2, 3}, t0 + 21s), (std::vector<uint64_t>{3}));
  EXPECT_EQ(ledger.Gone({1, 2}, t0 + 26s), (std::vector<uint64_t>{1}));
  ledger.End(2, 9);
  EXPECT_EQ(ledger.Gone({2}, t0 + 26s), (std::vector<uint64_t>{2}));
  // Heard again later: a fresh window.
  ledger.Heard(1, 1, t0 + 30s);
  EXPECT_TRUE(ledger.Gone({1}, t0 + 40s).empty());
}

// A call of a client whose records are being dropped waits until they
// went (it would find a record about to go, or write one that goes).
TEST(ReplyLedgerTest, ACallWaitsWhileItsClientsRecordsAreDropped) {
  const Clock::time_point t0{};
  ReplyLedger ledger(20s, t0);
  ASSERT_EQ(ledger.Gone({4}, t0 + 21s), (std::vector<uint64_t>{4}));
  std::atomic<bool> began{false};
  std::thread call([&] {
    ledger.Begin(4, 1);
    began = true;
    ledger.End(4, 1);
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(began.load());
  ledger.Dropped(4);
  call.join();
  EXPECT_TRUE(began.load());
}

// A resend that overtakes its original waits until the original ended, so
// it finds the original's record instead of applying the call again.
TEST(ReplyLedgerTest, AResendWaitsForItsOriginal) {
  ReplyLedger ledger(20s, Clock::now());
  ledger.Begin(1, 5);
  ledger.Begin(1, 6);  // another call of the same client does not wait
  std::atomic<bool> resend_began{false};
  std::thread resend([&] {
    ledger.Begin(1, 5);
    resend_began = true;
    ledger.End(1, 5);
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(resend_began.load());
  ledger.End(1, 5);
  resend.join();
  EXPECT_TRUE(resend_began.load());
  ledger.End(1, 6);
}

}  // namespace
}  // namespace sfs::mds
