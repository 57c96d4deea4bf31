// stripefs fsck on real filesystems: after a daemon SIGKILLed during heavy
// creates and unlinks, and after damage made by hand to OST directories
// with ordinary tools. fsck finds, --repair repairs, a second run is clean,
// and the filesystem mounts and serves what is left.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

CommandResult Fsck(const MountedFs& fs, const std::string& flags = "") {
  return Shell(std::string(StripefsBinary()) + " fsck " + fs.meta_dir() + " " + flags + " 2>&1");
}

// How many lines of `output` contain `text` (begin with it: `at_start`).
size_t CountLines(const std::string& output, const std::string& text, bool at_start = false) {
  size_t count = 0;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    const size_t at = output.substr(start, end - start).find(text);
    if (at != std::string::npos && (!at_start || at == 0)) count++;
    start = end + 1;
  }
  return count;
}

// Creates, writes and unlinks files as fast as it can in `dir_fd` (a
// directory of the mount, so that after the crash its calls fail instead of
// reaching the bare mount point), keeping the last few open, half of them
// unlinked while open, until a call fails.
void Churn(int dir_fd, int id, std::atomic<int>* ops) {
  const std::string data(64 * 1024, static_cast<char>('a' + id));
  std::vector<int> open_fds;
  for (int i = 0;; ++i) {
    const std::string name = "t" + std::to_string(id) + "_" + std::to_string(i);
    int fd = openat(dir_fd, name.c_str(), O_CREAT | O_RDWR, 0644);
    if (fd < 0) break;
    open_fds.push_back(fd);
    if (write(fd, data.data(), data.size()) != static_cast<ssize_t>(data.size())) break;
    if (i % 2 == 0 && unlinkat(dir_fd, name.c_str(), 0) != 0) break;
    if (i >= 3 && i % 2 == 1) {
      const std::string older = "t" + std::to_string(id) + "_" + std::to_string(i - 2);
      if (unlinkat(dir_fd, older.c_str(), 0) != 0) break;
    }
    if (open_fds.size() > 8) {
      close(open_fds.front());
      open_fds.erase(open_fds.begin());
    }
    ops->fetch_add(1);
  }
  for (int fd : open_fds) close(fd);
}

TEST(FsckTest, AfterSigkillDuringCreatesAndUnlinksFindsRepairsThenIsClean) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(mkdir(fs.Path("churn").c_str(), 0755), 0);
  const std::string kept = RandomBytes(3 << 20, 7);
  ASSERT_TRUE(WriteFile(fs.Path("kept"), kept));
  int dir_fd = open(fs.Path("churn").c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0);
  std::atomic<int> ops{0};
  std::vector<std::thread> churners;
  for (int id = 0; id < 2; ++id) churners.emplace_back(Churn, dir_fd, id, &ops);
  ASSERT_TRUE(WaitFor([&] { return ops.load() >= 400; }, 60000)) << ops.load();
  fs.Kill();
  for (auto& churner : churners) churner.join();
  close(dir_fd);

  // Files unlinked while open when the daemon died still hold objects.
  CommandResult found = Fsck(fs);
  EXPECT_EQ(found.exit_code, 4) << found.output;
  const size_t unlinked = CountLines(found.output, "unlinked file whose objects are not yet freed");
  EXPECT_GE(unlinked, 1u) << found.output;
  EXPECT_NE(found.output.find("--repair would"), std::string::npos) << found.output;
  // Every finding is one line starting "fsck: ", then the summary.
  EXPECT_EQ(CountLines(found.output, "fsck: ", true) + 1, CountLines(found.output, "")) << found.output;
  CommandResult unchanged = Fsck(fs);
  EXPECT_EQ(unchanged.output, found.output) << "fsck without --repair changed something";

  CommandResult repaired = Fsck(fs, "--repair");
  EXPECT_EQ(repaired.exit_code, 1) << repaired.output;
  EXPECT_EQ(CountLines(repaired.output, "repaired: free its objects"), unlinked) << repaired.output;
  EXPECT_NE(repaired.output.find(", 0 left"), std::string::npos) << repaired.output;

  CommandResult clean = Fsck(fs);
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_NE(clean.output.find("0 problems"), std::string::npos) << clean.output;

  ASSERT_TRUE(fs.Mount());
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("kept")), kept));
  CommandResult read_all = Shell("cat " + fs.Path("churn") + "/* > /dev/null");
  EXPECT_EQ(read_all.exit_code, 0) << read_all.output;
  ASSERT_TRUE(fs.Unmount());
  EXPECT_EQ(Fsck(fs).exit_code, 0);
}

TEST(FsckTest, DamageMadeWithOrdinaryToolsIsFoundAndWhatCanBeIsRepaired) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  const std::string a = RandomBytes((4 << 20) + 5000, 8);
  ASSERT_TRUE(WriteFile(fs.Path("a"), a));
  ASSERT_TRUE(WriteFile(fs.Path("b"), RandomBytes(2 << 20, 9)));
  const std::vector<std::string> a_objects = ObjectPaths(fs, fs.Path("a"));
  const std::vector<std::string> b_objects = ObjectPaths(fs, fs.Path("b"));
  ASSERT_EQ(a_objects.size(), 4u);
  ASSERT_EQ(b_objects.size(), 4u);
  ASSERT_TRUE(fs.Unmount());

  // An object of a grows past what the file needs (as a crash between an
  // object write and the size update leaves it), one of b's written objects
  // goes, an object that no file names and a file that is no object appear.
  const std::string stray = fs.ost_dir(2) + "/objects/00/0000000000000300";
  CommandResult damage = Shell("truncate -s 9M " + a_objects[1] + " && rm " + b_objects[0] +
                               " && mkdir -p " + fs.ost_dir(2) + "/objects/00 && dd if=/dev/zero of=" +
                               stray + " bs=4k count=3 2>/dev/null && echo hi > " + fs.ost_dir(3) +
                               "/objects/notes");
  ASSERT_EQ(damage.exit_code, 0) << damage.output;

  CommandResult found = Fsck(fs);
  EXPECT_EQ(found.exit_code, 4) << found.output;
  EXPECT_EQ(CountLines(found.output, "fsck: ", true), 4u) << found.output;
  EXPECT_EQ(CountLines(found.output, "belongs to no file"), 1u) << found.output;
  EXPECT_EQ(CountLines(found.output, "9437184 bytes, the file's"), 1u) << found.output;
  EXPECT_EQ(CountLines(found.output, "written but missing"), 1u) << found.output;
  EXPECT_EQ(CountLines(found.output, "objects/notes is not an object"), 1u) << found.output;

  CommandResult repaired = Fsck(fs, "--repair");
  EXPECT_EQ(repaired.exit_code, 4) << repaired.output;  // b's lost data stays lost
  EXPECT_NE(repaired.output.find("2 repaired, 2 left"), std::string::npos) << repaired.output;
  EXPECT_FALSE(Exists(stray));
  EXPECT_EQ(Stat(a_objects[1]).st_size, 1 << 20);

  CommandResult again = Fsck(fs, "--repair");
  EXPECT_EQ(again.exit_code, 4) << again.output;
  EXPECT_EQ(CountLines(again.output, "fsck: ", true), 2u) << again.output;  // only what cannot be

  ASSERT_TRUE(fs.Mount());
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("a")), a));
  // The cut bytes no longer show through when the file grows.
  ASSERT_EQ(truncate(fs.Path("a").c_str(), 12 << 20), 0);
  auto grown = ReadFile(fs.Path("a"));
  ASSERT_TRUE(grown.has_value());
  EXPECT_EQ(grown->substr(a.size()), std::string((12 << 20) - a.size(), '\0'));
  int fd = open(fs.Path("b").c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  char buf[4096];
  EXPECT_EQ(read(fd, buf, sizeof(buf)), -1);
  EXPECT_EQ(errno, EIO);
  close(fd);
}

// An inode record says whether it ever had an extended attribute, and
// deleting one that never had any does not look for them (docs/design.md,
// "Project ids"): whichever way a file got them (setfattr, a second name,
// one set and removed again), rm leaves none behind, which fsck would
// report as records of an inode that does not exist.
TEST(FsckTest, RemovedFilesLeaveNoExtendedAttributesBehind) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  CommandResult made = Shell(
      "cd " + fs.mnt() +
      " && echo a > plain && echo b > tagged && echo c > cleared && echo d > kept && mkdir dir"
      " && setfattr -n user.tag -v 1 tagged && ln tagged tagged2"
      " && setfattr -n user.tag -v 2 cleared && setfattr -x user.tag cleared"
      " && setfattr -n user.tag -v 3 kept && setfattr -n user.tag -v 4 dir"
      " && rm plain tagged cleared 2>&1");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  EXPECT_EQ(Xattr(fs.Path("tagged2"), "user.tag"), "1");  // the second name has it still
  EXPECT_EQ(Xattr(fs.Path("kept"), "user.tag"), "3");
  CommandResult removed = Shell("cd " + fs.mnt() + " && rm tagged2 && rmdir dir 2>&1");
  ASSERT_EQ(removed.exit_code, 0) << removed.output;
  ASSERT_TRUE(fs.Unmount());
  CommandResult checked = Fsck(fs);
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_EQ(CountLines(checked.output, "fsck: ", true), 0u) << checked.output;
  ASSERT_TRUE(fs.Mount());
  EXPECT_EQ(Xattr(fs.Path("kept"), "user.tag"), "3");
}

TEST(FsckTest, RefusesAMountedFilesystemAndBadArguments) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  CommandResult busy = Fsck(fs, "--repair");
  EXPECT_EQ(busy.exit_code, 8) << busy.output;
  EXPECT_NE(busy.output.find("mounted"), std::string::npos) << busy.output;
  EXPECT_TRUE(WriteFile(fs.Path("still-fine"), "yes"));
  EXPECT_EQ(Shell(std::string(StripefsBinary()) + " fsck 2>&1").exit_code, 16);
  EXPECT_EQ(Shell(std::string(StripefsBinary()) + " fsck " + fs.meta_dir() + " --bogus 2>&1")
                .exit_code,
            16);
  CommandResult missing = Shell(std::string(StripefsBinary()) + " fsck " + fs.root() + "/nothing 2>&1");
  EXPECT_EQ(missing.exit_code, 8) << missing.output;
}

}  // namespace
}  // namespace sfs::test
