#include "ost/execute.h"

#include <gtest/gtest.h>

namespace sfs::ost {
namespace {

TEST(CallerErrnoTest, SpaceStaysEnospcEverythingElseIsEio) {
  EXPECT_EQ(CallerErrno(ENOSPC), ENOSPC);
  EXPECT_EQ(CallerErrno(EDQUOT), ENOSPC);
  EXPECT_EQ(CallerErrno(EFBIG), EFBIG);
  EXPECT_EQ(CallerErrno(EROFS), EROFS);
  for (int err : {EIO, ENOENT, ENOTDIR, ESTALE, EINVAL, EBADF, EPERM}) {
    EXPECT_EQ(CallerErrno(err), EIO) << err;
  }
}

TEST(ExecuteTest, ReadZeroFillsPastEnd) {
  auto backend = NewMemBackend();
  ObjectCache objects(backend.get(), 4);
  IoRequest w;
  w.info.op = nrs::Op::kWrite;
  w.object = std::make_shared<ObjectHandle>(&objects, 1);
  std::string data = "0123456789";
  w.iov = {{data.data(), 4}, {data.data() + 4, 6}};
  w.info.length = 10;
  ASSERT_TRUE(Execute(w, objects).status.ok());

  IoRequest r;
  r.info.op = nrs::Op::kRead;
  r.info.offset = 6;
  r.info.length = 9;
  r.object = w.object;
  std::string back(9, 'x');
  r.iov = {{back.data(), 2}, {back.data() + 2, 3}, {back.data() + 5, 4}};
  Outcome out = Execute(r, objects);
  ASSERT_TRUE(out.status.ok());
  EXPECT_EQ(out.bytes, 9u);
  EXPECT_EQ(back, std::string("6789") + std::string(5, '\0'));
}

TEST(ExecuteTest, TruncateToZeroOfMissingObjectCreatesNothing) {
  auto backend = NewMemBackend();
  ObjectCache objects(backend.get(), 4);
  IoRequest t;
  t.info.op = nrs::Op::kTruncate;
  t.object = std::make_shared<ObjectHandle>(&objects, 9);
  EXPECT_TRUE(Execute(t, objects).status.ok());
  EXPECT_EQ(backend->Open(9, false).err(), ENOENT);
}

}  // namespace
}  // namespace sfs::ost
