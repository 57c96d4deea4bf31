// The backing store is private to root (issue 8, item 1): after a workload
// that creates files, extended attributes, settings and log lines, not one
// byte of the metadata directory, the OST directories or the log can be read
// by another user, whatever the umask stripefs was started with; and a mount
// repairs a store directory that others can enter.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

namespace stdfs = std::filesystem;

// Every path under the backing store (the directories themselves included)
// and the log, as root sees them.
std::vector<std::string> BackingStore(const MountedFs& fs, int osts) {
  std::vector<std::string> paths = {fs.meta_dir(), fs.root() + "/stripefs.log"};
  std::vector<std::string> tops = {fs.meta_dir()};
  for (int i = 0; i < osts; ++i) {
    tops.push_back(fs.ost_dir(i));
    paths.push_back(fs.ost_dir(i));
  }
  for (const std::string& top : tops) {
    std::error_code ec;
    for (auto it = stdfs::recursive_directory_iterator(top, ec);
         !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
      paths.push_back(it->path().string());
    }
  }
  return paths;
}

// How many of `paths` uid nobody can open for reading (files) or list or
// enter (directories).
int ReadableByNobody(const std::vector<std::string>& paths) {
  return RunAs(kNobody, kNogroup, [&] {
    int readable = 0;
    for (const std::string& path : paths) {
      int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
      if (fd >= 0) {
        char byte;
        if (read(fd, &byte, 1) >= 0) readable++;
        close(fd);
      }
      struct stat st;
      if (stat((path + "/.").c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        // A directory others may enter would expose what is below it.
        if (access(path.c_str(), X_OK) == 0) readable++;
      }
    }
    return std::min(readable, 254);
  });
}

std::string Mode(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "missing";
  char text[8];
  snprintf(text, sizeof(text), "%04o", st.st_mode & 07777);
  return text;
}

TEST(BackingStoreTest, NotOneByteReadableByOthersWhateverTheUmask) {
  const mode_t old_umask = umask(0);  // inherited by mkfs and the daemon
  MountedFs::Options options;
  options.osts = 3;
  options.stripe_count = 3;
  MountedFs fs(options);
  umask(old_umask);
  ASSERT_TRUE(fs.mounted());

  // Files of two users, some private, with data on every OST, xattrs,
  // settings and a refused setting (a warning line in the log).
  ASSERT_EQ(chmod(fs.mnt().c_str(), 0777), 0);
  ASSERT_TRUE(WriteFile(fs.Path("root-secret"), RandomBytes(3 << 20, 1), 0600));
  ASSERT_EQ(setxattr(fs.Path("root-secret").c_str(), "user.note", "classified", 10, 0), 0);
  ASSERT_EQ(mkdir(fs.Path("dir").c_str(), 0700), 0);
  ASSERT_TRUE(WriteFile(fs.Path("dir/open"), "anyone may read me", 0644));
  ASSERT_EQ(
      setxattr(fs.mnt().c_str(), "user.stripefs.nrs_tbf_rule", "start r uid={7} rate=5", 22, 0), 0);
  ASSERT_NE(setxattr(fs.mnt().c_str(), "user.stripefs.rtds_weight", "bad", 3, 0), 0);
  const int wrote = RunAs(kNobody, kNogroup, [&] {
    return WriteFile(fs.Path("nobodys-diary"), RandomBytes(1 << 20, 2), 0600) ? 0 : 1;
  });
  ASSERT_EQ(wrote, 0);
  ASSERT_FALSE(fs.Objects(0).empty());

  const std::vector<std::string> mounted = BackingStore(fs, options.osts);
  ASSERT_GT(mounted.size(), 10u);
  EXPECT_EQ(ReadableByNobody(mounted), 0);
  // Stricter than unreadable: nothing in the store is open to group or others.
  for (const std::string& path : mounted) {
    const std::string mode = Mode(path);
    EXPECT_TRUE(mode == "0700" || mode == "0600") << path << " has mode " << mode;
  }

  // After a clean stop too (the store is closed, the WAL flushed).
  ASSERT_TRUE(fs.Unmount());
  const std::vector<std::string> stopped = BackingStore(fs, options.osts);
  EXPECT_EQ(ReadableByNobody(stopped), 0);
  // The files inside are still the mount's: nobody reads his own through it.
  ASSERT_TRUE(fs.Mount());
  EXPECT_EQ(
      RunAs(kNobody, kNogroup,
            [&] { return ReadFile(fs.Path("nobodys-diary")) == RandomBytes(1 << 20, 2) ? 0 : 1; }),
      0);
}

TEST(BackingStoreTest, MountRepairsStoreDirectoriesOthersCanEnter) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), RandomBytes(4 << 20, 3)));
  ASSERT_TRUE(fs.Unmount());
  // As an older mkfs, or an admin's chmod, would have left them.
  ASSERT_EQ(chmod(fs.meta_dir().c_str(), 0755), 0);
  ASSERT_EQ(chmod(fs.ost_dir(2).c_str(), 0711), 0);
  EXPECT_GT(ReadableByNobody({fs.meta_dir(), fs.ost_dir(2)}), 0);  // the test can see it

  ASSERT_TRUE(fs.Mount());
  EXPECT_EQ(Mode(fs.meta_dir()), "0700");
  EXPECT_EQ(Mode(fs.ost_dir(2)), "0700");
  EXPECT_EQ(ReadableByNobody(BackingStore(fs, 4)), 0);
  const std::string log = fs.Log();
  EXPECT_NE(log.find("metadata directory " + fs.meta_dir() + " was open to other users"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("OST directory " + fs.ost_dir(2) + " was open to other users"),
            std::string::npos)
      << log;
  EXPECT_EQ(ReadFile(fs.Path("f")), RandomBytes(4 << 20, 3));
}

}  // namespace
}  // namespace sfs::test
