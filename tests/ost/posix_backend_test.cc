#include <fcntl.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>

#include "ost/backend.h"
#include "tests/ost/test_util.h"

namespace sfs::ost {
namespace {

using testing::Iov;
using testing::Pattern;
using testing::TempDir;

class PosixBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = NewPosixBackend(dir_.path());
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    backend_ = std::move(made).value();
  }

  std::unique_ptr<ObjectFile> OpenOrDie(uint64_t id, bool create = true) {
    auto opened = backend_->Open(id, create);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  std::string Read(ObjectFile& f, uint64_t offset, size_t n) {
    std::string buf(n, 'x');
    iovec iov{buf.data(), n};
    auto got = f.ReadV(&iov, 1, offset);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    buf.resize(got.ok() ? *got : 0);
    return buf;
  }

  void Write(ObjectFile& f, uint64_t offset, std::string data) {
    iovec iov{data.data(), data.size()};
    Status s = f.WriteV(&iov, 1, offset);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  TempDir dir_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(PosixBackendTest, RoundTripWithManyIovecs) {
  auto f = OpenOrDie(0x1234);
  std::string data = Pattern(1, 10000);
  std::string copy = data;
  auto out = Iov(copy, 333);
  ASSERT_TRUE(f->WriteV(out.data(), out.size(), 8192).ok());

  std::string back(10000, 'x');
  auto in = Iov(back, 1000);
  auto got = f->ReadV(in.data(), in.size(), 8192);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, 10000u);
  EXPECT_EQ(back, data);
  auto size = f->Size();
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(*size, 8192u + 10000u);
}

TEST_F(PosixBackendTest, ReadPastEndIsShort) {
  auto f = OpenOrDie(7);
  Write(*f, 0, "hello");
  std::string buf(100, 'x');
  auto in = Iov(buf, 3);
  auto got = f->ReadV(in.data(), in.size(), 2);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 3u);
  EXPECT_EQ(buf.substr(0, 3), "llo");
  EXPECT_EQ(Read(*f, 1000, 10), "");
}

TEST_F(PosixBackendTest, MissingObjectIsEnoentWithoutCreate) {
  auto opened = backend_->Open(99, /*create=*/false);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.err(), ENOENT);
  // And that open made nothing.
  struct stat st;
  EXPECT_NE(stat((dir_.path() + "/objects").c_str(), &st), 0);
}

TEST_F(PosixBackendTest, MissingObjectOnRemovedDirectoryIsEio) {
  OpenOrDie(5);
  std::filesystem::remove_all(dir_.path());
  // The object's data is gone with its directory: an error, not a hole.
  auto opened = backend_->Open(5, /*create=*/false);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.err(), EIO);
  EXPECT_NE(opened.status().message().find("removed"), std::string::npos);
}

TEST_F(PosixBackendTest, ObjectsFanOutByLowByte) {
  OpenOrDie(0xabcdef12);
  OpenOrDie(0x100000012);
  struct stat st;
  EXPECT_EQ(stat((dir_.path() + "/objects/12/00000000abcdef12").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(stat((dir_.path() + "/objects/12/0000000100000012").c_str(), &st), 0);
  auto reopened = backend_->Open(0xabcdef12, /*create=*/false);
  EXPECT_TRUE(reopened.ok());
}

TEST_F(PosixBackendTest, TruncateUpAndDown) {
  auto f = OpenOrDie(3);
  Write(*f, 0, "abcdefgh");
  ASSERT_TRUE(f->Truncate(4).ok());
  EXPECT_EQ(*f->Size(), 4u);
  EXPECT_EQ(Read(*f, 0, 100), "abcd");
  ASSERT_TRUE(f->Truncate(10).ok());
  EXPECT_EQ(*f->Size(), 10u);
  EXPECT_EQ(Read(*f, 0, 100), std::string("abcd") + std::string(6, '\0'));
}

TEST_F(PosixBackendTest, PunchZeroesAndKeepsSize) {
  auto f = OpenOrDie(4);
  std::string data = Pattern(4, 3 * 4096);
  Write(*f, 0, data);
  Status s = f->Punch(4096, 4096);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*f->Size(), 3u * 4096);
  std::string back = Read(*f, 0, 3 * 4096);
  EXPECT_EQ(back.substr(0, 4096), data.substr(0, 4096));
  EXPECT_EQ(back.substr(4096, 4096), std::string(4096, '\0'));
  EXPECT_EQ(back.substr(8192), data.substr(8192));
  EXPECT_TRUE(f->Punch(0, 0).ok());
}

TEST_F(PosixBackendTest, AllocateExtendsUnlessKeepSize) {
  auto f = OpenOrDie(5);
  Status s = f->Allocate(0, 65536, /*keep_size=*/true);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*f->Size(), 0u);
  s = f->Allocate(0, 65536, /*keep_size=*/false);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*f->Size(), 65536u);
  EXPECT_EQ(Read(*f, 100, 10), std::string(10, '\0'));
}

TEST_F(PosixBackendTest, SyncBothKinds) {
  auto f = OpenOrDie(6);
  Write(*f, 0, "x");
  EXPECT_TRUE(f->Sync(true).ok());
  EXPECT_TRUE(f->Sync(false).ok());
}

TEST_F(PosixBackendTest, RemoveAndRemoveMissing) {
  {
    auto f = OpenOrDie(8);
    Write(*f, 0, "gone soon");
  }
  ASSERT_TRUE(backend_->Remove(8).ok());
  struct stat st;
  EXPECT_NE(stat((dir_.path() + "/objects/08/0000000000000008").c_str(), &st), 0);
  EXPECT_EQ(backend_->Open(8, false).err(), ENOENT);
  EXPECT_TRUE(backend_->Remove(8).ok());
  EXPECT_TRUE(backend_->Remove(0xfeed).ok());  // never existed, nor its fan-out dir
}

TEST_F(PosixBackendTest, SpaceAndDescribe) {
  auto space = backend_->Space();
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  EXPECT_GT(space->block_size, 0u);
  EXPECT_GT(space->total_blocks, 0u);
  EXPECT_LE(space->avail_blocks, space->total_blocks);
  EXPECT_EQ(backend_->Describe(), dir_.path());
}

TEST_F(PosixBackendTest, SpaceSaysHowLargeAnObjectCanBe) {
  auto space = backend_->Space();
  ASSERT_TRUE(space.ok()) << space.status().ToString();
  const uint64_t limit = space->max_object_size;
  ASSERT_NE(limit, kNoObjectLimit);
  // An object takes exactly that size and not a byte more.
  auto f = OpenOrDie(7);
  EXPECT_TRUE(f->Truncate(limit).ok());
  if (limit < static_cast<uint64_t>(INT64_MAX)) {
    EXPECT_EQ(f->Truncate(limit + 1).err(), EFBIG);
  }
  EXPECT_TRUE(f->Truncate(0).ok());
  // The probe left nothing behind.
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().filename().string().rfind(".size-probe", 0), std::string::npos)
        << entry.path();
  }
  // Found once: a second sample says the same.
  auto again = backend_->Space();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->max_object_size, limit);
}

TEST(ProbeMaxObjectSizeTest, MatchesWhatFtruncateAccepts) {
  TempDir dir;
  const int fd = open(dir.path().c_str(), O_DIRECTORY | O_RDONLY);
  ASSERT_GE(fd, 0);
  auto limit = ProbeMaxObjectSize(fd);
  ASSERT_TRUE(limit.ok()) << limit.status().ToString();
  const std::string file = dir.path() + "/f";
  const int f = open(file.c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(f, 0);
  EXPECT_EQ(ftruncate(f, static_cast<off_t>(*limit)), 0);
  if (*limit < static_cast<uint64_t>(INT64_MAX)) {
    EXPECT_EQ(ftruncate(f, static_cast<off_t>(*limit + 1)), -1);
  }
  close(f);
  close(fd);
}

// A finite RLIMIT_FSIZE bounds the daemon's own files: the probe searches
// below it (a ftruncate past it would raise SIGXFSZ and end the process)
// and finds it, and leaves no scratch file behind.
TEST(ProbeMaxObjectSizeTest, StaysWithinTheFileSizeLimit) {
  TempDir dir;
  const int fd = open(dir.path().c_str(), O_DIRECTORY | O_RDONLY);
  ASSERT_GE(fd, 0);
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct rlimit lowered = saved;
  lowered.rlim_cur = 1 << 30;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lowered), 0);
  auto limit = ProbeMaxObjectSize(fd);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_TRUE(limit.ok()) << limit.status().ToString();
  EXPECT_EQ(*limit, uint64_t{1} << 30);
  EXPECT_NE(faccessat(fd, ".size-probe", F_OK, 0), 0);
  close(fd);
}

TEST_F(PosixBackendTest, ErrorsNameTheDirectoryAndObject) {
  auto f = OpenOrDie(0x2a);
  Status s = f->Truncate(static_cast<uint64_t>(-1));  // negative off_t: EINVAL
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir_.path()), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("0x2a"), std::string::npos) << s.message();
}

TEST(PosixBackendOpenTest, MissingDirectoryIsEnoent) {
  TempDir dir;
  std::string missing = dir.path() + "/nope";
  auto made = NewPosixBackend(missing);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.err(), ENOENT);
  EXPECT_NE(made.status().message().find(missing), std::string::npos);
}

TEST(PosixBackendOpenTest, FileIsEnotdir) {
  TempDir dir;
  std::string file = dir.path() + "/plain";
  std::ofstream(file) << "not a directory";
  auto made = NewPosixBackend(file);
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.err(), ENOTDIR);
  EXPECT_NE(made.status().message().find(file), std::string::npos);
}

}  // namespace
}  // namespace sfs::ost

namespace sfs::ost {
namespace {

TEST(PosixBackendListTest, ListsObjectsWithSizesAndNamesStrangers) {
  testing::TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok());
  auto empty = (*backend)->ListObjects();
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();  // no objects/ yet
  EXPECT_TRUE(empty->objects.empty());
  for (uint64_t id : {0x1ull, 0x101ull, 0xabcdefull}) {
    auto object = (*backend)->Open(id, true);
    ASSERT_TRUE(object.ok());
    ASSERT_TRUE((*object)->Truncate(id).ok());
  }
  // Not objects: a wrong fan-out, a bad name, a directory, a symlink.
  const std::string objects = dir.path() + "/objects";
  std::ofstream(objects + "/01/0000000000000002") << "x";
  std::ofstream(objects + "/01/notes.txt") << "x";
  mkdir((objects + "/01/00000000000000f1").c_str(), 0700);
  symlink("/etc/passwd", (objects + "/01/0000000000000201").c_str());
  mkdir((objects + "/zz").c_str(), 0700);
  auto listing = (*backend)->ListObjects();
  ASSERT_TRUE(listing.ok()) << listing.status().ToString();
  std::map<uint64_t, uint64_t> sizes;
  for (const StoredObject& object : listing->objects) sizes[object.id] = object.size;
  EXPECT_EQ(sizes, (std::map<uint64_t, uint64_t>{{0x1, 0x1}, {0x101, 0x101}, {0xabcdef, 0xabcdef}}));
  std::set<std::string> strangers(listing->strangers.begin(), listing->strangers.end());
  EXPECT_EQ(strangers, (std::set<std::string>{"objects/01/0000000000000002", "objects/01/notes.txt",
                                              "objects/01/00000000000000f1",
                                              "objects/01/0000000000000201", "objects/zz"}));
}

}  // namespace
}  // namespace sfs::ost
