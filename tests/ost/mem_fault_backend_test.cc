#include <gtest/gtest.h>

#include "ost/backend.h"
#include "tests/ost/test_util.h"

namespace sfs::ost {
namespace {

Status WriteAt(ObjectFile& f, uint64_t offset, std::string data) {
  iovec iov{data.data(), data.size()};
  return f.WriteV(&iov, 1, offset);
}

TEST(MemBackendTest, RoundTripPunchAndHoles) {
  auto backend = NewMemBackend();
  EXPECT_EQ(backend->Open(1, false).err(), ENOENT);
  auto f = std::move(backend->Open(1, true)).value();
  ASSERT_TRUE(WriteAt(*f, 4, "abcdef").ok());
  std::string buf(20, 'x');
  iovec iov[2] = {{buf.data(), 3}, {buf.data() + 3, 17}};
  auto got = f->ReadV(iov, 2, 0);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 10u);
  EXPECT_EQ(buf.substr(0, 10), std::string(4, '\0') + "abcdef");
  ASSERT_TRUE(f->Punch(5, 2).ok());
  got = f->ReadV(iov, 2, 0);
  EXPECT_EQ(buf.substr(0, 10), std::string(4, '\0') + "a" + std::string(2, '\0') + "def");
  EXPECT_EQ(*f->Size(), 10u);
}

TEST(MemBackendTest, EnospcAtCapacity) {
  auto backend = NewMemBackend(8192);
  auto f = std::move(backend->Open(1, true)).value();
  ASSERT_TRUE(WriteAt(*f, 0, std::string(8192, 'a')).ok());
  auto space = backend->Space();
  ASSERT_TRUE(space.ok());
  EXPECT_EQ(space->total_blocks, 2u);
  EXPECT_EQ(space->free_blocks, 0u);
  Status s = WriteAt(*f, 8192, "b");
  EXPECT_EQ(s.err(), ENOSPC);
  EXPECT_EQ(f->Truncate(1 << 20).err(), ENOSPC);
  // Overwriting within the object needs no new space.
  EXPECT_TRUE(WriteAt(*f, 0, "c").ok());
  // Removing frees it for others.
  ASSERT_TRUE(backend->Remove(1).ok());
  auto g = std::move(backend->Open(2, true)).value();
  EXPECT_TRUE(WriteAt(*g, 0, std::string(8192, 'd')).ok());
  EXPECT_TRUE(backend->Remove(3).ok());
}

TEST(FaultBackendTest, InjectsAndClears) {
  std::shared_ptr<FaultInjector> faults;
  auto backend = NewFaultBackend(NewMemBackend(), &faults);
  ASSERT_NE(faults, nullptr);
  auto f = std::move(backend->Open(1, true)).value();
  ASSERT_TRUE(WriteAt(*f, 0, "data").ok());

  faults->FailWrites(ENOSPC);
  EXPECT_EQ(WriteAt(*f, 0, "more").err(), ENOSPC);
  EXPECT_EQ(f->Truncate(0).err(), ENOSPC);
  faults->FailWrites(0);
  EXPECT_TRUE(WriteAt(*f, 4, "more").ok());

  std::string buf(8, 'x');
  iovec iov{buf.data(), buf.size()};
  faults->FailReads(EIO);
  EXPECT_EQ(f->ReadV(&iov, 1, 0).err(), EIO);
  faults->FailReads(0);
  auto got = f->ReadV(&iov, 1, 0);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(buf, "datamore");

  faults->FailSyncs(EIO);
  EXPECT_EQ(f->Sync(false).err(), EIO);
  faults->FailSyncs(0);
  EXPECT_TRUE(f->Sync(true).ok());

  faults->FailOpens(EROFS);
  EXPECT_EQ(backend->Open(2, true).err(), EROFS);
  faults->FailOpens(0);
  EXPECT_TRUE(backend->Open(2, true).ok());
  EXPECT_NE(backend->Describe().find("mem"), std::string::npos);
}

}  // namespace
}  // namespace sfs::ost
