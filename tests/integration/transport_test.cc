// The FUSE transport a mount uses (issue 33): io_uring=auto follows the
// admin's module parameter and says which it took; io_uring=on refuses to
// mount without it, with the reason; io_uring=off never makes a queue. The
// same binary runs with the parameter off (integration.*, unless the admin
// turned it on) and on (integration_uring.*, whose fixture sets it): each
// case checks what that state must give.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"
#include "tests/thread_nice.h"

namespace sfs::test {
namespace {

constexpr const char* kParam = "/sys/module/fuse/parameters/enable_uring";

// Y / N, or "" on a kernel without FUSE over io_uring.
std::string UringParam() {
  std::ifstream in(kParam);
  std::string value;
  in >> value;
  return value;
}

size_t RingThreads(pid_t pid) { return NiceOfThreads(pid, "fuse-ring-").size(); }

MountedFs::Options WithTransport(const std::string& mode) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  options.mount_options = {"io_uring=" + mode};  // after the run's own: this one counts
  return options;
}

TEST(TransportTest, AutoFollowsTheModuleParameterAndSaysWhich) {
  const std::string param = UringParam();
  MountedFs fs(WithTransport("auto"));
  ASSERT_TRUE(fs.mounted()) << fs.Log();
  ASSERT_TRUE(WriteFile(fs.Path("f"), std::string(300000, 'a')));
  EXPECT_EQ(ReadFile(fs.Path("f")), std::string(300000, 'a'));
  if (param == "Y" || param == "1") {
    EXPECT_TRUE(Contains(fs.Log(), "FUSE requests come over io_uring")) << fs.Log();
    EXPECT_GE(RingThreads(fs.daemon_pid()), 1u);
  } else {
    // One line, with the reason.
    EXPECT_TRUE(Contains(fs.Log(), "FUSE requests come over /dev/fuse: ")) << fs.Log();
    EXPECT_TRUE(Contains(fs.Log(), param.empty() ? "no FUSE over io_uring" : "is off")) << fs.Log();
    EXPECT_EQ(RingThreads(fs.daemon_pid()), 0u);
  }
  EXPECT_TRUE(fs.Unmount());
}

TEST(TransportTest, OnMountsOnlyWhereTheKernelOffersIt) {
  const std::string param = UringParam();
  MountedFs::Options options = WithTransport("on");
  options.capture_stderr = true;
  MountedFs fs(options);
  if (param == "Y" || param == "1") {
    ASSERT_TRUE(fs.mounted()) << fs.Log();
    EXPECT_GE(RingThreads(fs.daemon_pid()), 1u);  // one per possible CPU
    ASSERT_TRUE(WriteFile(fs.Path("g"), "over the ring"));
    EXPECT_EQ(ReadFile(fs.Path("g")), "over the ring");
    EXPECT_TRUE(fs.Unmount());
    // What the queues did, said once at the end.
    EXPECT_TRUE(Contains(fs.Log(), "FUSE over io_uring served ")) << fs.Log();
  } else {
    EXPECT_FALSE(fs.mounted());
    EXPECT_TRUE(Contains(fs.Log() + fs.Stderr(), "io_uring=on, but")) << fs.Log() << fs.Stderr();
  }
}

// A queue thread is the only server of its CPU's requests, so it runs
// ahead of the callers there (nice -20 unless uring_nice says otherwise;
// docs/design.md, "ORR over the ring").
TEST(TransportTest, QueueThreadsRunAtUringNice) {
  const std::string param = UringParam();
  if (param != "Y" && param != "1") GTEST_SKIP() << "FUSE over io_uring is off here";
  if (geteuid() != 0) GTEST_SKIP() << "a nice value below 0 needs CAP_SYS_NICE";
  for (const auto& [option, want] : {std::pair<std::string, int>{"", -20}, {"uring_nice=5", 5}}) {
    MountedFs::Options options = WithTransport("on");
    if (!option.empty()) options.mount_options.push_back(option);
    MountedFs fs(options);
    ASSERT_TRUE(fs.mounted()) << fs.Log();
    ASSERT_TRUE(WriteFile(fs.Path("n"), "served"));  // the queues serve by now
    EXPECT_EQ(ReadFile(fs.Path("n")), "served");
    const std::vector<int> nice = NiceOfThreads(fs.daemon_pid(), "fuse-ring-");
    ASSERT_GE(nice.size(), 1u);
    for (int n : nice) EXPECT_EQ(n, want) << option;
    EXPECT_TRUE(fs.Unmount());
  }
}

TEST(TransportTest, OffNeverMakesAQueue) {
  MountedFs fs(WithTransport("off"));
  ASSERT_TRUE(fs.mounted()) << fs.Log();
  ASSERT_TRUE(WriteFile(fs.Path("h"), "over /dev/fuse"));
  EXPECT_EQ(ReadFile(fs.Path("h")), "over /dev/fuse");
  EXPECT_EQ(RingThreads(fs.daemon_pid()), 0u);
  EXPECT_FALSE(Contains(fs.Log(), "come over io_uring")) << fs.Log();
  EXPECT_TRUE(fs.Unmount());
}

}  // namespace
}  // namespace sfs::test
