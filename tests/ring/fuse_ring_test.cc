// What FuseRing promises without a FUSE connection (the integration suite
// runs every mount test over the ring too): it is made and torn down
// whole, and before Start no reply is taken for it.
#include "ring/fuse_ring.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <linux/fuse.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/thread_nice.h"

namespace sfs::ring {
namespace {

size_t ThreadCount() {
  size_t n = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

TEST(FuseRingTest, RefusesOptionsItCannotServe) {
  Options options;
  options.queues = 1;
  options.queue_depth = 8;
  options.payload_size = 8192;
  EXPECT_EQ(FuseRing::Create(options).status().err(), EINVAL);  // no serve callback
  options.serve = [](void*, char*, size_t) {};
  options.payload_size = 4096;  // below the kernel's 8 KiB minimum
  EXPECT_EQ(FuseRing::Create(options).status().err(), EINVAL);
  options.payload_size = 8192;
  options.queue_depth = 0;
  EXPECT_EQ(FuseRing::Create(options).status().err(), EINVAL);
}

TEST(FuseRingTest, MadeAndStoppedWithoutAConnectionTakesNoReply) {
  Options options;
  options.queues = 2;
  options.queue_depth = 8;
  options.payload_size = 10000;  // rounded up to whole pages
  options.serve = [](void*, char*, size_t) { ADD_FAILURE() << "nothing to serve"; };
  const size_t threads_before = ThreadCount();
  auto made = FuseRing::Create(options);
  if (!made.ok() && (made.err() == ENOSYS || made.err() == EPERM)) {
    GTEST_SKIP() << "io_uring is not available here: " << made.status().ToString();
  }
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<FuseRing> ring = std::move(made).value();
  EXPECT_EQ(ThreadCount(), threads_before + 2);  // a thread per queue, waiting for Start
  EXPECT_EQ(ring->options().payload_size % 4096, 0u);
  EXPECT_GE(ring->options().payload_size, 10000u);
  EXPECT_FALSE(ring->serving());
  EXPECT_FALSE(FuseRing::OnQueueThread());
  EXPECT_TRUE(FuseRing::CurrentPayload().empty());
  // Off a queue thread nothing is started: the caller must do it itself.
  struct NeverDone final : IoCompletion {
    void IoDone(int) override { ADD_FAILURE() << "nothing was started"; }
  } never;
  char byte = 0;
  iovec one{&byte, 1};
  EXPECT_FALSE(FuseRing::StartIo(FuseRing::Direction::kRead, 0, &one, 1, 0, &never));
  EXPECT_FALSE(FuseRing::StartIo(FuseRing::Direction::kWrite, 1, &one, 1, 0, &never));
  fuse_out_header out{sizeof(fuse_out_header), 0, 42};
  iovec iov[1] = {{&out, sizeof(out)}};
  EXPECT_FALSE(ring->Reply(iov, 1).has_value());  // not started: /dev/fuse's
  ring->Stop();
  EXPECT_EQ(ThreadCount(), threads_before);
  ring->Stop();  // twice is once
}

// Queue threads run at the nice value the options say (a queue thread is
// the only server of its CPU's requests): root may lower it.
TEST(FuseRingTest, QueueThreadsTakeTheirNiceValue) {
  if (geteuid() != 0) GTEST_SKIP() << "lowering a nice value needs CAP_SYS_NICE";
  Options options;
  options.queues = 2;
  options.queue_depth = 8;
  options.payload_size = 8192;
  options.queue_nice = -7;
  options.serve = [](void*, char*, size_t) { ADD_FAILURE() << "nothing to serve"; };
  auto made = FuseRing::Create(options);
  if (!made.ok() && (made.err() == ENOSYS || made.err() == EPERM)) {
    GTEST_SKIP() << "io_uring is not available here: " << made.status().ToString();
  }
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  std::unique_ptr<FuseRing> ring = std::move(made).value();
  // The threads set it as they begin, before waiting for Start.
  std::vector<int> nice;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    nice = test::NiceOfThreads(getpid(), "fuse-ring-");
    if (nice == std::vector<int>{-7, -7}) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(nice, (std::vector<int>{-7, -7}));
  ring->Stop();
}

TEST(FuseRingTest, PossibleCpusCountsTheKernelsQueues) {
  const unsigned cpus = PossibleCpus();
  EXPECT_GE(cpus, 1u);
  EXPECT_LE(cpus, 8192u);
}

}  // namespace
}  // namespace sfs::ring
