// Growing a mounted filesystem (issue 12, item 5): `stripefs ost add` on a
// real mount of two OSTs, while files are open and a writer runs; what the
// new OST gets (label, weight, policies, pools), that it survives a
// remount, and every refused addition leaving the filesystem as it was.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr int kNew = 2;  // the index the added OST gets

MountedFs::Options TwoOsts() {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  // For the refusal by a non-root admin.
  options.mount_options = {"admin_uid=4242"};
  return options;
}

std::string Slurp(const std::string& path) { return ReadFile(path).value_or("<unreadable>"); }

class OstAddTest : public ::testing::Test {
 protected:
  OstAddTest() : fs_(TwoOsts()) {}
  void SetUp() override {
    ASSERT_TRUE(fs_.mounted());
    bin_ = StripefsBinary();
  }
  CommandResult Cli(const std::string& args) { return Shell(bin_ + " " + args + " 2>&1"); }
  // The OSTs of a file's stripes, from getstripe, e.g. "0 2 ".
  std::string StripeOsts(const std::string& path) {
    return Shell(bin_ + " getstripe " + path +
                 " | awk '$1 ~ /^[0-9]+$/ && NF == 3 { print $2 }' | tr '\\n' ' '")
        .output;
  }

  MountedFs fs_;
  std::string bin_;
};

TEST_F(OstAddTest, AnAddedOstTakesNewFilesAtOnceAndStaysAfterRemount) {
  // Before: a policy on every OST, a pool, a file, a file held open and a
  // writer that runs through the addition.
  ASSERT_EQ(SetSetting(fs_, "nrs_policies", "tbf jobid"), 0);
  ASSERT_EQ(SetSetting(fs_, "pool.first", "osts=0"), 0);
  const std::string old_data = RandomBytes(3 << 20, 1);
  ASSERT_TRUE(WriteFile(fs_.Path("old"), old_data));
  const int held = open(fs_.Path("held").c_str(), O_CREAT | O_RDWR, 0644);
  ASSERT_GE(held, 0);
  ASSERT_TRUE(PwriteAll(held, "before the addition", 0));
  // 48 MiB in 4 KiB direct writes: about a second of FUSE round trips,
  // started before the addition and still running when it returns.
  const std::string source = fs_.root() + "/stream";
  ASSERT_EQ(Shell("head -c 48M /dev/urandom > " + source).exit_code, 0);
  ASSERT_EQ(Shell("dd if=" + source + " of=" + fs_.Path("stream") +
                  " bs=4k oflag=direct status=none > /dev/null 2>&1 & echo $! > " +
                  fs_.root() + "/writer").exit_code, 0);
  auto writer_running = [&] {
    return Shell("kill -0 $(cat " + fs_.root() + "/writer) 2>/dev/null").exit_code == 0;
  };
  ASSERT_TRUE(WaitFor([&] { return Exists(fs_.Path("stream")) && Stat(fs_.Path("stream")).st_size > 0; }));

  const std::string dir = fs_.ost_dir(kNew);  // does not exist yet: created
  CommandResult added = Cli("ost add " + fs_.mnt() + " " + dir);
  ASSERT_EQ(added.exit_code, 0) << added.output << fs_.Log();
  EXPECT_TRUE(writer_running()) << "the writer ended before the addition did: no overlap";
  EXPECT_EQ(added.output, "OST 2 added at " + dir + " (weight 1, in no pool)\n");
  EXPECT_TRUE(Contains(fs_.Log(), "OST 2 added at " + dir + ": weight 1, in no pool"))
      << fs_.Log();

  // Labelled as OST 2 of this filesystem, private to root.
  const std::string label = Slurp(dir + "/.stripefs-ost");
  EXPECT_TRUE(Contains(label, "index=2\n")) << label;
  const std::string first_label = Slurp(fs_.ost_dir(0) + "/.stripefs-ost");
  const std::string fs_uuid = first_label.substr(0, first_label.find('\n'));
  EXPECT_TRUE(Contains(label, fs_uuid + "\n")) << label << " vs " << first_label;
  EXPECT_EQ(Stat(dir).st_mode & 07777, 0700u);

  // Known to every setting that lists OSTs.
  EXPECT_EQ(GetSetting(fs_, "ost_count"), "3");
  EXPECT_EQ(GetSetting(fs_, "rtds_weight"), "0=1,1=1,2=1");
  EXPECT_EQ(GetSetting(fs_, "ost2.active"), "1");
  EXPECT_TRUE(Contains(GetSetting(fs_, "ost2.nrs_policies"), "tbf jobid"))
      << GetSetting(fs_, "ost2.nrs_policies");
  EXPECT_EQ(GetSetting(fs_, "pools"), "first osts=0\n");
  CommandResult df = Cli("df " + fs_.mnt());
  EXPECT_TRUE(Contains(df.output, dir + "\n")) << df.output;

  // Usable at once: named, in a file striped over every OST, and by the
  // random choice (weight 1 of 3: 40 files of 2 stripes out of 3 OSTs
  // leave it out with probability (1/3)^40).
  ASSERT_EQ(Cli("setstripe -o 2 " + fs_.Path("on_new")).exit_code, 0);
  const std::string new_data = RandomBytes(1 << 20, 2);
  ASSERT_TRUE(WriteFile(fs_.Path("on_new"), new_data));
  EXPECT_EQ(StripeOsts(fs_.Path("on_new")), "2 ");
  const std::vector<std::string> objects = ObjectPaths(fs_, fs_.Path("on_new"));
  ASSERT_EQ(objects.size(), 1u);
  EXPECT_EQ(objects[0].rfind(dir + "/objects/", 0), 0u) << objects[0];
  EXPECT_EQ(Stat(objects[0]).st_size, 1 << 20);
  ASSERT_EQ(Cli("setstripe -c -1 " + fs_.Path("wide")).exit_code, 0);
  ASSERT_TRUE(WriteFile(fs_.Path("wide"), RandomBytes(3 << 20, 3)));
  EXPECT_TRUE(Contains(Cli("getstripe " + fs_.Path("wide")).output, "stripe_count=3"));
  int on_new = 0;
  for (int i = 0; i < 40; i++) {
    const std::string f = fs_.Path("random" + std::to_string(i));
    ASSERT_TRUE(WriteFile(f, "r"));
    on_new += Contains(StripeOsts(f), "2 ") ? 1 : 0;
  }
  EXPECT_GT(on_new, 0);
  // In no pool: a pool's files stay in it.
  ASSERT_EQ(Cli("setstripe -p first " + fs_.Path("pooled")).exit_code, 0);
  ASSERT_TRUE(WriteFile(fs_.Path("pooled"), "p"));
  EXPECT_EQ(StripeOsts(fs_.Path("pooled")), "0 ");

  // What was there and what was running are whole.
  EXPECT_TRUE(SameBytes(ReadFile(fs_.Path("old")), old_data));
  ASSERT_TRUE(PwriteAll(held, " and after", 19));
  close(held);
  EXPECT_EQ(ReadFile(fs_.Path("held")), "before the addition and after");
  ASSERT_TRUE(WaitFor([&] { return !writer_running(); }, 120000));
  EXPECT_EQ(Shell("cmp " + source + " " + fs_.Path("stream")).exit_code, 0);

  // A remount knows it, its policy, its weight and its files.
  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(GetSetting(fs_, "ost_count"), "3");
  EXPECT_EQ(GetSetting(fs_, "rtds_weight"), "0=1,1=1,2=1");
  EXPECT_TRUE(Contains(GetSetting(fs_, "ost2.nrs_policies"), "tbf jobid"));
  EXPECT_TRUE(SameBytes(ReadFile(fs_.Path("on_new")), new_data));
  EXPECT_TRUE(Contains(Cli("getstripe " + fs_.Path("wide")).output, "stripe_count=3"));
  // It can be deactivated like any other.
  ASSERT_EQ(Cli("ost deactivate " + fs_.mnt() + " 2").exit_code, 0);
  EXPECT_EQ(GetSetting(fs_, "ost2.active"), "0");
}

TEST_F(OstAddTest, RefusedAdditionsChangeNothing) {
  auto refused = [&](const std::string& value, int err, const std::string& logged) {
    EXPECT_EQ(SetSetting(fs_, "ost_add", value), err) << value;
    EXPECT_TRUE(Contains(fs_.Log(), logged)) << value << "\n" << fs_.Log();
  };
  refused("relative/dir", EINVAL, "ost_add wants the absolute path");
  refused(fs_.meta_dir() + "/ost", EINVAL, "overlaps the metadata directory");
  refused(fs_.ost_dir(1) + "/inner", EINVAL, "overlaps OST 1 at " + fs_.ost_dir(1));
  // Holds the mount point, the metadata directory and every OST.
  refused(fs_.root(), EINVAL, "OST path " + fs_.root() + " overlaps the mount point");
  refused(fs_.Path("inside"), EINVAL, "OST path " + fs_.Path("inside") + " overlaps the mount point");
  // The mount seen elsewhere (a bind mount): walked, and refused at the
  // mount's root without a lookup inside it, which would wait forever on
  // the root's lock this very setxattr holds.
  const std::string bound = fs_.root() + "/bound";
  ASSERT_EQ(mkdir(bound.c_str(), 0700), 0);
  ASSERT_EQ(Shell("mount --bind " + fs_.mnt() + " " + bound).exit_code, 0);
  refused(bound + "/ost", EINVAL, bound + " is on a FUSE filesystem");
  EXPECT_EQ(Shell("umount " + bound).exit_code, 0);
  // A directory another user owns: they could change where it leads.
  const std::string theirs = fs_.root() + "/theirs";
  ASSERT_EQ(mkdir(theirs.c_str(), 0700), 0);
  ASSERT_EQ(chown(theirs.c_str(), kNobody, kNogroup), 0);
  refused(theirs, EPERM, theirs + " belongs to uid 65534");

  // A directory with data of its own: refused and left exactly as it was.
  const std::string busy = fs_.root() + "/busy";
  ASSERT_EQ(mkdir(busy.c_str(), 0755), 0);
  ASSERT_TRUE(WriteFile(busy + "/precious", "mine"));
  refused(busy, EEXIST, "OST directory " + busy + " is not empty");
  EXPECT_EQ(Stat(busy).st_mode & 07777, 0755u);
  EXPECT_EQ(ReadFile(busy + "/precious"), "mine");
  EXPECT_FALSE(Exists(busy + "/.stripefs-ost"));
  // An OST of another filesystem.
  const std::string other = fs_.root() + "/other";
  ASSERT_EQ(Shell(bin_ + " mkfs --meta " + other + "/meta --ost " + other + "/ost0 >/dev/null")
                .exit_code, 0);
  refused(other + "/ost0", EEXIST, "already holds an OST of filesystem");
  // A file, not a directory.
  refused(busy + "/precious", ENOTDIR, "is not a directory");

  // Not root: a user (EPERM, as every setting), and an admin_uid too (the
  // daemon would create and take over a directory for it).
  const std::string dir = fs_.ost_dir(kNew);
  const std::string mnt = fs_.mnt();
  ASSERT_EQ(chmod(mnt.c_str(), 0777), 0);  // user.* xattrs need write permission
  for (uid_t uid : {kNobody, uid_t{4242}}) {
    EXPECT_EQ(RunAs(uid, kNogroup, [&] {
      const char* name = "user.stripefs.ost_add";
      return setxattr(mnt.c_str(), name, dir.data(), dir.size(), 0) == 0 ? 0 : errno;
    }), EPERM) << uid;
  }
  EXPECT_TRUE(Contains(fs_.Log(), "only root may add an OST (uid 4242)")) << fs_.Log();
  EXPECT_FALSE(Exists(dir));
  // The CLI says why, and the setting cannot be read back.
  CommandResult cli = Cli("ost add " + fs_.mnt() + " " + fs_.meta_dir() + "/x");
  EXPECT_EQ(cli.exit_code, 1);
  EXPECT_TRUE(Contains(cli.output, "ost add " + fs_.meta_dir() + "/x: Invalid argument"))
      << cli.output;
  EXPECT_EQ(GetSetting(fs_, "ost_add"), "<No data available>");
  EXPECT_EQ(SetSetting(fs_, "ost_count", "5"), EINVAL);

  // Nothing changed, here or in the store.
  EXPECT_EQ(GetSetting(fs_, "ost_count"), "2");
  EXPECT_EQ(GetSetting(fs_, "rtds_weight"), "0=1,1=1");
  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(GetSetting(fs_, "ost_count"), "2");
  ASSERT_TRUE(WriteFile(fs_.Path("f"), "still works"));
  EXPECT_EQ(ReadFile(fs_.Path("f")), "still works");
}

TEST_F(OstAddTest, AnAdditionCutShortIsTakenOverByTheNextOne) {
  // What a crash between the label and the store leaves: a directory with
  // this filesystem's label for an OST the store does not know.
  const std::string dir = fs_.ost_dir(kNew);
  const std::string first_label = Slurp(fs_.ost_dir(0) + "/.stripefs-ost");
  // (The objects directory comes with the first object, so there is none;
  // a crash inside the label's write leaves its temporary file too.)
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  {
    std::ofstream label(dir + "/.stripefs-ost");
    label << first_label.substr(0, first_label.find('\n') + 1) << "index=2\n"
          << "ost_uuid=11111111-2222-4333-8444-555555555555\n";
    std::ofstream(dir + "/.stripefs-ost.tmp") << "fs_uuid=";
  }
  CommandResult added = Cli("ost add " + fs_.mnt() + " " + dir);
  ASSERT_EQ(added.exit_code, 0) << added.output << fs_.Log();
  EXPECT_EQ(GetSetting(fs_, "ost_count"), "3");
  // Its identity is the label's: the same OST uuid.
  EXPECT_TRUE(Contains(Slurp(dir + "/.stripefs-ost"),
                       "index=2\nost_uuid=11111111-2222-4333-8444-555555555555\n"));
  ASSERT_EQ(Cli("setstripe -o 2 " + fs_.Path("f")).exit_code, 0);
  ASSERT_TRUE(WriteFile(fs_.Path("f"), "on the taken-over OST"));
  ASSERT_TRUE(fs_.Unmount());
  ASSERT_TRUE(fs_.Mount());
  EXPECT_EQ(ReadFile(fs_.Path("f")), "on the taken-over OST");
  // Added once: the same directory again is an OST of this filesystem now.
  EXPECT_EQ(SetSetting(fs_, "ost_add", dir), EINVAL);  // overlaps OST 2
  EXPECT_TRUE(Contains(fs_.Log(), "overlaps OST 2 at " + dir)) << fs_.Log();
}

}  // namespace
}  // namespace sfs::test
