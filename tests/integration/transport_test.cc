// The FUSE transport a mount uses (issue 33): io_uring=auto follows the
// admin's module parameter and says which it took; io_uring=on refuses to
// mount without it, with the reason; io_uring=off never makes a queue. The
// same binary runs with the parameter off (integration.*, unless the admin
// turned it on) and on (integration_uring.*, whose fixture sets it): each
// case checks what that state must give.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "file_util.h"
#include "mounted_fs.h"

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

size_t RingThreads(pid_t pid) {
  size_t n = 0;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(dir + "/" + e->d_name + "/comm");
    std::string name;
    comm >> name;
    n += name.rfind("fuse-ring-", 0) == 0;
  }
  closedir(d);
  return n;
}

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
  } else {
    EXPECT_FALSE(fs.mounted());
    EXPECT_TRUE(Contains(fs.Log() + fs.Stderr(), "io_uring=on, but")) << fs.Log() << fs.Stderr();
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
