#include "client/known_dirs.h"

#include <gtest/gtest.h>

namespace sfs::client {
namespace {

TEST(KnownDirsTest, ADirectoryMadeHereIsKnownAndFollowed) {
  CacheLog log;
  log.Connected();
  KnownDirs known;
  const uint64_t begun = log.Begin();
  known.Created(7, begun, log);
  EXPECT_TRUE(known.Absent(7, "a"));
  known.Added(7, "a");
  EXPECT_FALSE(known.Absent(7, "a"));
  EXPECT_TRUE(known.Absent(7, "b"));
  known.Removed(7, "a");
  EXPECT_TRUE(known.Absent(7, "a"));
  EXPECT_FALSE(known.Absent(8, "a"));  // not known: ask the MDS
  known.Added(8, "a");                 // a directory not known stays so
  EXPECT_FALSE(known.Absent(8, "b"));
}

// Known only if no revocation of it came since the call that made it
// began, and forgotten at a revocation, a lost stream, or when too big.
TEST(KnownDirsTest, RevocationsAndLimitsForgetIt) {
  CacheLog log;
  log.Connected();
  KnownDirs known;
  const uint64_t begun = log.Begin();
  log.Revoked({7});  // another client changed it before the reply came
  known.Created(7, begun, log);
  EXPECT_FALSE(known.Absent(7, "a"));
  known.Created(9, log.Begin(), log);
  known.Created(10, log.Begin(), log);
  ASSERT_TRUE(known.Absent(9, "a"));
  known.Forget({9});
  EXPECT_FALSE(known.Absent(9, "a"));
  known.Clear();
  EXPECT_FALSE(known.Absent(10, "a"));
  KnownDirs crowded;
  crowded.Created(11, log.Begin(), log);
  for (size_t i = 0; i < KnownDirs::kMaxNames + 1; ++i) crowded.Added(11, std::to_string(i));
  EXPECT_EQ(crowded.size(), 0u);
  // Nothing is known while the stream is down.
  log.Disconnected();
  KnownDirs down;
  down.Created(12, log.Begin(), log);
  EXPECT_FALSE(down.Absent(12, "a"));
}

}  // namespace
}  // namespace sfs::client
