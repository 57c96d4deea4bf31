// Several users on one mount (allow_other + default_permissions): the
// kernel enforces POSIX permissions, as it would on a local filesystem.
// Users: nobody (65534) and daemon (1), switched to with runuser.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

class UsersTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs_.mounted()); }
  std::string P(const std::string& relative) const { return fs_.Path(relative); }

  // Runs `command` through sh as `user`.
  static CommandResult As(const std::string& user, const std::string& command) {
    return Shell("runuser -u " + user + " -- sh -c '" + command + "'");
  }


  MountedFs fs_;
};

TEST_F(UsersTest, NobodyCannotWriteIntoRootsDirectory) {
  ASSERT_EQ(mkdir(P("rootdir").c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(P("rootdir/existing"), "root's", 0644));
  CommandResult created = As("nobody", "touch " + P("rootdir/x"));
  EXPECT_NE(created.exit_code, 0);
  EXPECT_TRUE(Contains(created.output, "Permission denied")) << created.output;
  EXPECT_FALSE(Exists(P("rootdir/x")));
  CommandResult made = As("nobody", "mkdir " + P("rootdir/sub"));
  EXPECT_NE(made.exit_code, 0);
  EXPECT_TRUE(Contains(made.output, "Permission denied")) << made.output;
  CommandResult removed = As("nobody", "rm -f " + P("rootdir/existing"));
  EXPECT_NE(removed.exit_code, 0);
  EXPECT_TRUE(Contains(removed.output, "Permission denied")) << removed.output;
  CommandResult overwritten = As("nobody", "echo x > " + P("rootdir/existing"));
  EXPECT_NE(overwritten.exit_code, 0);
  EXPECT_TRUE(Contains(overwritten.output, "Permission denied")) << overwritten.output;
  EXPECT_EQ(ReadFile(P("rootdir/existing")), "root's");
  // Reading is allowed (0644 in a 0755 directory).
  CommandResult read = As("nobody", "cat " + P("rootdir/existing"));
  EXPECT_EQ(read.exit_code, 0) << read.output;
  EXPECT_EQ(read.output, "root's");
}

TEST_F(UsersTest, StickyWorldWritableDirectory) {
  ASSERT_EQ(mkdir(P("tmp").c_str(), 0755), 0);
  ASSERT_EQ(chmod(P("tmp").c_str(), 01777), 0);
  CommandResult created = As("nobody", "echo mine > " + P("tmp/n") + " && mkdir " + P("tmp/nd"));
  ASSERT_EQ(created.exit_code, 0) << created.output;
  struct stat st = Stat(P("tmp/n"));
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(Stat(P("tmp/nd")).st_uid, 65534u);
  // The sticky bit: daemon may not remove or rename nobody's file.
  CommandResult removed = As("daemon", "rm -f " + P("tmp/n"));
  EXPECT_NE(removed.exit_code, 0);
  EXPECT_TRUE(Contains(removed.output, "Operation not permitted")) << removed.output;
  CommandResult renamed = As("daemon", "mv " + P("tmp/n") + " " + P("tmp/stolen"));
  EXPECT_NE(renamed.exit_code, 0);
  EXPECT_EQ(ReadFile(P("tmp/n")), "mine\n");
  // The owner may.
  CommandResult own = As("nobody", "rm " + P("tmp/n") + " && rmdir " + P("tmp/nd"));
  EXPECT_EQ(own.exit_code, 0) << own.output;
  EXPECT_FALSE(Exists(P("tmp/n")));
}

TEST_F(UsersTest, PrivateFileIsReadableOnlyByItsOwner) {
  ASSERT_EQ(mkdir(P("shared").c_str(), 01777), 0);
  ASSERT_EQ(chmod(P("shared").c_str(), 01777), 0);
  CommandResult created = As("nobody", "umask 077 && echo secret > " + P("shared/private"));
  ASSERT_EQ(created.exit_code, 0) << created.output;
  EXPECT_EQ(Stat(P("shared/private")).st_mode & 07777, 0600u);

  CommandResult theirs = As("daemon", "cat " + P("shared/private"));
  EXPECT_NE(theirs.exit_code, 0);
  EXPECT_TRUE(Contains(theirs.output, "Permission denied")) << theirs.output;
  EXPECT_FALSE(Contains(theirs.output, "secret"));
  CommandResult write = As("daemon", "echo evil >> " + P("shared/private"));
  EXPECT_NE(write.exit_code, 0);
  EXPECT_TRUE(Contains(write.output, "Permission denied")) << write.output;

  CommandResult mine = As("nobody", "cat " + P("shared/private"));
  EXPECT_EQ(mine.exit_code, 0) << mine.output;
  EXPECT_EQ(mine.output, "secret\n");
  // Opened up by its owner, daemon can read it.
  ASSERT_EQ(As("nobody", "chmod 0644 " + P("shared/private")).exit_code, 0);
  CommandResult now = As("daemon", "cat " + P("shared/private"));
  EXPECT_EQ(now.exit_code, 0) << now.output;
  EXPECT_EQ(now.output, "secret\n");
}

TEST_F(UsersTest, OnlyRootChownsAndOnlyTheOwnerChmods) {
  ASSERT_EQ(mkdir(P("shared").c_str(), 0777), 0);
  ASSERT_EQ(chmod(P("shared").c_str(), 0777), 0);
  ASSERT_EQ(As("nobody", "echo x > " + P("shared/f")).exit_code, 0);

  CommandResult give = As("nobody", "chown daemon " + P("shared/f"));
  EXPECT_NE(give.exit_code, 0);
  EXPECT_TRUE(Contains(give.output, "Operation not permitted")) << give.output;
  CommandResult group = As("nobody", "chgrp daemon " + P("shared/f"));
  EXPECT_NE(group.exit_code, 0);
  EXPECT_TRUE(Contains(group.output, "Operation not permitted")) << group.output;
  CommandResult chmod_other = As("daemon", "chmod 0666 " + P("shared/f"));
  EXPECT_NE(chmod_other.exit_code, 0);
  EXPECT_TRUE(Contains(chmod_other.output, "Operation not permitted")) << chmod_other.output;
  CommandResult times = As("daemon", "touch -d 2001-01-01 " + P("shared/f"));
  EXPECT_NE(times.exit_code, 0);
  struct stat st = Stat(P("shared/f"));
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0644u);

  // Root may.
  ASSERT_EQ(chown(P("shared/f").c_str(), 1, 1), 0);
  st = Stat(P("shared/f"));
  EXPECT_EQ(st.st_uid, 1u);
  EXPECT_EQ(st.st_gid, 1u);
  CommandResult now_daemons = As("daemon", "chmod 0600 " + P("shared/f"));
  EXPECT_EQ(now_daemons.exit_code, 0) << now_daemons.output;
  EXPECT_EQ(Stat(P("shared/f")).st_mode & 07777, 0600u);
}

TEST_F(UsersTest, WriteByAnotherUserClearsSetuid) {
  ASSERT_TRUE(WriteFile(P("prog"), "#!/bin/sh\n"));
  ASSERT_EQ(chmod(P("prog").c_str(), 04777), 0);
  ASSERT_EQ(Stat(P("prog")).st_mode & 07777, 04777u);
  CommandResult appended = As("nobody", "echo exit 0 >> " + P("prog"));
  ASSERT_EQ(appended.exit_code, 0) << appended.output;
  EXPECT_EQ(Stat(P("prog")).st_mode & 07777, 0777u);
  EXPECT_EQ(ReadFile(P("prog")), "#!/bin/sh\nexit 0\n");
}

}  // namespace
}  // namespace sfs::test
