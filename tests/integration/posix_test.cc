// POSIX namespace and metadata semantics on a real mount, checked against
// what a local filesystem does: directories, links, rename, unlink of open
// files, attributes, xattrs, sync calls, statfs and readdir under change.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

class PosixTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs_.mounted()); }

  std::string P(const std::string& relative) const { return fs_.Path(relative); }

  size_t TotalObjects() const {
    size_t total = 0;
    for (int i = 0; i < 4; ++i) total += fs_.Objects(i).size();
    return total;
  }

  MountedFs fs_;
};

int Renameat2(const std::string& from, const std::string& to, unsigned flags) {
  return static_cast<int>(
      syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags));
}

TEST_F(PosixTest, RegularFileCreateWriteReadStat) {
  const std::string data = RandomBytes(3 * 1024 * 1024 + 123, 1);  // crosses stripes
  ASSERT_TRUE(WriteFile(P("f"), data, 0640));
  struct stat st = Stat(P("f"));
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_size, static_cast<off_t>(data.size()));
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_TRUE(SameBytes(ReadFile(P("f")), data));

  // O_EXCL on an existing name, and a missing name.
  EXPECT_EQ(ErrnoOf(open(P("f").c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644)), EEXIST);
  EXPECT_EQ(ErrnoOf(open(P("missing").c_str(), O_RDONLY)), ENOENT);
  // O_TRUNC empties it.
  ASSERT_TRUE(WriteFile(P("f"), "short"));
  EXPECT_EQ(ReadFile(P("f")), "short");
  EXPECT_EQ(Stat(P("f")).st_size, 5);
}

TEST_F(PosixTest, DirectoriesNlinkRmdirAndErrors) {
  const nlink_t root_links = Stat(fs_.mnt()).st_nlink;
  ASSERT_EQ(mkdir(P("d").c_str(), 0750), 0);
  struct stat st = Stat(P("d"));
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  EXPECT_EQ(st.st_nlink, 2u);
  EXPECT_EQ(Stat(fs_.mnt()).st_nlink, root_links + 1);

  ASSERT_EQ(mkdir(P("d/a").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("d/b").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("d/file"), "x"));  // files do not count
  EXPECT_EQ(Stat(P("d")).st_nlink, 4u);

  EXPECT_EQ(ErrnoOf(mkdir(P("d/a").c_str(), 0755)), EEXIST);
  EXPECT_EQ(ErrnoOf(rmdir(P("d").c_str())), ENOTEMPTY);
  EXPECT_EQ(ErrnoOf(rmdir(P("d/file").c_str())), ENOTDIR);
  EXPECT_EQ(ErrnoOf(unlink(P("d/a").c_str())), EISDIR);
  EXPECT_EQ(ErrnoOf(mkdir(P("d/file/x").c_str(), 0755)), ENOTDIR);
  EXPECT_EQ(ErrnoOf(rmdir(P("d/nothing").c_str())), ENOENT);

  ASSERT_EQ(rmdir(P("d/a").c_str()), 0);
  EXPECT_EQ(Stat(P("d")).st_nlink, 3u);
  EXPECT_FALSE(Exists(P("d/a")));
  ASSERT_EQ(rmdir(P("d/b").c_str()), 0);
  ASSERT_EQ(unlink(P("d/file").c_str()), 0);
  ASSERT_EQ(rmdir(P("d").c_str()), 0);
  EXPECT_FALSE(Exists(P("d")));
  EXPECT_EQ(Stat(fs_.mnt()).st_nlink, root_links);
}

TEST_F(PosixTest, SymlinksReadAndResolve) {
  ASSERT_TRUE(WriteFile(P("target"), "through the link"));
  ASSERT_EQ(symlink("target", P("rel").c_str()), 0);
  ASSERT_EQ(symlink("/nonexistent/dangling", P("dangling").c_str()), 0);
  char buf[256];
  ssize_t n = readlink(P("rel").c_str(), buf, sizeof(buf));
  ASSERT_EQ(n, 6);
  EXPECT_EQ(std::string(buf, n), "target");
  n = readlink(P("dangling").c_str(), buf, sizeof(buf));
  ASSERT_GT(n, 0);
  EXPECT_EQ(std::string(buf, n), "/nonexistent/dangling");

  EXPECT_TRUE(S_ISLNK(Stat(P("rel")).st_mode));
  EXPECT_EQ(Stat(P("rel")).st_size, 6);
  EXPECT_EQ(ReadFile(P("rel")), "through the link");
  EXPECT_EQ(ErrnoOf(open(P("dangling").c_str(), O_RDONLY)), ENOENT);
  EXPECT_EQ(ErrnoOf(readlink(P("target").c_str(), buf, sizeof(buf))), EINVAL);
  EXPECT_EQ(ErrnoOf(symlink("x", P("rel").c_str())), EEXIST);
  ASSERT_EQ(unlink(P("rel").c_str()), 0);
  EXPECT_EQ(ReadFile(P("target")), "through the link");  // the target stays
}

TEST_F(PosixTest, HardLinksShareDataAndCountLinks) {
  ASSERT_TRUE(WriteFile(P("a"), "one"));
  ASSERT_EQ(mkdir(P("sub").c_str(), 0755), 0);
  ASSERT_EQ(link(P("a").c_str(), P("sub/b").c_str()), 0);
  EXPECT_EQ(Stat(P("a")).st_nlink, 2u);
  EXPECT_EQ(Stat(P("sub/b")).st_ino, Stat(P("a")).st_ino);

  // Written through one name, read through the other.
  int fd = open(P("sub/b").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, " two", 4), 4);
  close(fd);
  EXPECT_EQ(ReadFile(P("a")), "one two");
  EXPECT_EQ(Stat(P("a")).st_size, 7);

  EXPECT_EQ(ErrnoOf(link(P("a").c_str(), P("sub/b").c_str())), EEXIST);
  EXPECT_EQ(ErrnoOf(link(P("sub").c_str(), P("dirlink").c_str())), EPERM);

  ASSERT_EQ(unlink(P("a").c_str()), 0);
  EXPECT_EQ(Stat(P("sub/b")).st_nlink, 1u);
  EXPECT_EQ(ReadFile(P("sub/b")), "one two");
}

TEST_F(PosixTest, RenameReplacesTargetAndDestroysItsObjects) {
  const std::string a = RandomBytes(4 << 20, 2);  // one object on every OST
  const std::string b = RandomBytes(4 << 20, 3);
  ASSERT_TRUE(WriteFile(P("a"), a));
  ASSERT_TRUE(WriteFile(P("b"), b));
  ASSERT_EQ(TotalObjects(), 8u);
  const ino_t a_ino = Stat(P("a")).st_ino;

  ASSERT_EQ(rename(P("a").c_str(), P("b").c_str()), 0);
  EXPECT_FALSE(Exists(P("a")));
  EXPECT_EQ(Stat(P("b")).st_ino, a_ino);
  EXPECT_TRUE(SameBytes(ReadFile(P("b")), a));
  EXPECT_TRUE(WaitFor([&] { return TotalObjects() == 4; })) << TotalObjects();

  // Directory onto a file and file onto a directory, as on ext4.
  ASSERT_EQ(mkdir(P("dir").c_str(), 0755), 0);
  EXPECT_EQ(ErrnoOf(rename(P("dir").c_str(), P("b").c_str())), ENOTDIR);
  EXPECT_EQ(ErrnoOf(rename(P("b").c_str(), P("dir").c_str())), EISDIR);
  EXPECT_EQ(ErrnoOf(rename(P("nothing").c_str(), P("c").c_str())), ENOENT);
}

TEST_F(PosixTest, RenameNoreplaceRefusesExistingTarget) {
  ASSERT_TRUE(WriteFile(P("a"), "A"));
  ASSERT_TRUE(WriteFile(P("b"), "B"));
  EXPECT_EQ(ErrnoOf(Renameat2(P("a"), P("b"), RENAME_NOREPLACE)), EEXIST);
  EXPECT_EQ(ReadFile(P("a")), "A");
  EXPECT_EQ(ReadFile(P("b")), "B");
  ASSERT_EQ(Renameat2(P("a"), P("c"), RENAME_NOREPLACE), 0);
  EXPECT_FALSE(Exists(P("a")));
  EXPECT_EQ(ReadFile(P("c")), "A");
}

TEST_F(PosixTest, RenameExchangeSwapsFilesAndDirectories) {
  ASSERT_TRUE(WriteFile(P("a"), "contents of a"));
  ASSERT_TRUE(WriteFile(P("b"), "b"));
  ASSERT_EQ(Renameat2(P("a"), P("b"), RENAME_EXCHANGE), 0);
  EXPECT_EQ(ReadFile(P("a")), "b");
  EXPECT_EQ(ReadFile(P("b")), "contents of a");
  EXPECT_EQ(Stat(P("a")).st_size, 1);
  EXPECT_EQ(Stat(P("b")).st_size, 13);

  // A file with a directory in another directory: both parents' link
  // counts follow the directory.
  ASSERT_EQ(mkdir(P("p").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("p/d").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("p/d/inside"), "in d"));
  const nlink_t root_links = Stat(fs_.mnt()).st_nlink;
  ASSERT_EQ(Renameat2(P("a"), P("p/d"), RENAME_EXCHANGE), 0);
  EXPECT_TRUE(S_ISDIR(Stat(P("a")).st_mode));
  EXPECT_EQ(ReadFile(P("a/inside")), "in d");
  EXPECT_EQ(ReadFile(P("p/d")), "b");
  EXPECT_EQ(Stat(P("p")).st_nlink, 2u);
  EXPECT_EQ(Stat(fs_.mnt()).st_nlink, root_links + 1);
  struct stat dotdot = Stat(P("a/.."));
  EXPECT_EQ(dotdot.st_ino, Stat(fs_.mnt()).st_ino);

  EXPECT_EQ(ErrnoOf(Renameat2(P("a"), P("missing"), RENAME_EXCHANGE)), ENOENT);
}

TEST_F(PosixTest, RenameDirectoryMovesItsTree) {
  ASSERT_EQ(mkdir(P("src").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("src/d").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("src/d/e").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("src/d/e/f"), "deep"));
  ASSERT_EQ(mkdir(P("dst").c_str(), 0755), 0);

  ASSERT_EQ(rename(P("src/d").c_str(), P("dst/moved").c_str()), 0);
  EXPECT_FALSE(Exists(P("src/d")));
  EXPECT_EQ(ReadFile(P("dst/moved/e/f")), "deep");
  EXPECT_EQ(Stat(P("src")).st_nlink, 2u);
  EXPECT_EQ(Stat(P("dst")).st_nlink, 3u);
  EXPECT_EQ(Stat(P("dst/moved/..")).st_ino, Stat(P("dst")).st_ino);

  // Onto an empty directory: replaced. Onto a non-empty one: ENOTEMPTY.
  // Into its own subtree: EINVAL.
  ASSERT_EQ(mkdir(P("empty").c_str(), 0755), 0);
  ASSERT_EQ(rename(P("dst/moved").c_str(), P("empty").c_str()), 0);
  EXPECT_EQ(ReadFile(P("empty/e/f")), "deep");
  EXPECT_EQ(Stat(P("dst")).st_nlink, 2u);
  ASSERT_EQ(mkdir(P("full").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("full/x"), "x"));
  EXPECT_EQ(ErrnoOf(rename(P("empty").c_str(), P("full").c_str())), ENOTEMPTY);
  EXPECT_EQ(ErrnoOf(rename(P("empty").c_str(), P("empty/e/inside").c_str())), EINVAL);
  EXPECT_EQ(ReadFile(P("empty/e/f")), "deep");
  EXPECT_EQ(ReadFile(P("full/x")), "x");
}

TEST_F(PosixTest, RenameOverOpenFileKeepsItReadableUntilClose) {
  const std::string old_b = RandomBytes(4 << 20, 8);
  ASSERT_TRUE(WriteFile(P("a"), "new contents"));
  ASSERT_TRUE(WriteFile(P("b"), old_b));
  int fd = open(P("b").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(rename(P("a").c_str(), P("b").c_str()), 0);
  EXPECT_EQ(ReadFile(P("b")), "new contents");
  EXPECT_TRUE(SameBytes(PreadAll(fd, old_b.size(), 0), old_b));
  EXPECT_EQ(TotalObjects(), 5u);  // 4 of the replaced file, 1 of the new
  close(fd);
  EXPECT_TRUE(WaitFor([&] { return TotalObjects() == 1; })) << TotalObjects();
  EXPECT_EQ(ReadFile(P("b")), "new contents");
}

TEST_F(PosixTest, RenameOverOneOfTwoHardLinksKeepsTheData) {
  const std::string data = RandomBytes(4 << 20, 9);
  ASSERT_TRUE(WriteFile(P("a"), data));
  ASSERT_EQ(link(P("a").c_str(), P("b").c_str()), 0);
  ASSERT_TRUE(WriteFile(P("c"), "c"));
  ASSERT_EQ(rename(P("c").c_str(), P("a").c_str()), 0);
  EXPECT_EQ(ReadFile(P("a")), "c");
  EXPECT_EQ(Stat(P("b")).st_nlink, 1u);
  // Give a wrongly started destroy time to land before looking.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(TotalObjects(), 5u);
  EXPECT_TRUE(SameBytes(ReadFile(P("b")), data));
  // Unlinking the last name destroys them.
  ASSERT_EQ(unlink(P("b").c_str()), 0);
  EXPECT_TRUE(WaitFor([&] { return TotalObjects() == 1; })) << TotalObjects();
}

TEST_F(PosixTest, UnlinkedOpenFileStaysUsableUntilLastClose) {
  const std::string data = RandomBytes(4 << 20, 4);
  ASSERT_TRUE(WriteFile(P("doomed"), data));
  ASSERT_EQ(TotalObjects(), 4u);
  int fd = open(P("doomed").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  int fd2 = open(P("doomed").c_str(), O_RDONLY);
  ASSERT_GE(fd2, 0);
  ASSERT_EQ(unlink(P("doomed").c_str()), 0);
  EXPECT_FALSE(Exists(P("doomed")));

  EXPECT_TRUE(SameBytes(PreadAll(fd, data.size(), 0), data));
  const std::string more = RandomBytes(1 << 20, 5);
  ASSERT_TRUE(PwriteAll(fd, more, 4 << 20));
  EXPECT_TRUE(SameBytes(PreadAll(fd2, more.size(), 4 << 20), more));
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(st.st_nlink, 0u);
  EXPECT_EQ(st.st_size, 5 << 20);
  ASSERT_EQ(fsync(fd), 0);

  ASSERT_EQ(close(fd), 0);
  EXPECT_EQ(PreadAll(fd2, 16, 0), data.substr(0, 16));  // one open left
  EXPECT_EQ(TotalObjects(), 4u);
  ASSERT_EQ(close(fd2), 0);
  EXPECT_TRUE(WaitFor([&] { return TotalObjects() == 0; })) << TotalObjects();

  // The name is free for a new, empty file.
  ASSERT_TRUE(WriteFile(P("doomed"), ""));
  EXPECT_EQ(Stat(P("doomed")).st_size, 0);
}

TEST_F(PosixTest, UnlinkedEmptyFileOpenElsewhereIsKeptUntilLastClose) {
  // An empty, never-written file is purged in the unlink's own store batch,
  // but only when nobody has it open: here the open handle writes after the
  // unlink, and the objects it creates go at its close.
  ASSERT_TRUE(WriteFile(P("empty"), ""));
  int fd = open(P("empty").c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(unlink(P("empty").c_str()), 0);
  const std::string data = RandomBytes(3 << 20, 7);
  ASSERT_TRUE(PwriteAll(fd, data, 0));
  ASSERT_EQ(fsync(fd), 0);
  EXPECT_TRUE(SameBytes(PreadAll(fd, data.size(), 0), data));
  EXPECT_EQ(TotalObjects(), 3u);
  ASSERT_EQ(close(fd), 0);
  EXPECT_TRUE(WaitFor([&] { return TotalObjects() == 0; })) << TotalObjects();

  // Closed and empty: gone at once, and the name is free again.
  ASSERT_TRUE(WriteFile(P("empty"), ""));
  ASSERT_EQ(unlink(P("empty").c_str()), 0);
  EXPECT_EQ(ErrnoOf(unlink(P("empty").c_str())), ENOENT);
  ASSERT_TRUE(WriteFile(P("empty"), "x"));
  EXPECT_EQ(Stat(P("empty")).st_size, 1);
}

TEST_F(PosixTest, UnlinkOfClosedFileRemovesObjects) {
  ASSERT_TRUE(WriteFile(P("f"), RandomBytes(4 << 20, 6)));
  ASSERT_EQ(TotalObjects(), 4u);
  ASSERT_EQ(unlink(P("f").c_str()), 0);
  EXPECT_TRUE(WaitFor([&] { return TotalObjects() == 0; })) << TotalObjects();
  EXPECT_EQ(ErrnoOf(unlink(P("f").c_str())), ENOENT);
}

TEST_F(PosixTest, ChmodAndChown) {
  ASSERT_TRUE(WriteFile(P("f"), "x"));
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(chmod(P("f").c_str(), 0604), 0);
  EXPECT_EQ(Stat(P("f")).st_mode, S_IFREG | 0604u);
  ASSERT_EQ(chmod(P("d").c_str(), 01777), 0);
  EXPECT_EQ(Stat(P("d")).st_mode, S_IFDIR | 01777u);
  ASSERT_EQ(chmod(P("f").c_str(), 04755), 0);
  EXPECT_EQ(Stat(P("f")).st_mode, S_IFREG | 04755u);

  ASSERT_EQ(chown(P("f").c_str(), 65534, 1), 0);
  struct stat st = Stat(P("f"));
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 1u);
  // chown of a set-user-ID file by root clears it, as on ext4.
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(chown(P("d").c_str(), 1, -1), 0);
  EXPECT_EQ(Stat(P("d")).st_uid, 1u);
  EXPECT_EQ(Stat(P("d")).st_gid, 0u);
  ASSERT_EQ(lchown(P("f").c_str(), -1, 65534), 0);
  EXPECT_EQ(Stat(P("f")).st_gid, 65534u);

  // fchmod on an open file too.
  int fd = open(P("f").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(fchmod(fd, 0600), 0);
  close(fd);
  EXPECT_EQ(Stat(P("f")).st_mode & 07777, 0600u);
}

TEST_F(PosixTest, UtimensatSetsExplicitAndCurrentTimes) {
  ASSERT_TRUE(WriteFile(P("f"), "x"));
  struct timespec times[2] = {{1000000000, 123456789}, {1234567890, 500000000}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), times, 0), 0);
  struct stat st = Stat(P("f"));
  EXPECT_EQ(st.st_atim.tv_sec, 1000000000);
  EXPECT_EQ(st.st_atim.tv_nsec, 123456789);
  EXPECT_EQ(st.st_mtim.tv_sec, 1234567890);
  EXPECT_EQ(st.st_mtim.tv_nsec, 500000000);

  // UTIME_OMIT keeps one, UTIME_NOW sets the other to the current time.
  struct timespec before, after;
  clock_gettime(CLOCK_REALTIME, &before);
  struct timespec now_mtime[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), now_mtime, 0), 0);
  clock_gettime(CLOCK_REALTIME, &after);
  st = Stat(P("f"));
  EXPECT_EQ(st.st_atim.tv_sec, 1000000000);
  EXPECT_EQ(st.st_atim.tv_nsec, 123456789);
  EXPECT_GE(st.st_mtim.tv_sec, before.tv_sec);
  EXPECT_LE(st.st_mtim.tv_sec, after.tv_sec);

  // Both UTIME_NOW (utimensat with NULL): both now.
  ASSERT_EQ(utimensat(AT_FDCWD, P("f").c_str(), nullptr, 0), 0);
  clock_gettime(CLOCK_REALTIME, &after);
  st = Stat(P("f"));
  EXPECT_GE(st.st_atim.tv_sec, before.tv_sec);
  EXPECT_LE(st.st_atim.tv_sec, after.tv_sec);
  EXPECT_GE(st.st_mtim.tv_sec, before.tv_sec);
  EXPECT_LE(st.st_mtim.tv_sec, after.tv_sec);

  // Timestamps of a directory and, without following, of a symlink.
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(utimensat(AT_FDCWD, P("d").c_str(), times, 0), 0);
  EXPECT_EQ(Stat(P("d")).st_mtim.tv_sec, 1234567890);
  ASSERT_EQ(symlink("f", P("l").c_str()), 0);
  ASSERT_EQ(utimensat(AT_FDCWD, P("l").c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
  EXPECT_EQ(Stat(P("l")).st_mtim.tv_sec, 1234567890);
}

// POSIX: creating, removing or renaming an entry updates the directory's
// mtime and ctime; a write updates the file's mtime and ctime; chmod its
// ctime.
TEST_F(PosixTest, TimestampsFollowChanges) {
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("e").c_str(), 0755), 0);
  const struct timespec old_times[2] = {{1000, 0}, {1000, 0}};
  auto age = [&](const std::string& path) {
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), old_times, 0), 0) << path;
  };
  auto changed = [&](const std::string& path) {
    struct stat st = Stat(path);
    return st.st_mtim.tv_sec > 1000;
  };
  age(P("d"));
  ASSERT_TRUE(WriteFile(P("d/f"), "x"));
  EXPECT_TRUE(changed(P("d"))) << "create";
  age(P("d"));
  ASSERT_EQ(mkdir(P("d/sub").c_str(), 0755), 0);
  EXPECT_TRUE(changed(P("d"))) << "mkdir";
  age(P("d"));
  age(P("e"));
  ASSERT_EQ(rename(P("d/f").c_str(), P("e/f").c_str()), 0);
  EXPECT_TRUE(changed(P("d"))) << "rename source";
  EXPECT_TRUE(changed(P("e"))) << "rename target";
  age(P("e"));
  ASSERT_EQ(unlink(P("e/f").c_str()), 0);
  EXPECT_TRUE(changed(P("e"))) << "unlink";
  age(P("d"));
  ASSERT_EQ(rmdir(P("d/sub").c_str()), 0);
  EXPECT_TRUE(changed(P("d"))) << "rmdir";

  ASSERT_TRUE(WriteFile(P("f"), "x"));
  age(P("f"));
  struct stat before = Stat(P("f"));
  int fd = open(P("f").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, "y", 1, 1), 1);
  close(fd);
  struct stat after = Stat(P("f"));
  EXPECT_GT(after.st_mtim.tv_sec, 1000);
  EXPECT_EQ(after.st_atim.tv_sec, 1000);  // atime only moves by utimensat
  EXPECT_GE(after.st_ctim.tv_sec, before.st_ctim.tv_sec);
  age(P("f"));
  const struct timespec ctime_before = Stat(P("f")).st_ctim;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(chmod(P("f").c_str(), 0600), 0);
  struct stat chmodded = Stat(P("f"));
  EXPECT_EQ(chmodded.st_mtim.tv_sec, 1000);
  EXPECT_TRUE(chmodded.st_ctim.tv_sec > ctime_before.tv_sec ||
              (chmodded.st_ctim.tv_sec == ctime_before.tv_sec &&
               chmodded.st_ctim.tv_nsec > ctime_before.tv_nsec));
}

TEST_F(PosixTest, UmaskAndSetgidDirectories) {
  CommandResult made = Shell("umask 027 && touch " + P("f") + " && mkdir " + P("d"));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_EQ(Stat(P("f")).st_mode & 07777, 0640u);
  EXPECT_EQ(Stat(P("d")).st_mode & 07777, 0750u);

  // A set-group-ID directory passes its group on, and its bit to subdirs.
  ASSERT_EQ(mkdir(P("g").c_str(), 0775), 0);
  ASSERT_EQ(chown(P("g").c_str(), 0, 1), 0);
  ASSERT_EQ(chmod(P("g").c_str(), 02775), 0);
  ASSERT_TRUE(WriteFile(P("g/file"), "x"));
  ASSERT_EQ(mkdir(P("g/sub").c_str(), 0755), 0);
  EXPECT_EQ(Stat(P("g/file")).st_gid, 1u);
  EXPECT_EQ(Stat(P("g/sub")).st_gid, 1u);
  EXPECT_EQ(Stat(P("g/sub")).st_mode & 07777, 02755u);
  EXPECT_EQ(Stat(P("d")).st_gid, 0u);
}

TEST_F(PosixTest, FifosAndDeviceNodes) {
  ASSERT_EQ(mkfifo(P("fifo").c_str(), 0600), 0);
  EXPECT_TRUE(S_ISFIFO(Stat(P("fifo")).st_mode));
  ASSERT_EQ(mknod(P("null").c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
  struct stat st = Stat(P("null"));
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
  // (Opening it is EACCES: FUSE mounts are nodev unless mounted with -o dev.)

  // A FIFO carries bytes between two openers.
  std::thread reader_thread;
  std::string got;
  reader_thread = std::thread([&] { got = ReadFile(P("fifo")).value_or("<failed>"); });
  int fd = open(P("fifo").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "through the pipe", 16), 16);
  close(fd);
  reader_thread.join();
  EXPECT_EQ(got, "through the pipe");
}

TEST_F(PosixTest, ConcurrentCreatesInOneDirectory) {
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  constexpr int kThreads = 8, kEach = 80;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string base = P("d/t" + std::to_string(t) + "_" + std::to_string(i));
        if (i % 10 == 0) {
          if (mkdir(base.c_str(), 0755) != 0) failures[t] = errno;
        } else if (!WriteFile(base, base)) {
          failures[t] = errno;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;

  std::set<ino_t> inodes;
  std::set<std::string> names;
  DIR* dir = opendir(P("d").c_str());
  ASSERT_NE(dir, nullptr);
  while (struct dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    names.insert(entry->d_name);
    inodes.insert(entry->d_ino);
  }
  closedir(dir);
  EXPECT_EQ(names.size(), size_t{kThreads * kEach});
  EXPECT_EQ(inodes.size(), size_t{kThreads * kEach});
  EXPECT_EQ(Stat(P("d")).st_nlink, 2u + kThreads * kEach / 10);
  for (int t = 0; t < kThreads; ++t) {
    const std::string base = P("d/t" + std::to_string(t) + "_1");
    EXPECT_EQ(ReadFile(base), base);
  }
}

TEST_F(PosixTest, ReaddirTypesInodesSeekdirAndRewinddir) {
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("d/sub").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("d/file"), ""));
  ASSERT_EQ(symlink("file", P("d/link").c_str()), 0);
  ASSERT_EQ(mkfifo(P("d/fifo").c_str(), 0644), 0);
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(WriteFile(P("d/n" + std::to_string(i)), ""));

  DIR* dir = opendir(P("d").c_str());
  ASSERT_NE(dir, nullptr);
  std::map<std::string, unsigned char> types;
  std::map<std::string, ino_t> inodes;
  std::vector<std::string> order;
  long mark = -1;
  std::vector<std::string> after_mark;
  while (struct dirent* entry = readdir(dir)) {
    types[entry->d_name] = entry->d_type;
    inodes[entry->d_name] = entry->d_ino;
    order.push_back(entry->d_name);
    if (order.size() == 150) mark = telldir(dir);
  }
  ASSERT_EQ(order.size(), 2u + 4 + 300);
  EXPECT_EQ(types["."], DT_DIR);
  EXPECT_EQ(types[".."], DT_DIR);
  EXPECT_EQ(types["sub"], DT_DIR);
  EXPECT_EQ(types["file"], DT_REG);
  EXPECT_EQ(types["link"], DT_LNK);
  EXPECT_EQ(types["fifo"], DT_FIFO);
  EXPECT_EQ(inodes["."], Stat(P("d")).st_ino);
  EXPECT_EQ(inodes[".."], Stat(fs_.mnt()).st_ino);
  EXPECT_EQ(inodes["file"], Stat(P("d/file")).st_ino);
  EXPECT_EQ(inodes["sub"], Stat(P("d/sub")).st_ino);

  // seekdir back to a telldir mark replays the same entries.
  ASSERT_GE(mark, 0);
  seekdir(dir, mark);
  while (struct dirent* entry = readdir(dir)) after_mark.push_back(entry->d_name);
  EXPECT_EQ(after_mark, std::vector<std::string>(order.begin() + 150, order.end()));
  // rewinddir starts a fresh listing that sees a new entry.
  ASSERT_TRUE(WriteFile(P("d/late"), ""));
  rewinddir(dir);
  std::set<std::string> again;
  while (struct dirent* entry = readdir(dir)) again.insert(entry->d_name);
  closedir(dir);
  EXPECT_EQ(again.size(), order.size() + 1);
  EXPECT_EQ(again.count("late"), 1u);
}

TEST_F(PosixTest, UserXattrsFlagsListRemoveAndRemount) {
  ASSERT_TRUE(WriteFile(P("f"), "x"));
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  CommandResult set = Shell("setfattr -n user.color -v blue " + P("f"));
  ASSERT_EQ(set.exit_code, 0) << set.output;
  CommandResult got = Shell("getfattr --absolute-names --only-values -n user.color " + P("f"));
  ASSERT_EQ(got.exit_code, 0) << got.output;
  EXPECT_EQ(got.output, "blue");

  const std::string f = P("f");
  EXPECT_EQ(ErrnoOf(setxattr(f.c_str(), "user.color", "red", 3, XATTR_CREATE)), EEXIST);
  EXPECT_EQ(ErrnoOf(setxattr(f.c_str(), "user.new", "v", 1, XATTR_REPLACE)), ENODATA);
  ASSERT_EQ(setxattr(f.c_str(), "user.color", "red", 3, XATTR_REPLACE), 0);
  ASSERT_EQ(setxattr(f.c_str(), "user.new", "v", 1, XATTR_CREATE), 0);
  const std::string binary("\0\x01\xff", 3);
  ASSERT_EQ(setxattr(f.c_str(), "user.bin", binary.data(), binary.size(), 0), 0);
  ASSERT_EQ(setxattr(P("d").c_str(), "user.on_dir", "dir", 3, 0), 0);

  char buf[256];
  ssize_t n = getxattr(f.c_str(), "user.color", buf, sizeof(buf));
  ASSERT_EQ(n, 3);
  EXPECT_EQ(std::string(buf, n), "red");
  EXPECT_EQ(getxattr(f.c_str(), "user.color", nullptr, 0), 3);  // size query
  EXPECT_EQ(ErrnoOf(getxattr(f.c_str(), "user.color", buf, 2)), ERANGE);
  n = getxattr(f.c_str(), "user.bin", buf, sizeof(buf));
  EXPECT_EQ(std::string(buf, std::max<ssize_t>(n, 0)), binary);

  n = listxattr(f.c_str(), buf, sizeof(buf));
  ASSERT_GT(n, 0);
  std::set<std::string> names;
  for (const char* p = buf; p < buf + n; p += strlen(p) + 1) names.insert(p);
  EXPECT_EQ(names, (std::set<std::string>{"user.bin", "user.color", "user.new"}));

  // The largest value the kernel passes on (64 KiB) round-trips.
  const std::string big = RandomBytes(65536, 10);
  ASSERT_EQ(setxattr(f.c_str(), "user.big", big.data(), big.size(), 0), 0) << strerror(errno);
  std::string big_back(65536, '\0');
  EXPECT_EQ(getxattr(f.c_str(), "user.big", big_back.data(), big_back.size()), 65536);
  EXPECT_TRUE(big_back == big);
  EXPECT_EQ(ErrnoOf(listxattr(f.c_str(), buf, 5)), ERANGE);
  ASSERT_EQ(removexattr(f.c_str(), "user.big"), 0);

  ASSERT_EQ(removexattr(f.c_str(), "user.new"), 0);
  EXPECT_EQ(ErrnoOf(getxattr(f.c_str(), "user.new", buf, sizeof(buf))), ENODATA);
  EXPECT_EQ(ErrnoOf(removexattr(f.c_str(), "user.new")), ENODATA);
  // Namespaces other than user.* are not kept.
  EXPECT_EQ(ErrnoOf(setxattr(f.c_str(), "trusted.x", "v", 1, 0)), EOPNOTSUPP);

  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  got = Shell("getfattr --absolute-names --only-values -n user.color " + P("f"));
  EXPECT_EQ(got.output, "red");
  n = getxattr(P("d").c_str(), "user.on_dir", buf, sizeof(buf));
  EXPECT_EQ(std::string(buf, std::max<ssize_t>(n, 0)), "dir");
  n = listxattr(f.c_str(), buf, sizeof(buf));
  ASSERT_GT(n, 0);
  names.clear();
  for (const char* p = buf; p < buf + n; p += strlen(p) + 1) names.insert(p);
  EXPECT_EQ(names, (std::set<std::string>{"user.bin", "user.color"}));
}

TEST_F(PosixTest, FsyncFdatasyncAndFsyncdirSucceed) {
  int fd = open(P("f").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(fd, 0);
  const std::string data = RandomBytes(3 << 20, 7);
  ASSERT_TRUE(PwriteAll(fd, data, 0));
  EXPECT_EQ(fsync(fd), 0);
  ASSERT_TRUE(PwriteAll(fd, "tail", data.size()));
  EXPECT_EQ(fdatasync(fd), 0);
  close(fd);
  fd = open(P("never_written").c_str(), O_CREAT | O_RDWR, 0644);  // no objects yet
  ASSERT_GE(fd, 0);
  EXPECT_EQ(fsync(fd), 0);
  EXPECT_EQ(fdatasync(fd), 0);
  close(fd);

  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  for (const std::string& dir : {fs_.mnt(), P("d")}) {
    int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dfd, 0);
    EXPECT_EQ(fsync(dfd), 0) << dir << ": " << strerror(errno);
    EXPECT_EQ(fdatasync(dfd), 0) << dir << ": " << strerror(errno);
    close(dfd);
  }
  EXPECT_TRUE(SameBytes(ReadFile(P("f")), data + "tail"));
  EXPECT_EQ(Stat(P("never_written")).st_size, 0);
}

TEST_F(PosixTest, StatfsCountsTheDiskTheOstsShareOnce) {
  // All four OSTs are directories on the test's disk: the mount's size is
  // that disk's, not four times it (admin_test has OSTs on two disks).
  struct statvfs mount_vfs, disk;
  ASSERT_EQ(statvfs(fs_.mnt().c_str(), &mount_vfs), 0);
  ASSERT_EQ(statvfs(fs_.ost_dir(0).c_str(), &disk), 0);
  const uint64_t mount_bytes = static_cast<uint64_t>(mount_vfs.f_blocks) * mount_vfs.f_frsize;
  EXPECT_EQ(mount_bytes, static_cast<uint64_t>(disk.f_blocks) * disk.f_frsize);
  EXPECT_EQ(mount_vfs.f_files, disk.f_files);
  EXPECT_GT(mount_vfs.f_bfree, 0u);
  EXPECT_LE(mount_vfs.f_bavail, mount_vfs.f_bfree);
  EXPECT_LE(mount_vfs.f_bfree, mount_vfs.f_blocks);
  EXPECT_EQ(mount_vfs.f_namemax, 255u);
}

// A listing that runs while the directory changes: every entry that stays
// in the directory throughout is seen exactly once, and nothing twice.
TEST_F(PosixTest, ReaddirStaysCorrectWhileDirectoryChanges) {
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  auto name = [](const char* prefix, int i) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%s%03d", prefix, i);
    return std::string(buf);
  };
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(WriteFile(P("d/" + name("f", i)), ""));

  std::set<std::string> removed, added;
  std::map<std::string, int> seen;
  DIR* dir = opendir(P("d").c_str());
  ASSERT_NE(dir, nullptr);
  int since_change = 0, round = 0;
  while (struct dirent* entry = readdir(dir)) {
    const std::string entry_name = entry->d_name;
    if (entry_name == "." || entry_name == "..") continue;
    seen[entry_name]++;
    if (++since_change < 25) continue;
    since_change = 0;
    // Remove one name from early in the order (likely listed already) and
    // one from late (likely not yet), and add two new ones.
    for (int victim : {round * 3, 499 - round * 3}) {
      const std::string gone = name("f", victim);
      if (removed.count(gone) == 0) {
        ASSERT_EQ(unlink(P("d/" + gone).c_str()), 0);
        removed.insert(gone);
      }
    }
    for (const char* prefix : {"a", "n"}) {
      const std::string fresh = name(prefix, round);
      ASSERT_TRUE(WriteFile(P("d/" + fresh), ""));
      added.insert(fresh);
    }
    ++round;
  }
  closedir(dir);
  ASSERT_GT(round, 10);

  for (const auto& [entry_name, count] : seen) EXPECT_EQ(count, 1) << entry_name;
  for (int i = 0; i < 500; ++i) {
    const std::string stable = name("f", i);
    if (removed.count(stable) == 0) {
      EXPECT_EQ(seen.count(stable), 1u) << stable;
    }
  }
  for (const auto& [entry_name, count] : seen) {
    EXPECT_TRUE(entry_name[0] == 'f' || added.count(entry_name) == 1) << entry_name;
  }

  // A new listing shows exactly the current contents.
  std::set<std::string> now;
  dir = opendir(P("d").c_str());
  ASSERT_NE(dir, nullptr);
  while (struct dirent* entry = readdir(dir)) {
    if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) {
      EXPECT_TRUE(now.insert(entry->d_name).second) << entry->d_name;
    }
  }
  closedir(dir);
  std::set<std::string> expected = added;
  for (int i = 0; i < 500; ++i) {
    if (removed.count(name("f", i)) == 0) expected.insert(name("f", i));
  }
  EXPECT_EQ(now, expected);
}

}  // namespace
}  // namespace sfs::test
