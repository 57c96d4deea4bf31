// The data path of ost::Service over real backends: concurrency, holes,
// error mapping, object ops and draining on destruction.
#include "ost/local_service.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <thread>

#include "tests/ost/recorder.h"
#include "tests/ost/test_util.h"

namespace sfs::ost {
namespace {

using nrs::Op;
using testing::MakeIo;
using testing::Pattern;
using testing::Recorder;
using testing::TempDir;

std::unique_ptr<Backend> PosixOrDie(const std::string& dir) {
  auto made = NewPosixBackend(dir);
  EXPECT_TRUE(made.ok()) << made.status().ToString();
  return made.ok() ? std::move(made).value() : NewMemBackend();
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

TEST(ServiceTest, ConcurrentWritesReadBackExactly) {
  TempDir dir;
  LocalService service(ServiceOptions{3, 3}, PosixOrDie(dir.path()));
  constexpr int kThreads = 4, kPerThread = 50, kObjectsPerThread = 5;
  constexpr size_t kLen = 8192;

  // Requests on one object share a handle, as the FS layer's would.
  std::map<uint64_t, std::shared_ptr<ObjectHandle>> objects;
  auto id_of = [](int t, int i) { return uint64_t(t) * 1000 + i % kObjectsPerThread; };
  auto offset_of = [](int i) { return uint64_t(i / kObjectsPerThread) * kLen; };
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kObjectsPerThread; ++i) objects[id_of(t, i)] = service.Object(id_of(t, i));
  }

  std::vector<std::string> data(kThreads * kPerThread);
  for (size_t k = 0; k < data.size(); ++k) data[k] = Pattern(k, kLen);
  Recorder writes;
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        int k = t * kPerThread + i;
        service.Submit(
            MakeIo(Op::kWrite, objects[id_of(t, i)], offset_of(i), &data[k], &writes, k, 3000));
      }
    });
  }
  for (auto& s : submitters) s.join();
  ASSERT_TRUE(writes.WaitFor(data.size()));
  for (const auto& d : writes.Results()) {
    EXPECT_EQ(d.err, 0) << "write " << d.tag;
    EXPECT_EQ(d.bytes, kLen);
  }

  std::vector<std::string> back(data.size(), std::string(kLen, 'x'));
  Recorder reads;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      int k = t * kPerThread + i;
      service.Submit(
          MakeIo(Op::kRead, objects[id_of(t, i)], offset_of(i), &back[k], &reads, k, 1000));
    }
  }
  ASSERT_TRUE(reads.WaitFor(back.size()));
  for (size_t k = 0; k < back.size(); ++k) {
    EXPECT_EQ(reads.Only(k).err, 0);
    EXPECT_TRUE(back[k] == data[k]) << "read back differs for write " << k;
  }
  EXPECT_EQ(service.Counters().errors, 0u);
}

TEST(ServiceTest, ReadsOfHolesAreZeros) {
  TempDir dir;
  LocalService service(ServiceOptions{0, 2}, PosixOrDie(dir.path()));
  Recorder rec;
  std::string missing(5000, 'x');
  service.Submit(MakeIo(Op::kRead, service.Object(1), 0, &missing, &rec, 1, 1024));
  ASSERT_TRUE(rec.WaitFor(1));
  EXPECT_EQ(rec.Only(1).err, 0);
  EXPECT_EQ(rec.Only(1).bytes, 5000u);
  EXPECT_EQ(missing, std::string(5000, '\0'));
  EXPECT_FALSE(Exists(dir.path() + "/objects/01/0000000000000001"));

  auto object = service.Object(2);
  std::string small = "written";
  service.Submit(MakeIo(Op::kWrite, object, 100, &small, &rec, 2));
  ASSERT_TRUE(rec.WaitFor(2));
  std::string back(8192, 'x');
  service.Submit(MakeIo(Op::kRead, object, 0, &back, &rec, 3, 50));
  ASSERT_TRUE(rec.WaitFor(3));
  EXPECT_EQ(rec.Only(3).bytes, 8192u);
  EXPECT_EQ(back, std::string(100, '\0') + "written" + std::string(8192 - 107, '\0'));
}

TEST(ServiceTest, FaultsReachTheCallerAsEnospcOrEioWhileOthersServe) {
  TempDir bad_dir, good_dir;
  std::shared_ptr<FaultInjector> faults;
  LocalService bad(ServiceOptions{1, 2}, NewFaultBackend(PosixOrDie(bad_dir.path()), &faults));
  LocalService good(ServiceOptions{2, 2}, PosixOrDie(good_dir.path()));
  Recorder bad_rec, good_rec;
  std::string buf = Pattern(9, 4096);

  struct Case {
    void (FaultInjector::*set)(int);
    int injected;
    int seen;
  };
  const Case cases[] = {
      {&FaultInjector::FailWrites, ENOSPC, ENOSPC}, {&FaultInjector::FailWrites, EDQUOT, ENOSPC},
      {&FaultInjector::FailWrites, EIO, EIO},       {&FaultInjector::FailOpens, ENOTDIR, EIO},
      {&FaultInjector::FailOpens, EROFS, EROFS},
  };
  uint64_t tag = 0;
  for (const Case& c : cases) {
    ((*faults).*c.set)(c.injected);
    bad.Submit(MakeIo(Op::kWrite, bad.Object(tag), 0, &buf, &bad_rec, tag));
    good.Submit(MakeIo(Op::kWrite, good.Object(tag), 0, &buf, &good_rec, tag));
    ++tag;
    ASSERT_TRUE(bad_rec.WaitFor(tag));
    ASSERT_TRUE(good_rec.WaitFor(tag));
    EXPECT_EQ(bad_rec.Only(tag - 1).err, c.seen) << "injected " << c.injected;
    EXPECT_EQ(bad_rec.Only(tag - 1).bytes, 0u);
    EXPECT_EQ(good_rec.Only(tag - 1).err, 0);
    ((*faults).*c.set)(0);
  }
  EXPECT_EQ(bad.Counters().errors, std::size(cases));
  // Only the failures the caller sees as EIO say the OST itself is failing
  // (not ENOSPC, nor EROFS: a read-only OST still serves reads).
  EXPECT_EQ(bad.Counters().io_errors, 2u);
  EXPECT_EQ(bad.Counters().last_error, uint64_t(EROFS));  // the backend's errno, unmapped
  EXPECT_EQ(good.Counters().errors, 0u);

  bad.Submit(MakeIo(Op::kWrite, bad.Object(tag), 0, &buf, &bad_rec, tag));
  ASSERT_TRUE(bad_rec.WaitFor(tag + 1));
  EXPECT_EQ(bad_rec.Only(tag).err, 0) << "cleared fault still fails";
}

TEST(ServiceTest, ObjectOpsAndDestroy) {
  TempDir dir;
  LocalService service(ServiceOptions{0, 2}, PosixOrDie(dir.path()));
  Recorder rec;
  uint64_t tag = 0;
  auto run = [&](std::unique_ptr<IoRequest> r) {
    service.Submit(std::move(r));
    EXPECT_TRUE(rec.WaitFor(++tag));
    return rec.Only(tag - 1).err;
  };
  auto size_of = [&](uint64_t id) -> int64_t {
    auto f = service.backend().Open(id, false);
    return f.ok() ? int64_t(*(*f)->Size()) : -f.err();
  };
  const std::string path = dir.path() + "/objects/05/0000000000000005";

  // On a missing object these have nothing to do and must not create it.
  auto sync = MakeIo(Op::kSync, service.Object(5), 0, nullptr, &rec, tag);
  sync->data_only = true;
  EXPECT_EQ(run(std::move(sync)), 0);
  auto punch = MakeIo(Op::kPunch, service.Object(5), 0, nullptr, &rec, tag);
  punch->info.length = 4096;
  EXPECT_EQ(run(std::move(punch)), 0);
  EXPECT_EQ(run(MakeIo(Op::kTruncate, service.Object(5), 0, nullptr, &rec, tag)), 0);
  EXPECT_EQ(run(MakeIo(Op::kDestroy, service.Object(5), 0, nullptr, &rec, tag)), 0);
  EXPECT_FALSE(Exists(path));

  // Not even a truncate that grows: a short or missing object reads as a hole.
  auto object = service.Object(5);
  auto grow = MakeIo(Op::kTruncate, object, 0, nullptr, &rec, tag);
  grow->truncate_size = 10000;
  EXPECT_EQ(run(std::move(grow)), 0);
  EXPECT_FALSE(Exists(path));
  auto alloc = MakeIo(Op::kAllocate, object, 0, nullptr, &rec, tag);
  alloc->info.length = 20000;
  EXPECT_EQ(run(std::move(alloc)), 0);
  EXPECT_EQ(size_of(5), 20000);
  auto keep = MakeIo(Op::kAllocate, object, 0, nullptr, &rec, tag);
  keep->info.length = 40000;
  keep->keep_size = true;
  EXPECT_EQ(run(std::move(keep)), 0);
  EXPECT_EQ(size_of(5), 20000);
  EXPECT_EQ(run(MakeIo(Op::kSync, object, 0, nullptr, &rec, tag)), 0);

  EXPECT_TRUE(Exists(path));
  EXPECT_EQ(run(MakeIo(Op::kDestroy, service.Object(5), 0, nullptr, &rec, tag)), 0);
  EXPECT_FALSE(Exists(path));
  EXPECT_EQ(service.Counters().errors, 0u);
}

// An object the file recorded as created (must_exist) and that is missing
// was lost: every op on it fails with EIO, nothing creates it again, and the
// log line names the inode, stripe, OST and object.
TEST(ServiceTest, LostObjectIsEioForEveryOpAndNeverRecreated) {
  TempDir dir;
  LocalService service(ServiceOptions{3, 2}, PosixOrDie(dir.path()));
  Recorder rec;
  uint64_t tag = 0;
  std::string buf = Pattern(2, 4096);
  for (Op op : {Op::kRead, Op::kWrite, Op::kTruncate, Op::kPunch, Op::kAllocate, Op::kSync,
                Op::kSeek}) {
    auto r = MakeIo(op, service.Object(7), 0, op == Op::kRead || op == Op::kWrite ? &buf : nullptr,
                    &rec, tag);
    r->must_exist = true;
    r->ino = 99;
    r->info.length = 4096;
    r->whence = SEEK_DATA;
    service.Submit(std::move(r));
    ASSERT_TRUE(rec.WaitFor(++tag));
    EXPECT_EQ(rec.Only(tag - 1).err, EIO) << nrs::OpName(op);
  }
  EXPECT_FALSE(Exists(dir.path() + "/objects/07/0000000000000007"));
  EXPECT_EQ(service.Counters().io_errors, tag);
  // Never written (must_exist false): a hole, no error.
  auto read = MakeIo(Op::kRead, service.Object(7), 0, &buf, &rec, tag);
  service.Submit(std::move(read));
  ASSERT_TRUE(rec.WaitFor(++tag));
  EXPECT_EQ(rec.Only(tag - 1).err, 0);
  EXPECT_EQ(buf, std::string(4096, '\0'));
}

TEST(ServiceTest, RequestWithoutHandleUsesObjectId) {
  auto backend = NewMemBackend();
  Backend* raw = backend.get();
  LocalService service(ServiceOptions{}, std::move(backend));
  Recorder rec;
  std::string buf = "abc";
  auto r = MakeIo(Op::kWrite, service.Object(42), 0, &buf, &rec, 0);
  r->object = nullptr;
  service.Submit(std::move(r));
  ASSERT_TRUE(rec.WaitFor(1));
  EXPECT_EQ(rec.Only(0).err, 0);
  EXPECT_TRUE(raw->Open(42, false).ok());
}

TEST(ServiceTest, DestructorServesEverythingSubmitted) {
  Recorder rec;
  constexpr int kCount = 300;
  std::vector<std::string> bufs(kCount, std::string(512, 'z'));
  {
    LocalService service(ServiceOptions{0, 2}, NewMemBackend());
    auto object = service.Object(1);
    for (int i = 0; i < kCount; ++i) {
      service.Submit(MakeIo(Op::kWrite, object, i * 512, &bufs[i], &rec, i));
    }
  }
  EXPECT_EQ(rec.Results().size(), size_t(kCount));
}

}  // namespace
}  // namespace sfs::ost
