// One user cannot exhaust the daemon's file descriptors (issue 8, item 2):
// with the daemon limited to 256 descriptors, a user holding several times
// that many files open (each with data on both its stripes) works, another
// user meanwhile reads, writes and creates without a single error, and
// nothing is left failing once the first one lets go.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr int kDaemonLimit = 256;
constexpr int kHeld = 1200;  // files the first user keeps open
constexpr off_t kSecondStripe = 1 << 20;

std::string Block(int i) { return RandomBytes(4096, static_cast<uint64_t>(i) + 100); }

// What another user does meanwhile: creates, writes, reads back, stats,
// makes a directory, removes; returns the number of failed steps.
int OtherUsersWork(const MountedFs& fs, const std::string& tag) {
  return RunAs(1, 1, [&] {
    int failures = 0;
    const std::string dir = fs.Path("daemon-" + tag);
    if (mkdir(dir.c_str(), 0755) != 0) failures++;
    for (int i = 0; i < 40; ++i) {
      const std::string path = dir + "/f" + std::to_string(i);
      const std::string data = RandomBytes(2 << 20, static_cast<uint64_t>(i));
      if (!WriteFile(path, data)) failures++;
      if (ReadFile(path) != data) failures++;
      struct stat st;
      if (stat(path.c_str(), &st) != 0 || st.st_size != static_cast<off_t>(data.size())) failures++;
      if (i % 2 == 0 && unlink(path.c_str()) != 0) failures++;
    }
    return std::min(failures, 254);
  });
}

TEST(DescriptorsTest, ManyOpenFilesOfOneUserStarveNobody) {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  options.nofile_limit = kDaemonLimit;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(chmod(fs.mnt().c_str(), 0777), 0);

  int ready[2], release[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(release), 0);
  pid_t holder = fork();
  if (holder == 0) {
    close(ready[0]);
    close(release[1]);
    const rlimit enough{kHeld + 64, kHeld + 64};
    if (setrlimit(RLIMIT_NOFILE, &enough) != 0 || setgid(kNogroup) != 0 || setuid(kNobody) != 0) {
      _exit(2);
    }
    int failures = 0;
    std::vector<int> fds;
    for (int i = 0; i < kHeld; ++i) {
      int fd = open(fs.Path("held" + std::to_string(i)).c_str(), O_CREAT | O_RDWR, 0600);
      if (fd < 0) {
        failures++;
        continue;
      }
      fds.push_back(fd);
      const std::string block = Block(i);
      if (!PwriteAll(fd, block, 0) || !PwriteAll(fd, block, kSecondStripe)) failures++;
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      const std::string block = Block(static_cast<int>(i));
      if (PreadAll(fds[i], 4096, 0) != block || PreadAll(fds[i], 4096, kSecondStripe) != block) {
        failures++;
      }
    }
    (void)!write(ready[1], &failures, sizeof(failures));
    char byte;
    (void)!read(release[0], &byte, 1);  // until the test lets go
    for (int fd : fds) {
      if (close(fd) != 0) failures++;
    }
    _exit(failures == 0 ? 0 : 1);
  }
  close(ready[1]);
  close(release[0]);
  int held_failures = -1;
  ASSERT_EQ(read(ready[0], &held_failures, sizeof(held_failures)),
            static_cast<ssize_t>(sizeof(held_failures)));
  EXPECT_EQ(held_failures, 0) << "the holder's own I/O failed";

  // While the files are held: another user works without an error, and
  // root reads the holder's data.
  EXPECT_EQ(OtherUsersWork(fs, "during"), 0);
  for (int i = 0; i < kHeld; i += 97) {
    const auto data = ReadFile(fs.Path("held" + std::to_string(i)));
    ASSERT_TRUE(data.has_value()) << strerror(errno);
    EXPECT_EQ(data->substr(0, 4096), Block(i));
    EXPECT_EQ(data->substr(kSecondStripe, 4096), Block(i));
  }

  close(release[1]);
  int status = 0;
  ASSERT_EQ(waitpid(holder, &status, 0), holder);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(ready[0]);

  // After he let go, no error remains.
  EXPECT_EQ(OtherUsersWork(fs, "after"), 0);
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(WriteFile(fs.Path("root" + std::to_string(i)), "r")) << i << strerror(errno);
  }
  const std::string log = fs.Log();
  EXPECT_EQ(log.find("Too many open files"), std::string::npos) << log;
  EXPECT_NE(log.find("open objects per OST"), std::string::npos) << log;
}

}  // namespace
}  // namespace sfs::test
