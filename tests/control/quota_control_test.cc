// Quota leases on their timer (QuotaControl, without a mount).
#include "control/quota_control.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace sfs::control {
namespace {

using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    char name[] = "/tmp/sfs-quota-control-XXXXXX";
    path_ = mkdtemp(name);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An OST's unused chunk goes back once its lease is over, though nobody
// reserves for that id again (before, only its next reservation expired
// it).
TEST(QuotaControlTest, AnUnusedChunkGoesBackWhenItsLeaseEndsWithoutAnotherReservation) {
  TempDir dir;
  auto store = meta::MetaStore::Format(dir.path() + "/meta", {});
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  QuotaTiming timing;
  timing.tunables.blocks.lease = 50ms;
  timing.expire_every = 10ms;
  QuotaControl quota(store->get(), 2, timing);
  ASSERT_TRUE(quota.Load().ok());
  ASSERT_TRUE(quota.Set("quota.u.1000", "bhard=1G").ok());
  const QuotaId user{QuotaType::kUser, 1000};
  {
    auto hold = quota.ReserveBytes(QuotaOwner{1000, 1000, 0}, 1000, 1, 4096);
    ASSERT_TRUE(hold.ok()) << hold.status().ToString();
    ASSERT_NE(*hold, nullptr);
  }  // nothing used: the reservation goes back to OST 1's chunk
  ASSERT_GT(quota.BlockStats(user, 1).cached, 0u);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (quota.BlockStats(user, 1).cached > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(quota.BlockStats(user, 1).cached, 0u);
  EXPECT_EQ(quota.BlockStats(user, 1).revoked, 0u);  // expired, not taken for another OST
}

}  // namespace
}  // namespace sfs::control
