#include "ost/execute.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "tests/ost/test_util.h"

namespace sfs::ost {
namespace {

using testing::Pattern;
using testing::TempDir;

// A pipe with room for 1 MiB, closed on scope exit.
struct TestPipe {
  TestPipe() {
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    EXPECT_GE(fcntl(fds[0], F_SETPIPE_SZ, 1 << 20), 1 << 20);
  }
  ~TestPipe() {
    close(fds[0]);
    close(fds[1]);
  }
  // Everything in it now (it is non-blocking on the read side).
  std::string Drain() {
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    std::string out;
    char buf[65536];
    for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
    return out;
  }
  int fds[2] = {-1, -1};
};

// Writes `data` at `offset` of object `id` through Execute.
void WriteObject(ObjectCache& objects, uint64_t id, uint64_t offset, std::string data) {
  IoRequest w;
  w.info.op = nrs::Op::kWrite;
  w.info.offset = offset;
  w.info.length = data.size();
  w.object = std::make_shared<ObjectHandle>(&objects, id);
  w.iov = {{data.data(), data.size()}};
  ASSERT_TRUE(Execute(w, objects).status.ok());
}

// Reads [offset, offset+length) of object `id` into a pipe through Execute.
Outcome ReadToPipe(ObjectCache& objects, uint64_t id, uint64_t offset, size_t length,
                   TestPipe& pipe, bool must_exist = false) {
  IoRequest r;
  r.info.op = nrs::Op::kRead;
  r.info.offset = offset;
  r.info.length = length;
  r.object = std::make_shared<ObjectHandle>(&objects, id);
  r.pipe = pipe.fds[1];
  r.must_exist = must_exist;
  return Execute(r, objects);
}

// The pipe read path on both kinds of object: spliced from a POSIX object
// file, copied from a memory one; past the object's end and for a never
// created object the pipe gets zeros, never less than asked for.
void ChecksPipeReads(Backend& backend) {
  ObjectCache objects(&backend, 4);
  const std::string data = Pattern(3, 300000);
  WriteObject(objects, 1, 0, data);
  {
    TestPipe pipe;
    Outcome out = ReadToPipe(objects, 1, 4096, 200000, pipe);
    ASSERT_TRUE(out.status.ok()) << out.status.ToString();
    EXPECT_EQ(out.bytes, 200000u);
    EXPECT_EQ(pipe.Drain(), data.substr(4096, 200000));
  }
  {
    TestPipe pipe;  // runs 100000 bytes past the object's end
    Outcome out = ReadToPipe(objects, 1, 250000, 150000, pipe);
    ASSERT_TRUE(out.status.ok()) << out.status.ToString();
    EXPECT_EQ(out.bytes, 150000u);
    EXPECT_EQ(pipe.Drain(), data.substr(250000) + std::string(100000, '\0'));
  }
  {
    TestPipe pipe;  // never created: a hole
    Outcome out = ReadToPipe(objects, 2, 0, 70000, pipe);
    ASSERT_TRUE(out.status.ok()) << out.status.ToString();
    EXPECT_EQ(pipe.Drain(), std::string(70000, '\0'));
  }
  {
    TestPipe pipe;  // recorded as created but missing: lost, never zeros
    Outcome out = ReadToPipe(objects, 3, 0, 70000, pipe, /*must_exist=*/true);
    EXPECT_EQ(out.status.err(), EIO);
    EXPECT_EQ(pipe.Drain(), "");
  }
}

TEST(ExecuteTest, ReadIntoPipeSplicesFromObjectFiles) {
  TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ChecksPipeReads(**backend);
}

TEST(ExecuteTest, ReadIntoPipeCopiesFromObjectsThatCannotBeSpliced) {
  auto backend = NewMemBackend();
  ChecksPipeReads(*backend);
}

TEST(ExecuteTest, ReadIntoPipeReportsAFailingDisk) {
  TempDir dir;
  auto posix = NewPosixBackend(dir.path());
  ASSERT_TRUE(posix.ok());
  std::shared_ptr<FaultInjector> control;
  auto backend = NewFaultBackend(std::move(posix).value(), &control);
  ObjectCache objects(backend.get(), 4);
  WriteObject(objects, 1, 0, Pattern(1, 100000));
  control->FailReads(EIO);
  TestPipe pipe;
  Outcome out = ReadToPipe(objects, 1, 0, 100000, pipe, /*must_exist=*/true);
  EXPECT_EQ(out.status.err(), EIO);
  EXPECT_EQ(pipe.Drain(), "");
}

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

// Truncates, punches and destroys measure what they freed on the disk, so
// free-space grants can give it out again at once.
TEST(ExecuteTest, FreesReportTheAllocationTheyGaveBack) {
  TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ObjectCache objects(backend->get(), 4);
  FreeTracker frees;
  WriteObject(objects, 1, 0, Pattern(1, 1 << 20));
  auto change = [&](nrs::Op op, uint64_t offset, uint64_t length, uint64_t size) {
    IoRequest r;
    r.info.op = op;
    r.info.offset = offset;
    r.info.length = length;
    r.truncate_size = size;
    r.object = std::make_shared<ObjectHandle>(&objects, 1);
    return Execute(r, objects, &frees);
  };
  const auto before = nrs::Clock::now();
  Outcome punched = change(nrs::Op::kPunch, 0, 256 << 10, 0);
  ASSERT_TRUE(punched.status.ok()) << punched.status.ToString();
  EXPECT_EQ(punched.freed, 256u << 10);
  EXPECT_GE(punched.freed_from, before);
  Outcome cut = change(nrs::Op::kTruncate, 0, 0, 512 << 10);
  ASSERT_TRUE(cut.status.ok());
  EXPECT_EQ(cut.freed, 512u << 10);
  Outcome grown = change(nrs::Op::kTruncate, 0, 0, 4 << 20);  // a hole: frees nothing
  EXPECT_EQ(grown.freed, 0u);
  Outcome destroyed = change(nrs::Op::kDestroy, 0, 0, 0);
  ASSERT_TRUE(destroyed.status.ok());
  EXPECT_EQ(destroyed.freed, 256u << 10);  // what was left
  EXPECT_EQ(change(nrs::Op::kDestroy, 0, 0, 0).freed, 0u);  // already gone
}

// Two frees of one object at once each see the other's blocks go: neither
// may be credited, or the free space would be counted twice.
TEST(ExecuteTest, OverlappingFreesOfOneObjectAreNotCredited) {
  FreeTracker frees;
  frees.Begin(7);
  frees.Begin(8);  // another object: does not matter
  EXPECT_TRUE(frees.End(8));
  frees.Begin(7);
  EXPECT_FALSE(frees.End(7));
  frees.Begin(7);  // began while the first still ran
  EXPECT_FALSE(frees.End(7));
  EXPECT_FALSE(frees.End(7));
  frees.Begin(7);  // alone again
  EXPECT_TRUE(frees.End(7));
}

// A write or preallocation that made its object and then failed says so:
// the object exists and its file must record it (so unlink frees it).
TEST(ExecuteTest, AFailedWriteStillSaysItMadeItsObject) {
  std::shared_ptr<FaultInjector> control;
  auto backend = NewFaultBackend(NewMemBackend(), &control);
  ObjectCache objects(backend.get(), 4);
  control->FailWrites(ENOSPC);
  for (nrs::Op op : {nrs::Op::kWrite, nrs::Op::kAllocate}) {
    IoRequest w;
    w.info.op = op;
    w.info.length = 4096;
    std::string data(4096, 'x');
    w.iov = {{data.data(), data.size()}};
    const uint64_t id = op == nrs::Op::kWrite ? 1 : 2;
    w.object = std::make_shared<ObjectHandle>(&objects, id);
    EXPECT_EQ(Execute(w, objects).status.err(), ENOSPC);
    EXPECT_TRUE(w.object_exists) << nrs::OpName(op);
    EXPECT_TRUE(backend->Open(id, false).ok());
  }
  control->FailOpens(EIO);
  IoRequest w;
  w.info.op = nrs::Op::kWrite;
  w.object = std::make_shared<ObjectHandle>(&objects, 3);
  EXPECT_EQ(Execute(w, objects).status.err(), EIO);
  EXPECT_FALSE(w.object_exists);
}

}  // namespace
}  // namespace sfs::ost
