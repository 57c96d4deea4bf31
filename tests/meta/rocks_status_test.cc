#include "meta/rocks_status.h"

#include <gtest/gtest.h>

namespace sfs::meta {
namespace {

int Errno(const rocksdb::Status& s) { return FromRocks(s, "ctx").err(); }

TEST(RocksStatusTest, OkStaysOk) {
  Status s = FromRocks(rocksdb::Status::OK(), "ctx");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.err(), 0);
}

TEST(RocksStatusTest, MapsEachCode) {
  EXPECT_EQ(Errno(rocksdb::Status::NotFound("k")), ENOENT);
  EXPECT_EQ(Errno(rocksdb::Status::NoSpace()), ENOSPC);
  EXPECT_EQ(Errno(rocksdb::Status::IOError("While appending: No space left on device")), ENOSPC);
  EXPECT_EQ(Errno(rocksdb::Status::IOError("read failed")), EIO);
  EXPECT_EQ(Errno(rocksdb::Status::Corruption("bad block")), EIO);
  EXPECT_EQ(Errno(rocksdb::Status::InvalidArgument("x")), EINVAL);
  EXPECT_EQ(Errno(rocksdb::Status::Busy()), EAGAIN);
  EXPECT_EQ(Errno(rocksdb::Status::TimedOut()), EAGAIN);
  EXPECT_EQ(Errno(rocksdb::Status::TryAgain()), EAGAIN);
  EXPECT_EQ(Errno(rocksdb::Status::NotSupported()), EIO);
  EXPECT_EQ(Errno(rocksdb::Status::Aborted()), EIO);
  EXPECT_EQ(Errno(rocksdb::Status::Incomplete()), EIO);
}

TEST(RocksStatusTest, MessageIsContextThenRocksText) {
  rocksdb::Status rs = rocksdb::Status::Corruption("bad block");
  Status s = FromRocks(rs, "meta: read I/5");
  EXPECT_EQ(s.message(), "meta: read I/5: Corruption: bad block");
  EXPECT_EQ(s.message(), "meta: read I/5: " + rs.ToString());
}

}  // namespace
}  // namespace sfs::meta
