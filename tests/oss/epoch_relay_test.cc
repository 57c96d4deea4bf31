// The OSS's epoch hub (oss/epoch_relay.h): an OST's scheduler is answered
// by the mount over its stream while one is attached, by the server's own
// hub otherwise, and moves between them by one refusal, never stuck.
#include "oss/epoch_relay.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace sfs::oss {
namespace {

using nrs::Epoch;

struct Sent {
  EpochRelay::Kind kind;
  Epoch epoch;
  nrs::EpochData data;
};

// What one scheduler's callbacks were given.
struct Answers {
  std::vector<Epoch> epochs;
  nrs::EpochCallback Callback() {
    return [this](Epoch next, std::shared_ptr<const nrs::EpochData>) { epochs.push_back(next); };
  }
};

TEST(EpochRelayTest, WithoutAStreamTheServersOwnHubAnswers) {
  EpochRelay relay(std::chrono::seconds(1));
  Answers a;
  relay.NextEpoch(1, nrs::kFirstEpoch, {}, a.Callback());
  ASSERT_EQ(a.epochs.size(), 1u);
  EXPECT_GT(a.epochs[0], 0);
  EXPECT_EQ(relay.StandingOf(1), nrs::Standing::kMember);
}

TEST(EpochRelayTest, WithAStreamTheMountAnswersAndAnEndedStreamRefusesWhatWaits) {
  EpochRelay relay(std::chrono::seconds(1));
  Answers a;
  // In the own hub first (epoch 1 there).
  relay.NextEpoch(1, nrs::kFirstEpoch, {}, a.Callback());
  ASSERT_EQ(a.epochs.size(), 1u);
  std::vector<Sent> sent;
  bool open = true;
  const uint64_t token = relay.Attach(1, [&](EpochRelay::Kind kind, Epoch epoch,
                                             const nrs::EpochData& data) {
    sent.push_back({kind, epoch, data});
    return open;
  });
  // Its next call goes to the mount, as a fresh join there.
  relay.NextEpoch(1, a.epochs[0], {7}, a.Callback());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].kind, EpochRelay::Kind::kNext);
  EXPECT_EQ(sent[0].epoch, nrs::kFirstEpoch);
  EXPECT_EQ(sent[0].data, nrs::EpochData{7});
  EXPECT_EQ(relay.StandingOf(1), nrs::Standing::kAsked);
  EXPECT_EQ(a.epochs.size(), 1u);  // waits for the mount
  // An answer on another stream's token is not its.
  relay.Deliver(1, token + 1, 40, {});
  EXPECT_EQ(a.epochs.size(), 1u);
  relay.Deliver(1, token, 40, {1, 2});
  ASSERT_EQ(a.epochs.size(), 2u);
  EXPECT_EQ(a.epochs[1], 40);
  EXPECT_EQ(relay.StandingOf(1), nrs::Standing::kMember);
  // Asked again, not answered, the stream ends: refused, and the next
  // call is the own hub's again.
  relay.NextEpoch(1, 40, {}, a.Callback());
  EXPECT_EQ(sent.back().epoch, 40);
  relay.Detach(1, token);
  ASSERT_EQ(a.epochs.size(), 3u);
  EXPECT_EQ(a.epochs[2], -ECONNRESET);
  relay.NextEpoch(1, nrs::kFirstEpoch, {}, a.Callback());
  ASSERT_EQ(a.epochs.size(), 4u);
  EXPECT_GT(a.epochs[3], 0);
  EXPECT_EQ(sent.size(), 2u);  // nothing more went to the gone stream
}

TEST(EpochRelayTest, AWriteThatFailsIsARefusalNotAWaitForever) {
  EpochRelay relay(std::chrono::seconds(1));
  relay.Attach(2, [](EpochRelay::Kind, Epoch, const nrs::EpochData&) { return false; });
  Answers a;
  relay.NextEpoch(2, nrs::kFirstEpoch, {}, a.Callback());
  ASSERT_EQ(a.epochs.size(), 1u);
  EXPECT_EQ(a.epochs[0], -ECONNRESET);
}

TEST(EpochRelayTest, LastAndEvictGoToTheMountWhileAttached) {
  EpochRelay relay(std::chrono::seconds(1));
  std::vector<Sent> sent;
  relay.Attach(3, [&](EpochRelay::Kind kind, Epoch epoch, const nrs::EpochData& data) {
    sent.push_back({kind, epoch, data});
    return true;
  });
  relay.Evict(3);
  relay.LastEpoch(3, 12);
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].kind, EpochRelay::Kind::kEvict);
  EXPECT_EQ(sent[1].kind, EpochRelay::Kind::kLast);
  EXPECT_EQ(sent[1].epoch, 12);
  EXPECT_EQ(relay.StandingOf(3), nrs::Standing::kAbsent);
}

TEST(EpochRelayTest, OneAskingTheOwnHubWhenAStreamComesIsSentThere) {
  // Two OSTs in the own hub: the first one's ask waits for the second.
  EpochRelay relay(std::chrono::seconds(1));
  Answers a, b;
  relay.NextEpoch(1, nrs::kFirstEpoch, {}, a.Callback());
  ASSERT_EQ(a.epochs.size(), 1u);
  relay.NextEpoch(2, nrs::kFirstEpoch, {}, b.Callback());  // joins at 1's next ask
  relay.NextEpoch(1, a.epochs.back(), {}, a.Callback());
  ASSERT_EQ(a.epochs.size(), 2u);
  ASSERT_EQ(b.epochs.size(), 1u);
  ASSERT_GT(b.epochs.back(), 0);
  const Epoch current = std::max(a.epochs.back(), b.epochs.back());
  // 1 asks for the next epoch; it waits for 2.
  const size_t answered = a.epochs.size();
  relay.NextEpoch(1, a.epochs.back(), {}, a.Callback());
  relay.Attach(1, [](EpochRelay::Kind, Epoch, const nrs::EpochData&) { return true; });
  // 2 asks: the epoch completes; 1 is refused (EAGAIN) to rejoin through
  // the stream, and the own hub goes on with 2 alone.
  relay.NextEpoch(2, b.epochs.back(), {}, b.Callback());
  ASSERT_GT(a.epochs.size(), answered);
  EXPECT_EQ(a.epochs.back(), -EAGAIN);
  EXPECT_GT(b.epochs.back(), current);
  const size_t b_answered = b.epochs.size();
  relay.NextEpoch(2, b.epochs.back(), {}, b.Callback());
  EXPECT_EQ(b.epochs.size(), b_answered + 1);  // not waiting for 1
}

}  // namespace
}  // namespace sfs::oss
