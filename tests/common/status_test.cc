#include "common/status.h"

#include <gtest/gtest.h>

namespace sfs {
namespace {

Status FailsWith(int err) { return Status::Error(err, "broken"); }

Result<int> Doubled(Result<int> in) {
  SFS_RETURN_IF_ERROR(in);
  return *in * 2;
}

Status Chain(int err) {
  SFS_RETURN_IF_ERROR(FailsWith(err));
  return Status::Ok();
}

TEST(StatusTest, OkAndError) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().err(), 0);
  Status s = FailsWith(ENOSPC);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.err(), ENOSPC);
  EXPECT_EQ(s.ToString(), "broken (No space left on device)");
  EXPECT_EQ(ErrnoStatus(0, "lost errno").err(), EIO);
  EXPECT_EQ(ErrnoStatus(EACCES, "x").err(), EACCES);
}

TEST(StatusTest, ResultAndEarlyReturn) {
  EXPECT_EQ(*Doubled(21), 42);
  Result<int> failed = Doubled(Status::Error(EINVAL, "bad"));
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(failed.err(), EINVAL);
  EXPECT_EQ(Chain(EIO).err(), EIO);
}

}  // namespace
}  // namespace sfs
