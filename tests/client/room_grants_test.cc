#include "client/room_grants.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <future>
#include <thread>

namespace sfs::client {
namespace {

using namespace std::chrono_literals;
using PerOst = std::vector<std::pair<uint32_t, uint64_t>>;

// A fake MDS: grants each OST asked its bytes + chunk, in one grant.
struct FakeMds {
  uint64_t chunk = 100;
  int refuse_with = 0;
  uint64_t next_id = 1;
  std::vector<std::map<uint32_t, uint64_t>> asks;
  std::vector<uint64_t> heard_done;

  RoomGrants::Ask Ask() {
    return [this](const std::map<uint32_t, uint64_t>& per_ost,
                  const std::vector<uint64_t>& done) -> Result<RoomGrant> {
      asks.push_back(per_ost);
      heard_done.insert(heard_done.end(), done.begin(), done.end());
      if (refuse_with != 0) return Status::Error(refuse_with, "refused");
      RoomGrant grant;
      grant.id = next_id++;
      for (const auto& [ost, bytes] : per_ost) grant.bytes[ost] = bytes + chunk;
      return grant;
    };
  }
};

TEST(RoomGrantsTest, WritesTakeRoomLocallyUntilAGrantRunsOut) {
  FakeMds mds;
  RoomGrants room(mds.Ask());
  for (int i = 0; i < 11; ++i) {  // 11 x 10 bytes on OST 0 and 1 from grants of 110
    auto hold = room.Reserve({{0, 10}, {1, 10}}, true);
    ASSERT_TRUE(hold.ok()) << hold.status().ToString();
    ASSERT_NE(*hold, nullptr);
  }
  ASSERT_EQ(mds.asks.size(), 1u);
  EXPECT_EQ(mds.asks[0], (std::map<uint32_t, uint64_t>{{0, 10}, {1, 10}}));
  // OST 1 alone runs short first; its new grant leaves OST 0's in place.
  ASSERT_TRUE(room.Reserve({{1, 5}}, true).ok());
  ASSERT_EQ(mds.asks.size(), 2u);
  EXPECT_EQ(mds.asks[1], (std::map<uint32_t, uint64_t>{{1, 5}}));
  EXPECT_TRUE(mds.heard_done.empty());  // grant 1 still serves OST 0
  ASSERT_TRUE(room.Reserve({{0, 5}}, true).ok());  // OST 0 runs short: grant 1 is done
  ASSERT_EQ(mds.asks.size(), 3u);
  EXPECT_EQ(mds.heard_done, std::vector<uint64_t>{1});
}

TEST(RoomGrantsTest, AWriteWithNoRoomGrantedYetIsRefusedWhereItMayNotWait) {
  FakeMds mds;
  RoomGrants room(mds.Ask());
  auto refused = room.Reserve({{2, 10}}, /*may_wait=*/false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.err(), ENOSPC);
  EXPECT_TRUE(mds.asks.empty());
  // ReserveSoon asks on a thread of its own and answers there.
  std::promise<bool> answered;
  room.ReserveSoon({{2, 10}}, [&](control::SpaceGate::Granted held) {
    answered.set_value(held.ok() && *held != nullptr);
  });
  EXPECT_TRUE(answered.get_future().get());
  EXPECT_EQ(mds.asks.size(), 1u);
  // Now granted: at once, on the caller's thread.
  bool at_once = false;
  room.ReserveSoon({{2, 10}}, [&](control::SpaceGate::Granted held) { at_once = held.ok(); });
  EXPECT_TRUE(at_once);
  room.StopAsker();
}

TEST(RoomGrantsTest, ARefusalIsTheWritersAndDoneGrantsAreToldAgainAfterAnUnansweredAsk) {
  FakeMds mds;
  mds.chunk = 0;
  RoomGrants room(mds.Ask());
  ASSERT_TRUE(room.Reserve({{3, 10}}, true).ok());  // grant 1, spent
  mds.refuse_with = ENOSPC;
  auto refused = room.Reserve({{3, 10}}, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.err(), ENOSPC);
  EXPECT_EQ(mds.heard_done, std::vector<uint64_t>{1});
  EXPECT_TRUE(room.done_for_tests().empty());  // the refusing MDS heard it
  mds.refuse_with = 0;
  ASSERT_TRUE(room.Reserve({{3, 10}}, true).ok());  // grant 2, spent
  mds.refuse_with = EIO;
  ASSERT_FALSE(room.Reserve({{3, 10}}, true).ok());
  EXPECT_EQ(room.done_for_tests(), std::vector<uint64_t>{2});  // told again next time
}

// A revocation that overtakes the reply of the grant it takes back: the
// grant is not used, and the write asks again.
TEST(RoomGrantsTest, AGrantRevokedBeforeItsReplyCameIsNotUsed) {
  FakeMds mds;
  RoomGrants room(mds.Ask());
  room.Revoke({1});  // grant 1 is not known yet
  ASSERT_TRUE(room.Reserve({{0, 10}}, true).ok());
  EXPECT_EQ(mds.asks.size(), 2u);  // grant 1 dropped, grant 2 used
  EXPECT_EQ(room.held_grants(), 1u);
}

TEST(RoomGrantsTest, ARevocationWaitsForTheWritesInFlight) {
  FakeMds mds;
  RoomGrants room(mds.Ask());
  auto hold = room.Reserve({{0, 10}}, true);
  ASSERT_TRUE(hold.ok());
  std::atomic<bool> revoked{false};
  std::thread revoker([&] {
    room.Revoke({1});
    revoked = true;
  });
  // Once the revocation is under way it waits (the hold below is in flight).
  while (room.revoking_for_tests() == 0) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(revoked.load());
  ASSERT_TRUE(room.Reserve({{0, 10}}, true).ok());  // not from the grant being revoked
  EXPECT_EQ(mds.asks.size(), 2u);
  hold->reset();
  revoker.join();
  EXPECT_EQ(room.held_grants(), 1u);
  EXPECT_TRUE(room.done_for_tests().empty());
}

TEST(RoomGrantsTest, ALostStreamForgetsEveryGrant) {
  FakeMds mds;
  RoomGrants room(mds.Ask());
  auto hold = room.Reserve({{0, 10}}, true);
  ASSERT_TRUE(hold.ok());
  room.Forget();
  EXPECT_EQ(room.held_grants(), 0u);
  hold->reset();
  EXPECT_TRUE(room.done_for_tests().empty());
  ASSERT_TRUE(room.Reserve({{0, 10}}, true).ok());
  EXPECT_EQ(mds.asks.size(), 2u);
}

}  // namespace
}  // namespace sfs::client
