#include "client/remote_extent.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace sfs::client {
namespace {

using namespace std::chrono_literals;

TEST(RemoteExtentTest, AsksOnceAndKeepsWhatItWasGranted) {
  int asked = 0;
  auto extent = std::make_shared<RemoteExtent>([&](bool) { ++asked; return Status::Ok(); });
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(extent->Acquire(false).ok());
    extent->Release();
  }
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(extent->held(), 1);
  ASSERT_TRUE(extent->Acquire(true).ok());  // more: asks
  extent->Release();
  ASSERT_TRUE(extent->Acquire(false).ok());  // write covers read
  extent->Release();
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(extent->held(), 2);
}

// A revocation waits for the holds in flight; I/O after it asks again.
TEST(RemoteExtentTest, ARevocationWaitsForTheIoInFlight) {
  std::atomic<int> asked{0};
  auto extent = std::make_shared<RemoteExtent>([&](bool) { ++asked; return Status::Ok(); });
  ASSERT_TRUE(extent->Acquire(true).ok());
  std::atomic<bool> revoked{false};
  std::thread revoker([&] {
    extent->Revoke();
    revoked = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(revoked.load());
  extent->Release();
  revoker.join();
  EXPECT_EQ(extent->held(), 0);
  ASSERT_TRUE(extent->Acquire(false).ok());
  extent->Release();
  EXPECT_EQ(asked.load(), 2);
}

// A revocation that overtakes the grant's reply (it found nothing held and
// was acknowledged) voids the grant: the I/O asks again.
TEST(RemoteExtentTest, AGrantOvertakenByARevocationIsAskedAgain) {
  int asked = 0;
  std::shared_ptr<RemoteExtent> extent;
  extent = std::make_shared<RemoteExtent>([&](bool) {
    if (++asked == 1) extent->Revoke();  // arrives while the first ask runs
    return Status::Ok();
  });
  ASSERT_TRUE(extent->Acquire(true).ok());
  extent->Release();
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(extent->held(), 2);
}

TEST(RemoteExtentTest, AFailedAskIsTheIosErrorAndALostStreamDropsIt) {
  bool fail = true;
  auto extent = std::make_shared<RemoteExtent>([&](bool) {
    return fail ? Status::Error(EIO, "mds gone") : Status::Ok();
  });
  EXPECT_EQ(extent->Acquire(true).err(), EIO);
  fail = false;
  ASSERT_TRUE(extent->Acquire(true).ok());
  extent->Release();
  extent->Lost();
  EXPECT_EQ(extent->held(), 0);
}

}  // namespace
}  // namespace sfs::client
