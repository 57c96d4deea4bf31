#include "client/cache_log.h"

#include <gtest/gtest.h>

namespace sfs::client {
namespace {

TEST(CacheLogTest, NothingIsCachedBeforeTheStreamIsUp) {
  CacheLog log;
  const uint64_t before = log.Begin();
  EXPECT_FALSE(log.MayCache(5, before));
  log.Connected();
  EXPECT_FALSE(log.MayCache(5, before)) << "begun before the MDS granted anything";
  EXPECT_TRUE(log.MayCache(5, log.Begin()));
}

TEST(CacheLogTest, ARevocationThatOvertookItsReplyKeepsItUncached) {
  CacheLog log;
  log.Connected();
  const uint64_t begun = log.Begin();
  log.Revoked({5});
  EXPECT_FALSE(log.MayCache(5, begun));
  EXPECT_TRUE(log.MayCache(6, begun)) << "other inodes are not concerned";
  EXPECT_TRUE(log.MayCache(5, log.Begin())) << "a request sent after it reads the change";
}

TEST(CacheLogTest, ALostStreamEndsAllCaching) {
  CacheLog log;
  log.Connected();
  const uint64_t begun = log.Begin();
  log.Disconnected();
  EXPECT_FALSE(log.connected());
  EXPECT_FALSE(log.MayCache(5, begun));
  EXPECT_FALSE(log.MayCache(5, log.Begin()));
  log.Connected();
  EXPECT_FALSE(log.MayCache(5, begun));
  EXPECT_TRUE(log.MayCache(5, log.Begin()));
}

TEST(CacheLogTest, ForgottenRevocationsMakeOlderRequestsUncacheable) {
  CacheLog log;
  log.Connected();
  const uint64_t early = log.Begin();
  for (uint64_t ino = 0; ino < CacheLog::kRemembered + 10; ++ino) log.Revoked({1000000 + ino});
  // Inode 1000000's revocation is forgotten: a request begun before it
  // may not cache, one begun after all of them may.
  EXPECT_FALSE(log.MayCache(1000000, early));
  EXPECT_TRUE(log.MayCache(1000000, log.Begin()));
}

}  // namespace
}  // namespace sfs::client
