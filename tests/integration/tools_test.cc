// Ordinary tools on a real mount: cp -a, tar and dd move trees and bytes in
// and out unchanged (data, modes, owners, times, links, user xattrs).
#include <gtest/gtest.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

class ToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs_.mounted());
    local_ = fs_.root() + "/local";
    CommandResult made = Shell(BuildTree(local_ + "/src"));
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }

  // A tree with what archives must keep: nested and empty directories, a
  // multi-stripe file, an empty file, a hard link, a symlink, odd modes and
  // owners, explicit times and a user xattr.
  static std::string BuildTree(const std::string& dir) {
    return "set -e; mkdir -p " + dir + "/a/b/c " + dir + "/empty && cd " + dir +
           " && head -c 5000000 /dev/urandom > a/big"
           " && head -c 1000 /dev/urandom > a/b/small"
           " && : > zero"
           " && ln -s ../small a/b/c/link"
           " && ln a/big a/b/hardbig"
           " && chmod 0600 a/b/small && chmod 2750 a/b && chmod 0444 zero"
           " && chown 65534:1 a/b/small"
           " && setfattr -n user.origin -v tools-test a/big"
           " && touch -d '2001-02-03 04:05:06.789' a/big zero"
           " && touch -h -d '2002-03-04 05:06:07.5' a/b/c/link"
           " && touch -d '2003-01-01 00:00:00' a/b/c a/b a empty";
  }

  void ExpectSameTree(const std::string& expected_dir, const std::string& actual_dir) {
    CommandResult expected = Manifest(expected_dir);
    CommandResult actual = Manifest(actual_dir);
    ASSERT_EQ(expected.exit_code, 0) << expected.output;
    ASSERT_EQ(actual.exit_code, 0) << actual.output;
    EXPECT_EQ(actual.output, expected.output);
    CommandResult diff = Shell("diff -r --no-dereference " + expected_dir + " " + actual_dir);
    EXPECT_EQ(diff.exit_code, 0) << diff.output;
    CommandResult xattr =
        Shell("getfattr --absolute-names --only-values -n user.origin " + actual_dir + "/a/big");
    EXPECT_EQ(xattr.output, "tools-test");
  }

  MountedFs fs_;
  std::string local_;
};

TEST_F(ToolsTest, CpArchiveInAndOut) {
  CommandResult in = Shell("cp -a " + local_ + "/src " + fs_.Path("tree"));
  ASSERT_EQ(in.exit_code, 0) << in.output;
  ExpectSameTree(local_ + "/src", fs_.Path("tree"));
  CommandResult out = Shell("cp -a " + fs_.Path("tree") + " " + local_ + "/back");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  ExpectSameTree(local_ + "/src", local_ + "/back");
}

// Copies inside the mount (copy_file_range, or its splice fallback) and mv
// between directories of the mount (rename).
TEST_F(ToolsTest, CopyAndMoveWithinTheMount) {
  ASSERT_EQ(Shell("cp -a " + local_ + "/src " + fs_.Path("tree")).exit_code, 0);
  for (const char* how : {"--reflink=never", "--reflink=auto"}) {
    CommandResult copied =
        Shell(std::string("cp ") + how + " " + fs_.Path("tree/a/big") + " " + fs_.Path("copy"));
    ASSERT_EQ(copied.exit_code, 0) << copied.output;
    CommandResult cmp = Shell("cmp " + local_ + "/src/a/big " + fs_.Path("copy"));
    EXPECT_EQ(cmp.exit_code, 0) << how << ": " << cmp.output;
  }
  CommandResult whole = Shell("cp -a " + fs_.Path("tree") + " " + fs_.Path("tree2"));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  ExpectSameTree(local_ + "/src", fs_.Path("tree2"));
  CommandResult moved =
      Shell("mkdir " + fs_.Path("into") + " && mv " + fs_.Path("tree2") + " " + fs_.Path("into/"));
  ASSERT_EQ(moved.exit_code, 0) << moved.output;
  ExpectSameTree(local_ + "/src", fs_.Path("into/tree2"));
  CommandResult removed = Shell("rm -rf " + fs_.Path("into") + " " + fs_.Path("tree"));
  EXPECT_EQ(removed.exit_code, 0) << removed.output;
  EXPECT_EQ(Shell("ls -A " + fs_.mnt()).output, "copy\n");
}

TEST_F(ToolsTest, TarOntoTheMountAndBack) {
  // The archive itself is written to and read from the mount.
  CommandResult packed =
      Shell("tar --xattrs -C " + local_ + "/src -cf " + fs_.Path("tree.tar") + " .");
  ASSERT_EQ(packed.exit_code, 0) << packed.output;
  CommandResult unpacked = Shell("mkdir " + fs_.Path("x") + " && tar --xattrs -xpf " +
                                 fs_.Path("tree.tar") + " -C " + fs_.Path("x"));
  ASSERT_EQ(unpacked.exit_code, 0) << unpacked.output;
  ExpectSameTree(local_ + "/src", fs_.Path("x"));

  CommandResult back = Shell("mkdir " + local_ + "/back && tar --xattrs -C " + fs_.Path("x") +
                             " -cf - . | tar --xattrs -xpf - -C " + local_ + "/back");
  ASSERT_EQ(back.exit_code, 0) << back.output;
  ExpectSameTree(local_ + "/src", local_ + "/back");
}

TEST_F(ToolsTest, DdWithOneMebibyteBlocks) {
  const std::string local = local_ + "/rand";
  const std::string remote = fs_.Path("rand");
  CommandResult made = Shell("dd if=/dev/urandom of=" + local + " bs=1M count=21 status=none");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  CommandResult in = Shell("dd if=" + local + " of=" + remote + " bs=1M status=none");
  ASSERT_EQ(in.exit_code, 0) << in.output;
  CommandResult out = Shell("dd if=" + remote + " of=" + local + ".back bs=1M status=none");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(Shell("cmp " + local + " " + local + ".back").exit_code, 0);

  // The same overwrite in the middle, and an extension past the end, on
  // both copies; then they must still match.
  for (const std::string& target : {local, remote}) {
    CommandResult patched =
        Shell("dd if=/dev/zero of=" + target +
              " bs=1M seek=3 count=2 conv=notrunc status=none && "
              "dd if=" +
              local + ".back of=" + target + " bs=1M seek=30 count=1 conv=notrunc status=none");
    ASSERT_EQ(patched.exit_code, 0) << patched.output;
  }
  CommandResult cmp = Shell("cmp " + local + " " + remote);
  EXPECT_EQ(cmp.exit_code, 0) << cmp.output;
  CommandResult direct = Shell("dd if=" + remote + " of=" + local +
                               ".direct bs=1M iflag=direct "
                               "status=none && cmp " +
                               local + " " + local + ".direct");
  EXPECT_EQ(direct.exit_code, 0) << direct.output;
}

// git exercises much of POSIX at once: lock files created O_EXCL and
// renamed over, fsync, hard links, many small files, lstat of everything.
TEST_F(ToolsTest, GitRepositoryOnTheMount) {
  const std::string repo = fs_.Path("repo");
  const std::string git = "git -C " + repo + " -c user.name=t -c user.email=t@example.org ";
  CommandResult made = Shell(
      "set -e; git init -q " + repo + " && cp -a " + local_ + "/src/. " + repo + "/ && " + git +
      "add -A && " + git + "commit -qm first && " + git + "mv a/big a/moved && echo more >> " +
      repo + "/zero && " + git + "commit -qam second && " + git + "gc -q && " + git +
      "fsck --strict --no-progress");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  CommandResult log = Shell(git + "log --format=%s");
  EXPECT_EQ(log.output, "second\nfirst\n");
  CommandResult status = Shell(git + "status --porcelain");
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_EQ(status.output, "") << "the work tree differs from the last commit";
  // Checking out the first commit restores its tree byte for byte.
  CommandResult back = Shell(git + "checkout -q HEAD~1 && cmp " + repo + "/a/big " + local_ +
                             "/src/a/big && test ! -e " + repo + "/a/moved");
  EXPECT_EQ(back.exit_code, 0) << back.output;
}

}  // namespace
}  // namespace sfs::test
