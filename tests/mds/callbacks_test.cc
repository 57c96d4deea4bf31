#include "mds/callbacks.h"

#include <gtest/gtest.h>

#include <vector>

namespace sfs::mds {
namespace {

using namespace std::chrono_literals;

struct Recorded {
  uint64_t id;
  Revocation revocation;
};

class FakeSender : public CallbackSender {
 public:
  void Send(uint64_t id, const Revocation& revocation) override { sent.push_back({id, revocation}); }
  void Renew() override { renewed++; }
  int renewed = 0;
  void Evict() override { evicted = true; }
  std::vector<Recorded> sent;
  bool evicted = false;
};

class CallbackHubTest : public ::testing::Test {
 protected:
  CacheCredits credits_;
  CallbackHub hub_{2s, &credits_};
  CallbackHub::Clock::time_point t0_ = CallbackHub::Clock::time_point{} + 1h;
};

TEST_F(CallbackHubTest, AChangeIsDoneOnceEveryHolderAcknowledged) {
  FakeSender a, b;
  hub_.Attach(1, &a);
  hub_.Attach(2, &b);
  credits_.Grant(10, 1);
  credits_.Grant(10, 2);
  int done = 0;
  hub_.Revoke(credits_.Change({10}, {}, 3), [&] { done++; }, t0_);
  ASSERT_EQ(a.sent.size(), 1u);
  ASSERT_EQ(b.sent.size(), 1u);
  EXPECT_EQ(a.sent[0].revocation.inodes, std::vector<uint64_t>{10});
  hub_.Ack(1, a.sent[0].id);
  EXPECT_EQ(done, 0);
  hub_.Ack(1, b.sent[0].id);  // not its call-back: ignored
  EXPECT_EQ(done, 0);
  hub_.Ack(2, b.sent[0].id);
  EXPECT_EQ(done, 1);
  hub_.Ack(2, b.sent[0].id);  // twice: nothing more
  EXPECT_EQ(done, 1);
  EXPECT_EQ(hub_.outstanding(), 0u);
}

TEST_F(CallbackHubTest, NothingToRevokeIsDoneAtOnce) {
  int done = 0;
  hub_.Revoke({}, [&] { done++; }, t0_);
  EXPECT_EQ(done, 1);
  // A holder without a stream cannot have cached: dropped, not waited for.
  credits_.Grant(10, 5);
  hub_.Revoke(credits_.Change({10}, {}, 3), [&] { done++; }, t0_);
  EXPECT_EQ(done, 2);
  EXPECT_EQ(credits_.held_by(5), 0u);
}

TEST_F(CallbackHubTest, ASilentHolderIsEvictedAtItsDeadlineAndTheChangeGoesOn) {
  FakeSender a, b;
  hub_.Attach(1, &a);
  hub_.Attach(2, &b);
  credits_.Grant(10, 1);
  credits_.Grant(10, 2);
  credits_.Grant(11, 2);
  int done = 0;
  hub_.Revoke(credits_.Change({10}, {}, 3), [&] { done++; }, t0_);
  hub_.Ack(1, a.sent[0].id);
  EXPECT_EQ(hub_.Tick(t0_ + 1s), 0u);
  EXPECT_EQ(done, 0);
  EXPECT_EQ(hub_.Tick(t0_ + 2s), 1u);
  EXPECT_EQ(done, 1);
  EXPECT_TRUE(b.evicted);
  EXPECT_FALSE(a.evicted);
  EXPECT_FALSE(hub_.Attached(2));
  EXPECT_EQ(credits_.held_by(2), 0u) << "its other credits end too";
}

TEST_F(CallbackHubTest, LeasesAreRenewedAtLeastEveryThirdOfALease) {
  FakeSender a;
  hub_.Attach(1, &a);
  EXPECT_EQ(hub_.lease(), std::chrono::milliseconds(1000));  // half the 2 s timeout
  hub_.Tick(t0_);
  EXPECT_EQ(a.renewed, 1);
  hub_.Tick(t0_ + 100ms);
  EXPECT_EQ(a.renewed, 1);
  hub_.Tick(t0_ + 340ms);
  EXPECT_EQ(a.renewed, 2);
  hub_.Tick(t0_ + 700ms);
  EXPECT_EQ(a.renewed, 3);
}

TEST_F(CallbackHubTest, AStreamThatEndsSettlesWhatWaitedForIt) {
  FakeSender a;
  hub_.Attach(1, &a);
  credits_.Grant(10, 1);
  int done = 0;
  hub_.Revoke(credits_.Change({}, {10}, 3), [&] { done++; }, t0_);
  EXPECT_EQ(a.sent[0].revocation.directories, std::vector<uint64_t>{10});
  EXPECT_TRUE(hub_.Detach(1, &a));
  EXPECT_EQ(done, 1);
  EXPECT_EQ(hub_.sent(), 1u);
}

TEST_F(CallbackHubTest, AStreamReplacedByANewerOneOfItsSessionChangesNothingWhenItEnds) {
  FakeSender old_stream, new_stream;
  hub_.Attach(1, &old_stream);
  hub_.Attach(1, &new_stream);  // the client reopened it
  credits_.Grant(10, 1);
  EXPECT_FALSE(hub_.Detach(1, &old_stream));
  EXPECT_TRUE(hub_.Attached(1));
  EXPECT_EQ(credits_.held_by(1), 1u);
  int done = 0;
  hub_.Revoke(credits_.Change({10}, {}, 3), [&] { done++; }, t0_);
  ASSERT_EQ(new_stream.sent.size(), 1u);
  EXPECT_TRUE(old_stream.sent.empty());
  EXPECT_TRUE(hub_.Detach(1, &new_stream));
  EXPECT_EQ(done, 1);
  EXPECT_TRUE(hub_.Detach(1, &new_stream)) << "gone: nothing of the session is left";
}

}  // namespace
}  // namespace sfs::mds
