// An unclean stop leaves nothing for fsck (issue 32, item 6): rounds of
// SIGKILL while four writers create, write, fsync, rename, link, unlink
// and truncate files, each followed by a remount (which settles the writes
// that were in flight) and a clean unmount; `stripefs fsck` (read-only)
// must then find no problem at all, in the objects or the namespace.
// SFS_CRASH_ROUNDS sets the number of rounds (default 20).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr size_t kKiB = 1024;

int Rounds() {
  const char* text = std::getenv("SFS_CRASH_ROUNDS");
  return text != nullptr && std::atoi(text) > 0 ? std::atoi(text) : 20;
}

// One writer's own names in the shared directory `dir_fd` (a directory of
// the mount, so that after the kill its calls fail instead of reaching the
// bare mount point). Picks an op at random, as fast as it can, until a call
// fails with the mount gone; every fd it opens is relative to `dir_fd`.
// Some files stay open across ops, so the kill finds files open and writes
// (growing ones, ones creating objects, ones inside the size) in flight.
void Writer(int dir_fd, int id, int round, std::atomic<int>* ops, std::atomic<bool>* stop) {
  std::mt19937_64 random(id * 1000 + round);
  const std::string data = RandomBytes(1536 * kKiB, id + 10 * round);
  auto name = [&](int n) { return "w" + std::to_string(id) + "_" + std::to_string(n); };
  auto any = [&] { return name(static_cast<int>(random() % 12)); };
  std::vector<int> open_fds;
  auto gone = [](long rc) { return rc < 0 && (errno == ENOTCONN || errno == ECONNABORTED); };
  while (!stop->load()) {
    long rc = 0;
    switch (random() % 8) {
      case 0: {  // create (or open) and keep it open
        int fd = openat(dir_fd, any().c_str(), O_CREAT | O_RDWR, 0644);
        rc = fd;
        if (fd >= 0) open_fds.push_back(fd);
        break;
      }
      case 1:
      case 2: {  // write: growing, past the end, or inside; 4 KiB to 1.5 MiB
        if (open_fds.empty()) continue;
        const int fd = open_fds[random() % open_fds.size()];
        const size_t length = 4 * kKiB << (random() % 9);
        const off_t at = static_cast<off_t>(random() % (5 * 1024)) * kKiB;
        rc = pwrite(fd, data.data(), std::min(length, data.size()), at);
        break;
      }
      case 3: {  // fsync, then close
        if (open_fds.empty()) continue;
        const size_t which = random() % open_fds.size();
        rc = fsync(open_fds[which]);
        close(open_fds[which]);
        open_fds.erase(open_fds.begin() + which);
        break;
      }
      case 4:  // rename over whatever has the name
        rc = renameat(dir_fd, any().c_str(), dir_fd, any().c_str());
        break;
      case 5:
        rc = linkat(dir_fd, any().c_str(), dir_fd, any().c_str(), 0);
        break;
      case 6:
        rc = unlinkat(dir_fd, any().c_str(), 0);
        break;
      case 7: {  // truncate down or up (an up over damage must read zeros)
        if (open_fds.empty()) continue;
        const off_t size = static_cast<off_t>(random() % (6 * 1024)) * kKiB;
        rc = ftruncate(open_fds[random() % open_fds.size()], size);
        break;
      }
    }
    if (gone(rc)) break;
    ops->fetch_add(1);
    if (open_fds.size() > 4) {
      close(open_fds.front());
      open_fds.erase(open_fds.begin());
    }
  }
  for (int fd : open_fds) close(fd);
}

CommandResult Fsck(const MountedFs& fs) {
  return Shell(std::string(StripefsBinary()) + " fsck " + fs.meta_dir() + " 2>&1");
}

// Rounds of kill, remount, clean unmount and fsck on a filesystem mounted
// with `mount_options`.
void KillAndCheckRounds(const std::vector<std::string>& mount_options) {
  MountedFs::Options options;
  options.mount_options = mount_options;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(mkdir(fs.Path("work").c_str(), 0755), 0);
  const int rounds = Rounds();
  for (int round = 0; round < rounds; ++round) {
    int dir_fd = open(fs.Path("work").c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dir_fd, 0) << "round " << round;
    std::atomic<int> ops{0};
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int id = 0; id < 4; ++id) writers.emplace_back(Writer, dir_fd, id, round, &ops, &stop);
    // Kill at a point that moves from round to round.
    const int wanted = 150 + 37 * (round % 7);
    const bool busy = WaitFor([&] { return ops.load() >= wanted; }, 30000);
    fs.Kill();
    stop.store(true);
    for (auto& writer : writers) writer.join();
    close(dir_fd);
    ASSERT_TRUE(busy) << "round " << round << ": only " << ops.load() << " ops";

    // The remount settles what the kill left in flight; every file reads
    // whole; a clean unmount lets fsck open the store.
    ASSERT_TRUE(fs.Mount()) << "round " << round << "\n" << fs.Log();
    CommandResult read = Shell("find " + fs.Path("work") + " -type f -exec cat {} + >/dev/null");
    EXPECT_EQ(read.exit_code, 0) << "round " << round << ": " << read.output;
    ASSERT_TRUE(fs.Unmount()) << "round " << round;
    CommandResult checked = Fsck(fs);
    EXPECT_EQ(checked.exit_code, 0) << "round " << round << ": " << ops.load() << " ops\n"
                                    << checked.output;
    if (checked.exit_code != 0) break;  // the next rounds would repeat the residue
    ASSERT_TRUE(fs.Mount()) << "round " << round;
  }
  // The kills did catch writes in flight: some mount had objects to settle.
  EXPECT_NE(fs.Log().find(": objects settled to its "), std::string::npos) << fs.Log();
}

TEST(CrashResidueTest, FsckIsCleanAfterEachKillAndRemount) { KillAndCheckRounds({}); }

// The writeback cache sends several writes past the end at once, and
// writes after close: the same must hold.
TEST(CrashResidueTest, FsckIsCleanAfterEachKillAndRemountWithWritebackCache) {
  KillAndCheckRounds({"cache=writeback"});
}

// The same residue made by hand, so each repair is seen: files killed with
// a writing mark, then objects changed while unmounted as the kill could
// have left them.
TEST(CrashResidueTest, MountCutsRecordsAndRemovesWhatWritesInFlightLeft) {
  MountedFs::Options options;
  options.stripe_count = 2;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string head(100, 'h');
  // grown: a growing write (mark stored); its size is 100 bytes.
  int grown = open(fs.Path("grown").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(grown, 0);
  ASSERT_TRUE(PwriteAll(grown, head, 0));
  // sparse: 2 MiB by truncate, closed, then a write creating stripe 0's
  // object (mark stored); stripe 1's object was never written.
  ASSERT_TRUE(WriteFile(fs.Path("sparse"), ""));
  ASSERT_EQ(truncate(fs.Path("sparse").c_str(), 2 << 20), 0);
  int sparse = open(fs.Path("sparse").c_str(), O_RDWR);
  ASSERT_GE(sparse, 0);
  ASSERT_TRUE(PwriteAll(sparse, "s", 0));
  const std::vector<std::string> grown_objects = ObjectPaths(fs, fs.Path("grown"));
  const std::vector<std::string> sparse_objects = ObjectPaths(fs, fs.Path("sparse"));
  ASSERT_EQ(grown_objects.size(), 2u);
  ASSERT_EQ(sparse_objects.size(), 2u);
  fs.Kill();
  close(grown);
  close(sparse);

  // A write's tail past the recorded size; an object the size does not
  // reach and the file never recorded; one it reaches, never recorded.
  ASSERT_EQ(AppendToObject(grown_objects[0], 5000, 'G').exit_code, 0);
  ASSERT_EQ(AppendToObject(grown_objects[1], 10, 'H').exit_code, 0);
  ASSERT_EQ(AppendToObject(sparse_objects[1], 50, 'J').exit_code, 0);

  ASSERT_TRUE(fs.Mount()) << fs.Log();
  EXPECT_EQ(Stat(grown_objects[0]).st_size, 100);
  EXPECT_FALSE(Exists(grown_objects[1])) << "an unrecorded object the size does not reach";
  EXPECT_EQ(ReadFile(fs.Path("grown")), head);
  auto sparse_data = ReadFile(fs.Path("sparse"));
  ASSERT_TRUE(sparse_data.has_value());
  ASSERT_EQ(sparse_data->size(), 2u << 20);
  EXPECT_EQ(sparse_data->substr(1 << 20, 51), std::string(50, 'J') + '\0');
  ASSERT_TRUE(fs.Unmount());
  CommandResult checked = Fsck(fs);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;

  // Recorded, so unlink frees it.
  ASSERT_TRUE(fs.Mount());
  ASSERT_EQ(unlink(fs.Path("sparse").c_str()), 0);
  EXPECT_TRUE(WaitFor([&] { return !Exists(sparse_objects[1]); }))
      << "the object the mount recorded outlived its file";
}

}  // namespace
}  // namespace sfs::test
