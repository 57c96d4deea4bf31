// Writes on a real mount, in the three cache modes (mount option
// cache=writearound, the default, cache=writethrough and cache=writeback):
// what the kernel asks the daemon per write, who clears set-ID bits now
// that the daemon does (FUSE_HANDLE_KILLPRIV_V2, fs/fuse_channel.h), what
// stays out of the page cache, and that the writeback
// cache, which sends several pieces past the end of a file at once, keeps
// every byte and stays coherent with direct I/O.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

MountedFs::Options WithCache(const std::string& mode, bool debug_log = false) {
  MountedFs::Options options;
  options.mount_options.push_back("cache=" + mode + (debug_log ? ",log_level=debug" : ""));
  return options;
}

size_t Occurrences(const std::string& text, const std::string& word) {
  size_t count = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    ++count;
  }
  return count;
}

// Runs `body` on `path` opened O_WRONLY by nobody; its result (an errno, 0
// for success), or the errno of open or close.
int AsNobodyOnOpenFile(const std::string& path, const std::function<int(int fd)>& body) {
  return RunAs(kNobody, kNogroup, [&] {
    int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0) return errno;
    const int result = body(fd);
    if (close(fd) != 0 && result == 0) return errno;
    return result;
  });
}

class WriteCacheTest : public ::testing::TestWithParam<std::string> {};

// Without FUSE_HANDLE_KILLPRIV_V2 the kernel asks for security.capability
// before every write(2) that goes through the page cache (one GETXATTR
// each, logged at debug as a miss); with it, once per inode at most.
TEST_P(WriteCacheTest, WritesDoNotAskForSecurityCapabilityEachTime) {
  MountedFs fs(WithCache(GetParam(), /*debug_log=*/true));
  ASSERT_TRUE(fs.mounted());
  int fd = open(fs.Path("f").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  const std::string block(4096, 'w');
  constexpr int kWrites = 1000;
  for (int i = 0; i < kWrites; ++i) ASSERT_TRUE(PwriteAll(fd, block, off_t{i} * 4096));
  ASSERT_EQ(fsync(fd), 0);
  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(Stat(fs.Path("f")).st_size, kWrites * 4096);
  const size_t asked = Occurrences(fs.Log(), "security.capability");
  EXPECT_LT(asked, 10u) << "one capability lookup per write is back";
}

// The kernel leaves clearing set-ID bits to the daemon: chown (by anyone)
// and truncate by a caller without CAP_FSETID clear them; truncate by root
// keeps them.
TEST_P(WriteCacheTest, TruncateAndChownClearSetIdBits) {
  MountedFs fs(WithCache(GetParam()));
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), std::string(100, 'a')));
  ASSERT_EQ(chown(fs.Path("f").c_str(), kNobody, kNogroup), 0);
  ASSERT_EQ(chmod(fs.Path("f").c_str(), 06775), 0);
  ASSERT_EQ(truncate(fs.Path("f").c_str(), 50), 0);  // root: kept
  EXPECT_EQ(Stat(fs.Path("f")).st_mode & 07777, 06775u);
  const std::string path = fs.Path("f");
  EXPECT_EQ(RunAs(kNobody, kNogroup, [&] { return truncate(path.c_str(), 10) == 0 ? 0 : errno; }),
            0);
  EXPECT_EQ(Stat(fs.Path("f")).st_mode & 07777, 0775u);
  EXPECT_EQ(Stat(fs.Path("f")).st_size, 10);

  // Set-group-ID without group execute is not a privilege and stays.
  ASSERT_EQ(chmod(fs.Path("f").c_str(), 06764), 0);
  ASSERT_EQ(chown(fs.Path("f").c_str(), 0, 0), 0);
  EXPECT_EQ(Stat(fs.Path("f")).st_mode & 07777, 02764u);
}

// A write by non-root still clears set-user-ID, whichever way it travels.
TEST_P(WriteCacheTest, WriteByNonRootClearsSetUserId) {
  MountedFs fs(WithCache(GetParam()));
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), std::string(100, 'a')));
  ASSERT_EQ(chmod(fs.Path("f").c_str(), 04777), 0);
  EXPECT_EQ(AsNobodyOnOpenFile(fs.Path("f"),
                               [](int fd) { return pwrite(fd, "b", 1, 5) == 1 ? 0 : errno; }),
            0);
  EXPECT_EQ(Stat(fs.Path("f")).st_mode & 07777, 0777u);
  EXPECT_EQ(ReadFile(fs.Path("f"))->substr(4, 2), "ab");
}

// So does a preallocation by non-root, which the kernel no longer turns
// into a setattr of its own.
TEST_P(WriteCacheTest, FallocateByNonRootClearsSetUserId) {
  MountedFs fs(WithCache(GetParam()));
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), std::string(100, 'a')));
  ASSERT_EQ(chmod(fs.Path("f").c_str(), 04777), 0);
  EXPECT_EQ(AsNobodyOnOpenFile(fs.Path("f"), [](int fd) { return posix_fallocate(fd, 0, 1 << 20); }),
            0);
  EXPECT_EQ(Stat(fs.Path("f")).st_mode & 07777, 0777u);
  EXPECT_EQ(Stat(fs.Path("f")).st_size, 1 << 20);
}

INSTANTIATE_TEST_SUITE_P(Modes, WriteCacheTest,
                         ::testing::Values("writearound", "writethrough", "writeback"));

// Pages of `path` in the kernel's page cache (mincore on a read-only map).
size_t CachedPages(const std::string& path, size_t size) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return SIZE_MAX;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return SIZE_MAX;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((size + page - 1) / page);
  size_t cached = SIZE_MAX;
  if (mincore(map, size, resident.data()) == 0) {
    cached = 0;
    for (unsigned char r : resident) cached += r & 1;
  }
  munmap(map, size);
  return cached;
}

// cache=writearound (the default): a handle opened for writing bypasses the
// client page cache, read-only handles still read through it, and a write
// drops the cached pages it makes stale. O_RDWR handles bypass it only where
// the kernel keeps shared mmap working on them (logged at mount).
TEST(WriteAroundTest, WritersBypassThePageCacheAndReadersStayCoherent) {
  MountedFs fs;  // the default mode
  ASSERT_TRUE(fs.mounted());
  // The daemon logs the INIT amendment once INIT is answered; the line may
  // reach the log file a little after the mount is up.
  ASSERT_TRUE(WaitFor([&] { return fs.Log().find("FUSE INIT amended") != std::string::npos; }));
  const bool rdwr_direct = fs.Log().find("direct_io_allow_mmap on") != std::string::npos;
  constexpr size_t kSize = 4 << 20;
  const std::string data = RandomBytes(kSize, 21);
  for (int access : {O_WRONLY, O_RDWR}) {
    const std::string path = fs.Path(access == O_WRONLY ? "wo" : "rw");
    int fd = open(path.c_str(), O_CREAT | access, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(PwriteAll(fd, data, 0));
    const bool direct = access == O_WRONLY || rdwr_direct;
    if (direct) {
      EXPECT_EQ(CachedPages(path, kSize), 0u) << path;
    } else {
      EXPECT_GT(CachedPages(path, kSize), 0u) << path;
    }
    // A reader caches the file; a later write through the writer's handle
    // is what it reads next, not its cached copy.
    EXPECT_TRUE(SameBytes(ReadFile(path), data));
    EXPECT_GT(CachedPages(path, kSize), 0u) << path;
    const std::string patch(8192, 'p');
    ASSERT_TRUE(PwriteAll(fd, patch, 4096));
    std::string expected = data;
    expected.replace(4096, patch.size(), patch);
    EXPECT_TRUE(SameBytes(ReadFile(path), expected)) << path;
    close(fd);
  }
  // Shared writable mmap through a read-write handle still works.
  int fd = open(fs.Path("rw").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED) << strerror(errno);
  std::memset(map, 'm', 4096);
  ASSERT_EQ(msync(map, 4096, MS_SYNC), 0);
  munmap(map, kSize);
  EXPECT_EQ(PreadAll(fd, 4096, 0), std::string(4096, 'm'));
  close(fd);
}

TEST(WriteAroundTest, WritethroughKeepsWritersInThePageCache) {
  MountedFs fs(WithCache("writethrough"));
  ASSERT_TRUE(fs.mounted());
  int fd = open(fs.Path("f").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, RandomBytes(1 << 20, 22), 0));
  close(fd);
  EXPECT_EQ(CachedPages(fs.Path("f"), 1 << 20), 256u);
}

// One large write(2) reaches the daemon as many pieces past the end of the
// file at once; each must land, whatever order they are answered in (a
// piece's trim or cut-back once destroyed its neighbours' bytes).
TEST(WritebackTest, PiecesPastTheEndAllLand) {
  MountedFs fs(WithCache("writeback"));
  ASSERT_TRUE(fs.mounted());
  const std::string big = RandomBytes((9 << 20) + 17, 91);
  const std::string sparse_tail = RandomBytes(3 << 20, 92);
  ASSERT_TRUE(WriteFile(fs.Path("big"), big));
  int fd = open(fs.Path("sparse").c_str(), O_CREAT | O_WRONLY, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, sparse_tail, 5 << 20));  // a hole first, then pieces
  ASSERT_TRUE(PwriteAll(fd, "head", 0));
  ASSERT_EQ(close(fd), 0);
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("big")), big));
  ASSERT_TRUE(fs.Unmount());
  ASSERT_TRUE(fs.Mount());
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("big")), big));
  std::string expected(5 << 20, '\0');
  expected.replace(0, 4, "head");
  expected += sparse_tail;
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("sparse")), expected));
}

// A direct read after a cached write sees it: the kernel writes the cached
// range back before reading around the cache, and a direct write drops the
// cached pages it makes stale.
TEST(WritebackTest, DirectIoAndCachedIoSeeEachOther) {
  MountedFs fs(WithCache("writeback"));
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), std::string(1 << 20, 'a')));
  int cached = open(fs.Path("f").c_str(), O_RDWR);
  int direct = open(fs.Path("f").c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(cached, 0);
  ASSERT_GE(direct, 0);
  ASSERT_TRUE(PwriteAll(cached, std::string(4096, 'c'), 8192));
  void* aligned = nullptr;
  ASSERT_EQ(posix_memalign(&aligned, 4096, 4096), 0);
  ASSERT_EQ(pread(direct, aligned, 4096, 8192), 4096);
  EXPECT_EQ(std::string(static_cast<char*>(aligned), 4096), std::string(4096, 'c'));

  std::fill_n(static_cast<char*>(aligned), 4096, 'd');
  ASSERT_EQ(pwrite(direct, aligned, 4096, 8192), 4096);
  EXPECT_EQ(PreadAll(cached, 4096, 8192), std::string(4096, 'd'));
  free(aligned);
  ASSERT_EQ(close(direct), 0);
  ASSERT_EQ(close(cached), 0);
}

// Random 4 KiB writes through the cache, then fsync: everything is on the
// OSTs, with the size the kernel showed.
TEST(WritebackTest, FsyncStoresRandomSmallWrites) {
  MountedFs fs(WithCache("writeback"));
  ASSERT_TRUE(fs.mounted());
  std::string expected(8 << 20, '\0');
  int fd = open(fs.Path("r").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  uint64_t seed = 7;
  for (int i = 0; i < 1500; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const off_t block = static_cast<off_t>((seed >> 33) % 2048);
    const std::string data(4096, static_cast<char>('A' + i % 26));
    ASSERT_TRUE(PwriteAll(fd, data, block * 4096));
    expected.replace(static_cast<size_t>(block) * 4096, 4096, data);
  }
  ASSERT_EQ(fsync(fd), 0);
  const off_t shown = lseek(fd, 0, SEEK_END);
  ASSERT_EQ(close(fd), 0);
  expected.resize(static_cast<size_t>(shown));
  ASSERT_TRUE(fs.Unmount());
  ASSERT_TRUE(fs.Mount());
  EXPECT_EQ(Stat(fs.Path("r")).st_size, shown);
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("r")), expected));
}

}  // namespace
}  // namespace sfs::test
