// The daemon keeps its FUSE worker threads (issue 9): thousands of
// metadata and data requests run on the same few threads instead of a new
// thread per request. A watcher lists /proc/<daemon>/task all along the
// workload; every thread id it sees that was not there before the workload
// began is a thread the daemon created for it.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "fs/fuse_workers.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

// The threads the daemon may start to serve requests: the receive loop's
// worker limit, by the rule fs/mount.cc follows (two per CPU, at least 4).
size_t MaxServingThreads() { return fs::FuseWorkersFor(fs::UsableCpus()); }

std::set<int> ThreadsOf(pid_t pid) {
  std::set<int> tids;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return tids;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') tids.insert(std::atoi(e->d_name));
  }
  closedir(d);
  return tids;
}

// Lists the daemon's threads over and over until stopped; keeps every id seen.
class ThreadWatcher {
 public:
  explicit ThreadWatcher(pid_t pid) : pid_(pid), thread_([this] { Watch(); }) {}
  ~ThreadWatcher() { Stop(); }
  std::set<int> Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    return seen_;
  }

 private:
  void Watch() {
    while (!stop_.load()) {
      for (int tid : ThreadsOf(pid_)) seen_.insert(tid);
      usleep(200);
    }
  }
  const pid_t pid_;
  std::atomic<bool> stop_{false};
  std::set<int> seen_;  // only the watcher thread touches it until Stop joins
  std::thread thread_;
};

// Creates, writes, reads back, stats and removes `count` files in `dir`;
// returns the number of failed steps.
int Churn(const std::string& dir, int count) {
  int failures = 0;
  const std::string data = RandomBytes(8192, 7);
  for (int i = 0; i < count; ++i) {
    const std::string path = dir + "/f" + std::to_string(i);
    if (!WriteFile(path, data)) failures++;
    if (ReadFile(path) != data) failures++;
    struct stat st;
    for (int k = 0; k < 4; ++k) {
      if (stat(path.c_str(), &st) != 0) failures++;
    }
    if (unlink(path.c_str()) != 0) failures++;
  }
  return failures;
}

TEST(ThreadsTest, WorkersAreKeptAcrossThousandsOfRequests) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  // Warm up: the workers a burst of four callers needs exist from now on.
  std::vector<std::thread> warm;
  for (int t = 0; t < 4; ++t) {
    const std::string dir = fs.Path("warm" + std::to_string(t));
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    warm.emplace_back([dir] { Churn(dir, 50); });
  }
  for (auto& t : warm) t.join();

  const std::set<int> before = ThreadsOf(fs.daemon_pid());
  ASSERT_FALSE(before.empty());
  ThreadWatcher watcher(fs.daemon_pid());
  // About 4 x 600 x 9 = 21,600 requests (lookups, creates, writes, reads,
  // getattrs, releases, unlinks) from four callers at once.
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    const std::string dir = fs.Path("warm" + std::to_string(t));
    callers.emplace_back([dir, &failures] { failures += Churn(dir, 600); });
  }
  for (auto& t : callers) t.join();
  const std::set<int> seen = watcher.Stop();
  EXPECT_EQ(failures.load(), 0);

  std::vector<int> created;
  for (int tid : seen) {
    if (before.count(tid) == 0) created.push_back(tid);
  }
  // Four callers may need a few more workers than the warm-up made, never
  // more than the limit; a thread per request would be thousands.
  EXPECT_LE(created.size(), MaxServingThreads())
      << created.size() << " threads created for the workload";
  EXPECT_LE(ThreadsOf(fs.daemon_pid()).size(), before.size() + MaxServingThreads());
}

}  // namespace
}  // namespace sfs::test
