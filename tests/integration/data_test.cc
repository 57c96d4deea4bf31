// File data on a real mount: truncate, holes, O_APPEND, O_DIRECT, mmap,
// offsets past 4 GiB and concurrent writers, all compared byte for byte.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr size_t kMiB = 1 << 20;

class DataTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs_.mounted()); }
  std::string P(const std::string& relative) const { return fs_.Path(relative); }

  MountedFs fs_;
};

off_t SizeOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return -1;
  return st.st_size;
}

TEST_F(DataTest, TruncateUpReadsZerosAndDownThenUpCutsBytes) {
  // 3.5 stripes of data, so every truncate changes several objects.
  const std::string data = RandomBytes(3 * kMiB + kMiB / 2, 11);
  ASSERT_TRUE(WriteFile(P("f"), data));

  // Up, by path, on a file that is not open.
  ASSERT_EQ(truncate(P("f").c_str(), 6 * kMiB), 0);
  EXPECT_EQ(SizeOf(P("f")), static_cast<off_t>(6 * kMiB));
  EXPECT_TRUE(SameBytes(ReadFile(P("f")), data + std::string(6 * kMiB - data.size(), '\0')));

  // Down into stripe 1, then up again, through an open descriptor: the cut
  // bytes must read as zeros, not come back.
  int fd = open(P("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const size_t cut = kMiB + 4321;
  ASSERT_EQ(ftruncate(fd, cut), 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(cut));
  EXPECT_TRUE(SameBytes(PreadAll(fd, 8 * kMiB, 0), data.substr(0, cut)));
  ASSERT_EQ(ftruncate(fd, 5 * kMiB), 0);
  EXPECT_TRUE(SameBytes(PreadAll(fd, 8 * kMiB, 0),
                        data.substr(0, cut) + std::string(5 * kMiB - cut, '\0')));
  close(fd);

  // Down to zero and write again past the old end.
  ASSERT_EQ(truncate(P("f").c_str(), 0), 0);
  EXPECT_EQ(SizeOf(P("f")), 0);
  EXPECT_TRUE(SameBytes(ReadFile(P("f")), ""));
  fd = open(P("f").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, "end", 2 * kMiB));
  close(fd);
  EXPECT_TRUE(SameBytes(ReadFile(P("f")), std::string(2 * kMiB, '\0') + "end"));

  // The objects follow: the largest holds at most one stripe's share.
  ASSERT_EQ(truncate(P("f").c_str(), 100), 0);
  for (int ost = 0; ost < 4; ++ost) {
    for (const std::string& object : fs_.Objects(ost)) EXPECT_LE(SizeOf(object), 100) << object;
  }
}

// A truncate by path while the file is open elsewhere: the descriptor sees
// the new size and the cut bytes are gone.
TEST_F(DataTest, TruncateByPathIsSeenThroughAnOpenDescriptor) {
  const std::string data = RandomBytes(2 * kMiB, 17);
  ASSERT_TRUE(WriteFile(P("f"), data));
  int fd = open(P("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(truncate(P("f").c_str(), 1000), 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 1000);
  EXPECT_TRUE(SameBytes(PreadAll(fd, 2 * kMiB, 0), data.substr(0, 1000)));
  ASSERT_TRUE(PwriteAll(fd, "z", 1500));
  EXPECT_TRUE(
      SameBytes(PreadAll(fd, 2 * kMiB, 0), data.substr(0, 1000) + std::string(500, '\0') + "z"));
  close(fd);
  EXPECT_EQ(SizeOf(P("f")), 1501);
}

TEST_F(DataTest, FallocatePunchesHolesAndPreallocates) {
  const std::string data = RandomBytes(4 * kMiB, 18);
  ASSERT_TRUE(WriteFile(P("f"), data));
  int fd = open(P("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  // A hole across the stripe 0/1 boundary keeps the size.
  const off_t from = kMiB - 8192, length = 3 * 8192;
  ASSERT_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, from, length), 0)
      << strerror(errno);
  std::string expected = data;
  std::fill(expected.begin() + from, expected.begin() + from + length, '\0');
  EXPECT_TRUE(SameBytes(PreadAll(fd, 8 * kMiB, 0), expected));
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(4 * kMiB));

  // Preallocation past the end grows the file (zeros); KEEP_SIZE does not.
  ASSERT_EQ(fallocate(fd, FALLOC_FL_KEEP_SIZE, 4 * kMiB, kMiB), 0) << strerror(errno);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(4 * kMiB));
  ASSERT_EQ(fallocate(fd, 0, 5 * kMiB, kMiB + 10), 0) << strerror(errno);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(6 * kMiB + 10));
  expected += std::string(2 * kMiB + 10, '\0');
  EXPECT_TRUE(SameBytes(PreadAll(fd, 8 * kMiB, 0), expected));
  close(fd);
  EXPECT_EQ(SizeOf(P("f")), static_cast<off_t>(6 * kMiB + 10));
  EXPECT_TRUE(SameBytes(ReadFile(P("f")), expected));
}

TEST_F(DataTest, SparseWriteAt100MiBLeavesHolesOfZeros) {
  int fd = open(P("sparse").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  const off_t at = 100 * kMiB;
  ASSERT_TRUE(PwriteAll(fd, "hello", at));
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, at + 5);
  EXPECT_TRUE(SameBytes(PreadAll(fd, 4096, 0), std::string(4096, '\0')));
  EXPECT_TRUE(SameBytes(PreadAll(fd, 3 * kMiB, 50 * kMiB - 7), std::string(3 * kMiB, '\0')));
  EXPECT_TRUE(SameBytes(PreadAll(fd, 100, at - 10), std::string(10, '\0') + "hello"));
  close(fd);
  EXPECT_EQ(SizeOf(P("sparse")), at + 5);
  // Only the object holding the 5 bytes exists, and it is sparse too.
  size_t objects = 0;
  for (int ost = 0; ost < 4; ++ost) objects += fs_.Objects(ost).size();
  EXPECT_EQ(objects, 1u);
}

TEST_F(DataTest, AppendsLandInOrder) {
  ASSERT_TRUE(WriteFile(P("log"), "0123"));
  int a = open(P("log").c_str(), O_WRONLY | O_APPEND);
  int b = open(P("log").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  ASSERT_EQ(write(a, "first;", 6), 6);
  ASSERT_EQ(write(b, "second;", 7), 7);
  ASSERT_EQ(write(a, "third;", 6), 6);
  // pwrite on an O_APPEND descriptor appends too on Linux.
  ASSERT_EQ(pwrite(b, "fourth", 6, 0), 6);
  close(a);
  close(b);
  EXPECT_EQ(ReadFile(P("log")), "0123first;second;third;fourth");

  // Appends that cross a stripe boundary.
  const std::string big = RandomBytes(kMiB + 100, 12);
  int c = open(P("log").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(c, 0);
  ASSERT_EQ(write(c, big.data(), big.size()), static_cast<ssize_t>(big.size()));
  ASSERT_EQ(write(c, big.data(), big.size()), static_cast<ssize_t>(big.size()));
  close(c);
  EXPECT_TRUE(SameBytes(ReadFile(P("log")), "0123first;second;third;fourth" + big + big));
}

struct FreeDeleter {
  void operator()(void* p) const { free(p); }
};
using AlignedBuffer = std::unique_ptr<char, FreeDeleter>;

AlignedBuffer Aligned(size_t size) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, size) != 0) return nullptr;
  return AlignedBuffer(static_cast<char*>(p));
}

TEST_F(DataTest, DirectIoRoundTrips) {
  const size_t kSize = 2 * kMiB + 3 * 4096;  // crosses two stripe boundaries
  const std::string data = RandomBytes(kSize, 13);
  AlignedBuffer out = Aligned(kSize);
  AlignedBuffer in = Aligned(kSize);
  ASSERT_TRUE(out && in);
  std::memcpy(out.get(), data.data(), kSize);

  int fd = open(P("direct").c_str(), O_CREAT | O_RDWR | O_DIRECT, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  const off_t at = kMiB - 4096;
  ASSERT_EQ(pwrite(fd, out.get(), kSize, at), static_cast<ssize_t>(kSize)) << strerror(errno);
  std::memset(in.get(), 0xAA, kSize);
  ASSERT_EQ(pread(fd, in.get(), kSize, at), static_cast<ssize_t>(kSize)) << strerror(errno);
  EXPECT_EQ(std::memcmp(in.get(), data.data(), kSize), 0);
  // 4 KiB pieces too.
  ASSERT_EQ(pwrite(fd, out.get(), 4096, 0), 4096);
  ASSERT_EQ(pread(fd, in.get(), 4096, 0), 4096);
  EXPECT_EQ(std::memcmp(in.get(), data.data(), 4096), 0);
  close(fd);

  // A buffered reader sees what the direct writer wrote.
  std::string expected = data.substr(0, 4096) + std::string(at - 4096, '\0') + data;
  EXPECT_TRUE(SameBytes(ReadFile(P("direct")), expected));
}

// Pipes the daemon holds open (/proc/PID/fd): the spliced read path keeps
// the ones it used, so some are left after large reads.
int PipesOf(pid_t pid) {
  int pipes = 0;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::error_code ec;
    const auto target = std::filesystem::read_symlink(entry.path(), ec);
    if (!ec && target.string().rfind("pipe:", 0) == 0) ++pipes;
  }
  return pipes;
}

// Large reads are replied by splice from the objects' pages (fs/ops_file.cc):
// over 64 KiB stripes on 3 OSTs a read wraps the stripe set, so each part's
// pipe holds several pieces; holes inside objects, objects that end before
// the file does and a never written object all read as zeros. Read cold
// through the page cache (readahead in max_read pieces) and with O_DIRECT
// at odd sizes, and compared byte for byte.
TEST(SplicedReadTest, LargeReadsAcrossStripesHolesAndShortObjects) {
  MountedFs::Options options;
  options.osts = 3;
  options.stripe_count = 3;
  options.stripe_size = "64K";
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  // The daemon (root here) raised the mount's readahead to 2 MiB, so cold
  // reads arrive as several max_read (512 KiB) requests at once.
  const dev_t dev = Stat(fs.mnt()).st_dev;
  EXPECT_EQ(ReadFile("/sys/class/bdi/" + std::to_string(major(dev)) + ":" +
                     std::to_string(minor(dev)) + "/read_ahead_kb"),
            "2048\n");
  const int pipes_before = PipesOf(fs.daemon_pid());
  const std::string path = fs.Path("spliced");
  const size_t kSize = 3 * kMiB + 1;
  std::string expected(kSize, '\0');
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto put = [&](const std::string& data, size_t at) {
    ASSERT_TRUE(PwriteAll(fd, data, static_cast<off_t>(at)));
    expected.replace(at, data.size(), data);
  };
  put(RandomBytes(kMiB, 21), 0);                    // every object
  put(RandomBytes(70000, 22), 2 * kMiB + 100);      // after a hole of ~1 MiB
  put(RandomBytes(1, 23), 3 * kMiB);                // stripe 0 only: 1 and 2 end early
  ASSERT_EQ(fsync(fd), 0);
  close(fd);

  fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  std::string cold(kSize, 'x');
  for (size_t at = 0; at < kSize; at += kMiB) {
    const size_t n = std::min(kMiB, kSize - at);
    ASSERT_EQ(pread(fd, cold.data() + at, n, static_cast<off_t>(at)), static_cast<ssize_t>(n));
  }
  close(fd);
  EXPECT_TRUE(SameBytes(cold, expected));

  fd = open(path.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  AlignedBuffer in = Aligned(kMiB);
  ASSERT_TRUE(in);
  for (size_t at : {size_t{0}, size_t{4096} * 37, kMiB - 4096, 2 * kMiB + 8192}) {
    for (size_t n : {size_t{100} << 10, size_t{500} << 10, kMiB}) {
      const size_t want = std::min(n, kSize - at);
      std::memset(in.get(), 0xAA, want);
      ASSERT_EQ(pread(fd, in.get(), n, static_cast<off_t>(at)), static_cast<ssize_t>(want));
      EXPECT_EQ(std::memcmp(in.get(), expected.data() + at, want), 0) << at << " " << n;
    }
  }
  close(fd);
  if (OverIoUring()) {
    // Over io_uring a read goes straight into its entry's payload: no pipe.
    EXPECT_EQ(PipesOf(fs.daemon_pid()), pipes_before) << "a read over io_uring was spliced";
  } else {
    EXPECT_GT(PipesOf(fs.daemon_pid()), pipes_before) << "no read was spliced";
  }
}

// Reads and writes started by their caller (ost_status "started="), all
// OSTs.
uint64_t Started(const MountedFs& fs) { return SumOfOstCounter(fs, "started"); }

// Over io_uring a lone read or write part of an open object is done by the
// queue's own io_uring (fs/io.cc RingIo), never on a thread that could
// wait on the disk: O_DIRECT reads of 4 KiB and odd sizes, inside a
// stripe, across two, in a hole, past a short object's end and in a never
// written object, then O_DIRECT writes, compared byte for byte. Over
// /dev/fuse none is started that way.
TEST(RingIoTest, SmallReadsAndWritesAcrossHolesAndShortObjects) {
  MountedFs::Options options;
  options.osts = 3;
  options.stripe_count = 3;
  options.stripe_size = "64K";
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string path = fs.Path("small");
  const size_t kSize = 600 * 1024;  // objects 0 and 1 end early, 2 never written past 192K
  std::string expected(kSize, '\0');
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  ASSERT_GE(fd, 0) << strerror(errno);
  auto put = [&](const std::string& data, size_t at) {
    ASSERT_TRUE(PwriteAll(fd, data, static_cast<off_t>(at)));
    expected.replace(at, data.size(), data);
  };
  put(RandomBytes(192 * 1024, 31), 0);           // one stripe of each object
  put(RandomBytes(5000, 32), 400 * 1024 + 7);    // object 0's third stripe, after a hole
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kSize)), 0);
  ASSERT_EQ(fsync(fd), 0);
  close(fd);

  const uint64_t before = Started(fs);
  fd = open(path.c_str(), O_RDONLY | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  AlignedBuffer in = Aligned(64 * 1024);
  ASSERT_TRUE(in);
  size_t reads = 0;
  for (size_t round = 0; round < 2; ++round) {  // the first opens the objects
    for (size_t at = 0; at < kSize; at += 12 * 1024) {
      for (size_t n : {size_t{4096}, size_t{8192}, size_t{20480}}) {
        const size_t want = std::min(n, kSize - at);
        std::memset(in.get(), 0xAA, want);
        ASSERT_EQ(pread(fd, in.get(), n, static_cast<off_t>(at)), static_cast<ssize_t>(want))
            << at << " " << n;
        EXPECT_EQ(std::memcmp(in.get(), expected.data() + at, want), 0) << at << " " << n;
        ++reads;
      }
    }
  }
  close(fd);
  const uint64_t started = Started(fs) - before;

  fd = open(path.c_str(), O_RDWR | O_DIRECT);
  ASSERT_GE(fd, 0) << strerror(errno);
  size_t writes = 0;
  for (size_t at = 0; at + 8192 <= kSize; at += 36 * 1024) {  // some in holes, some past 192K
    const std::string data = RandomBytes(8192, 40 + at);
    std::memcpy(in.get(), data.data(), data.size());
    ASSERT_EQ(pwrite(fd, in.get(), data.size(), static_cast<off_t>(at)), 8192) << at;
    expected.replace(at, data.size(), data);
    ++writes;
  }
  close(fd);
  EXPECT_TRUE(SameBytes(ReadFile(path), expected));
  const uint64_t started_writes = Started(fs) - before - started;
  if (OverIoUring()) {
    EXPECT_GT(started, reads / 4) << "few reads over io_uring were started on its queue's ring";
    EXPECT_GT(started_writes, writes / 4) << "few writes over io_uring were started on its ring";
  } else {
    EXPECT_EQ(started, 0u);
    EXPECT_EQ(started_writes, 0u);
  }
}

// Pages cached by buffered I/O (kept across opens) must not hide bytes that
// an O_DIRECT write put on the OSTs afterwards.
TEST_F(DataTest, DirectWriteIsSeenByLaterBufferedRead) {
  ASSERT_TRUE(WriteFile(P("mixed"), std::string(8192, 'A')));
  EXPECT_EQ(ReadFile(P("mixed")), std::string(8192, 'A'));  // cache it
  AlignedBuffer out = Aligned(4096);
  ASSERT_TRUE(out);
  std::memset(out.get(), 'B', 4096);
  int fd = open(P("mixed").c_str(), O_WRONLY | O_DIRECT);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, out.get(), 4096, 4096), 4096);
  close(fd);
  EXPECT_EQ(ReadFile(P("mixed")), std::string(4096, 'A') + std::string(4096, 'B'));
}

TEST_F(DataTest, MmapSharedWriteReachesTheOsts) {
  const size_t kSize = 3 * kMiB + 5000;
  const std::string data = RandomBytes(kSize, 14);
  int fd = open(P("mapped").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, kSize), 0);
  void* map = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED) << strerror(errno);
  std::memcpy(map, data.data(), kSize);
  ASSERT_EQ(msync(map, kSize, MS_SYNC), 0) << strerror(errno);
  ASSERT_EQ(munmap(map, kSize), 0);
  EXPECT_TRUE(SameBytes(PreadAll(fd, kSize + 10, 0), data));
  close(fd);

  // After a remount nothing can come from this client's page cache.
  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(SizeOf(P("mapped")), static_cast<off_t>(kSize));
  EXPECT_TRUE(SameBytes(ReadFile(P("mapped")), data));
}

TEST_F(DataTest, MmapReadSeesFileContents) {
  const size_t kSize = 2 * kMiB + 123;
  const std::string data = RandomBytes(kSize, 15);
  ASSERT_TRUE(WriteFile(P("readmap"), data));
  int fd = open(P("readmap").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* map = mmap(nullptr, kSize, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(map, MAP_FAILED) << strerror(errno);
  EXPECT_EQ(std::memcmp(map, data.data(), kSize), 0);
  munmap(map, kSize);
  close(fd);
}

TEST_F(DataTest, FileOver4GiB) {
  const off_t at = 5ll << 30;
  int fd = open(P("huge").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, "beyond 4 GiB", at)) << strerror(errno);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, at + 12);
  EXPECT_TRUE(SameBytes(PreadAll(fd, 100, at), "beyond 4 GiB"));
  EXPECT_TRUE(SameBytes(PreadAll(fd, 4096, at - 4096), std::string(4096, '\0')));
  EXPECT_TRUE(SameBytes(PreadAll(fd, 16, (4ll << 30) - 8), std::string(16, '\0')));
  close(fd);
  EXPECT_EQ(SizeOf(P("huge")), at + 12);
  // Truncate across the 4 GiB line keeps the low bytes' zeros and the size.
  ASSERT_EQ(truncate(P("huge").c_str(), at + 6), 0);
  fd = open(P("huge").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(SameBytes(PreadAll(fd, 100, at), "beyond"));
  close(fd);
}

TEST_F(DataTest, ConcurrentWritersOfDisjointRanges) {
  constexpr int kThreads = 8;
  // Ranges not aligned to stripes, so neighbours share objects.
  const size_t kRange = 3 * kMiB + 777;
  const std::string data = RandomBytes(kThreads * kRange, 16);
  int fd = open(P("shared").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  std::vector<std::thread> writers;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      // Each thread writes its range in uneven pieces, back to front.
      const size_t begin = t * kRange;
      size_t end = begin + kRange;
      const size_t piece = 200000 + 4096 * t;
      while (end > begin) {
        const size_t start = end > begin + piece ? end - piece : begin;
        if (!PwriteAll(fd, data.substr(start, end - start), start)) failures[t] = errno;
        end = start;
      }
    });
  }
  for (auto& writer : writers) writer.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(data.size()));
  close(fd);
  EXPECT_TRUE(SameBytes(ReadFile(P("shared")), data));
}


// Asynchronous direct writes larger than one FUSE request (2 MiB, queue
// depth 4) to a new file: every byte must read back. The pieces of such a
// write must not overlap the trim of bytes past the end of file.
TEST_F(DataTest, AsyncDirectWritesLargerThanOneRequestKeepEveryByte) {
  CommandResult fio = Shell(
      "fio --name=aio --filename=" + P("aio") +
      " --ioengine=libaio --direct=1 --bs=2M --size=32M --rw=write --iodepth=4"
      " --fallocate=none --create_on_open=1"
      " --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse"
      " --verify_state_save=0");  // no state file left in the working directory
  EXPECT_EQ(fio.exit_code, 0) << fio.output;
  EXPECT_EQ(SizeOf(P("aio")), static_cast<off_t>(32 * kMiB));
}

// A punch over exabytes is computed per stripe, not per chunk: it must
// return at once and keep the file's size and the bytes outside it.
TEST_F(DataTest, HugeHolePunchReturnsAndKeepsTheRest) {
  const std::string data = RandomBytes(3 * kMiB, 5);
  ASSERT_TRUE(WriteFile(P("f"), data));
  int fd = open(P("f").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const off_t huge = off_t{1} << 62;
  ASSERT_EQ(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, kMiB, huge), 0)
      << strerror(errno);
  close(fd);
  EXPECT_EQ(SizeOf(P("f")), static_cast<off_t>(3 * kMiB));
  std::string expected = data.substr(0, kMiB) + std::string(2 * kMiB, '\0');
  EXPECT_TRUE(SameBytes(ReadFile(P("f")), expected));
}

// SIGTERM while writers are busy: requests still queued at the OSTs are
// answered before the session goes, and the daemon exits cleanly.
TEST_F(DataTest, SigtermDuringWritesExitsCleanly) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int i = 0; i < 4; ++i) {
    writers.emplace_back([&, i] {
      // Page-aligned, so that each 1 MiB write is one request: a direct
      // write from an unaligned buffer spans 257 pages and the kernel
      // sends it as two (at most 256 pages each), which a stop between
      // them may legitimately leave as a short write.
      AlignedBuffer block = Aligned(kMiB);
      if (!block) return;
      std::memset(block.get(), 'a' + i, kMiB);
      int fd = open(P("w" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY, 0644);
      if (fd < 0) return;
      for (off_t off = 0; !stop.load(); off = (off + kMiB) % (64 * kMiB)) {
        if (pwrite(fd, block.get(), kMiB, off) < 0) break;  // mount gone
      }
      close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int status = fs_.Terminate();
  stop.store(true);
  for (auto& writer : writers) writer.join();
  ASSERT_NE(status, -1) << "the daemon did not exit";
  EXPECT_TRUE(WIFEXITED(status)) << "daemon died by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(SizeOf(P("w0")) % kMiB, 0);
}

}  // namespace
}  // namespace sfs::test
