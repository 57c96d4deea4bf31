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

}  // namespace
}  // namespace sfs::ost
