// The stripefs command as an administrator uses it: mount without -f runs
// in the background and returns once the mount is up (or fails with the
// error on the terminal and exit code 1), umount stops it, and the log level
// comes from -o log_level= or $STRIPEFS_LOG_LEVEL.
#include <fcntl.h>
#include <sys/file.h>
#include <gtest/gtest.h>
#include <sys/xattr.h>

#include <cerrno>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

bool Mounted(const std::string& path) {
  return Shell("grep -q ' " + path + " fuse.stripefs ' /proc/mounts").exit_code == 0;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A formatted filesystem, unmounted: the test mounts it with the CLI.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs_.mounted());
    ASSERT_TRUE(fs_.Unmount());
    bin_ = StripefsBinary();
  }
  void TearDown() override {
    // A background mount a failed test left behind (not the harness's own,
    // which MountedFs cleans up).
    if (!fs_.mounted() && Mounted(fs_.mnt())) Shell(bin_ + " umount " + fs_.mnt());
  }
  std::string Mount(const std::string& options) {
    return bin_ + " mount " + fs_.meta_dir() + " " + fs_.mnt() + options;
  }

  MountedFs fs_;
  std::string bin_;
};

TEST_F(CliTest, BackgroundMountServesAndUmountStopsIt) {
  const std::string log = fs_.root() + "/daemon.log";
  CommandResult mounted = Shell(Mount(" -o log_level=debug,log_file=" + log));
  ASSERT_EQ(mounted.exit_code, 0) << mounted.output;
  // The command returned only once the mount was up.
  ASSERT_TRUE(Mounted(fs_.mnt()));
  ASSERT_TRUE(WriteFile(fs_.Path("f"), "served by the daemon"));
  EXPECT_EQ(ReadFile(fs_.Path("f")), "served by the daemon");
  // log_level=debug: an everyday miss is logged at debug.
  char value[16];
  EXPECT_EQ(getxattr(fs_.Path("f").c_str(), "user.absent", value, sizeof(value)), -1);
  CommandResult stopped = Shell(bin_ + " umount " + fs_.mnt());
  EXPECT_EQ(stopped.exit_code, 0) << stopped.output;
  EXPECT_FALSE(Mounted(fs_.mnt()));
  // umount returns when the kernel lets go; the daemon flushes its log (debug
  // lines are buffered) as it exits, a moment later.
  const std::string line = "[debug] getxattr: meta: no xattr 'user.absent'";
  EXPECT_TRUE(WaitFor([&] { return ReadText(log).find(line) != std::string::npos; }, 10000))
      << ReadText(log);

  // Mounted again by the harness: the data is there.
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(ReadFile(fs_.Path("f")), "served by the daemon");
}

TEST_F(CliTest, BackgroundMountFailureReachesTheTerminal) {
  ASSERT_EQ(rename((fs_.ost_dir(2) + "/.stripefs-ost").c_str(),
                   (fs_.root() + "/label-away").c_str()), 0);
  CommandResult refused = Shell(Mount(""));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("OST 2"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("no stripefs label"), std::string::npos) << refused.output;
  EXPECT_FALSE(Mounted(fs_.mnt()));
  ASSERT_EQ(rename((fs_.root() + "/label-away").c_str(),
                   (fs_.ost_dir(2) + "/.stripefs-ost").c_str()), 0);
  ASSERT_TRUE(fs_.Mount());
}

TEST_F(CliTest, LogLevelFromTheEnvironment) {
  const std::string log = fs_.root() + "/env.log";
  CommandResult mounted =
      Shell("STRIPEFS_LOG_LEVEL=warn " + Mount(" -o log_file=" + log));
  ASSERT_EQ(mounted.exit_code, 0) << mounted.output;
  ASSERT_TRUE(WriteFile(fs_.Path("g"), "x"));
  // Bad input is logged at warn.
  EXPECT_EQ(setxattr(fs_.mnt().c_str(), "user.stripefs.nope", "1", 1, 0), -1);
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(Shell(bin_ + " umount " + fs_.mnt()).exit_code, 0);
  // At warn, that line is written and the info lines of a mount are not.
  const std::string text = ReadText(log);
  EXPECT_NE(text.find("[warning] setxattr user.stripefs.nope: unknown stripefs attribute"),
            std::string::npos) << text;
  EXPECT_EQ(text.find("[info]"), std::string::npos) << text;
  ASSERT_TRUE(fs_.Mount());
}

TEST_F(CliTest, MountWaitsForADaemonStillClosingTheStore) {
  // umount returns once the kernel lets go; the old daemon may still be
  // closing the metadata store, which it holds META/stripefs.lock for.
  ASSERT_TRUE(fs_.Unmount());
  const std::string lock_path = fs_.meta_dir() + "/stripefs.lock";
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  std::thread closing([fd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    close(fd);  // the old daemon exits
  });
  const auto start = std::chrono::steady_clock::now();
  const bool mounted = fs_.Mount();
  const auto waited = std::chrono::steady_clock::now() - start;
  closing.join();
  EXPECT_TRUE(mounted) << fs_.Log();
  // Not a speed bound: the mount cannot be up before the lock is released.
  EXPECT_GE(waited, std::chrono::milliseconds(450));
}

TEST_F(CliTest, BadMountOptionIsRefused) {
  CommandResult bad = Shell(Mount(" -o ost_threads=0"));
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_NE(bad.output.find("ost_threads=0"), std::string::npos) << bad.output;
  EXPECT_FALSE(Mounted(fs_.mnt()));
  ASSERT_TRUE(fs_.Mount());
}

// An OST directory under the mount point would be hidden by the mount and
// feed the filesystem into itself: mount refuses it.
TEST_F(CliTest, OstInsideTheMountPointIsRefused) {
  const std::string dir = fs_.root() + "/nested";
  CommandResult formatted = Shell(bin_ + " mkfs --meta " + dir + "/meta --ost " + dir +
                                  "/mnt/ost0 --ost " + dir + "/ost1");
  ASSERT_EQ(formatted.exit_code, 0) << formatted.output;
  CommandResult refused = Shell(bin_ + " mount " + dir + "/meta " + dir + "/mnt");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("overlaps the mount point"), std::string::npos) << refused.output;
  EXPECT_FALSE(Mounted(dir + "/mnt"));
  ASSERT_TRUE(fs_.Mount());
}

}  // namespace
}  // namespace sfs::test
