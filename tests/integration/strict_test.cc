// Strict input on a real mount (issue 8, "Trust"): what a setting, an
// attribute name or a mount option used to accept and should refuse. Each
// refusal is EINVAL (or EEXIST/ENODATA for the xattr flags) with a log line
// or a message, and changes nothing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

int SetX(const std::string& path, const std::string& name, const std::string& value,
         int flags = 0) {
  return ErrnoOf(setxattr(path.c_str(), name.c_str(), value.data(), value.size(), flags));
}

std::string Stripefs(const std::string& args) { return std::string(StripefsBinary()) + " " + args; }

TEST(StrictTest, XattrCreateAndReplaceOnReservedNames) {
  MountedFs::Options options;
  options.stripe_count = 1;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string root = fs.mnt();

  // A setting with a default exists: XATTR_CREATE is EEXIST, XATTR_REPLACE works.
  EXPECT_EQ(SetX(root, "user.stripefs.jobid_var", "NEW", XATTR_CREATE), EEXIST);
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "SLURM_JOB_ID");
  EXPECT_EQ(SetX(root, "user.stripefs.nrs_crrn_quantum", "5", XATTR_CREATE), EEXIST);
  EXPECT_EQ(Xattr(root, "user.stripefs.nrs_crrn_quantum"), "8");
  EXPECT_EQ(SetX(root, "user.stripefs.jobid_var", "PBS_JOBID", XATTR_REPLACE), 0);
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "PBS_JOBID");
  EXPECT_TRUE(Contains(fs.Log(), "user.stripefs.jobid_var has a value (XATTR_CREATE)")) << fs.Log();

  // A pool exists once set.
  EXPECT_EQ(SetX(root, "user.stripefs.pool.fast", "osts=0,1", XATTR_REPLACE), ENODATA);
  EXPECT_EQ(Xattr(root, "user.stripefs.pool.fast"), "<No data available>");
  EXPECT_EQ(SetX(root, "user.stripefs.pool.fast", "osts=0,1", XATTR_CREATE), 0);
  EXPECT_EQ(SetX(root, "user.stripefs.pool.fast", "osts=2", XATTR_CREATE), EEXIST);
  EXPECT_EQ(Xattr(root, "user.stripefs.pool.fast"), "osts=0-1");
  EXPECT_EQ(SetX(root, "user.stripefs.pool.fast", "osts=2", XATTR_REPLACE), 0);
  EXPECT_EQ(Xattr(root, "user.stripefs.pool.fast"), "osts=2");
  EXPECT_EQ(SetX(root, "user.stripefs.pool_rule.r", "uid={7} pool=fast", XATTR_REPLACE), ENODATA);
  EXPECT_EQ(Xattr(root, "user.stripefs.pool_rules"), "");
  // An unknown name stays EINVAL whatever the flags.
  EXPECT_EQ(SetX(root, "user.stripefs.nosuch", "1", XATTR_REPLACE), EINVAL);

  // A directory's layout and project id exist once set.
  const std::string dir = fs.Path("d");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  EXPECT_EQ(SetX(dir, "user.stripefs.layout", "stripe_count=2", XATTR_REPLACE), ENODATA);
  EXPECT_EQ(Xattr(dir, "user.stripefs.layout"), "<No data available>");
  EXPECT_EQ(SetX(dir, "user.stripefs.layout", "stripe_count=2", XATTR_CREATE), 0);
  EXPECT_EQ(SetX(dir, "user.stripefs.layout", "stripe_count=3", XATTR_CREATE), EEXIST);
  EXPECT_EQ(Xattr(dir, "user.stripefs.layout"), "stripe_count=2");
  EXPECT_EQ(SetX(dir, "user.stripefs.projid", "42", XATTR_REPLACE), ENODATA);
  EXPECT_EQ(SetX(dir, "user.stripefs.projid", "42", XATTR_CREATE), 0);
  EXPECT_EQ(SetX(dir, "user.stripefs.projid", "43", XATTR_CREATE), EEXIST);
  EXPECT_EQ(Xattr(dir, "user.stripefs.projid"), "42");

  // A regular file always has a layout.
  const std::string file = fs.Path("f");
  ASSERT_EQ(mknod(file.c_str(), S_IFREG | 0644, 0), 0);
  const std::string before = Xattr(file, "user.stripefs.layout");
  EXPECT_TRUE(Contains(before, "stripe_count=1")) << before;
  EXPECT_EQ(SetX(file, "user.stripefs.layout", "stripe_count=2", XATTR_CREATE), EEXIST);
  EXPECT_EQ(Xattr(file, "user.stripefs.layout"), before);
  EXPECT_EQ(SetX(file, "user.stripefs.layout", "stripe_count=2", XATTR_REPLACE), 0);
  EXPECT_TRUE(Contains(Xattr(file, "user.stripefs.layout"), "stripe_count=2"));

  // Ordinary attributes keep the flags as before.
  EXPECT_EQ(SetX(file, "user.plain", "1", XATTR_REPLACE), ENODATA);
  EXPECT_EQ(SetX(file, "user.plain", "1", XATTR_CREATE), 0);
  EXPECT_EQ(SetX(file, "user.plain", "2", XATTR_CREATE), EEXIST);
}

TEST(StrictTest, MalformedNamesAndValuesAreRefusedAndChangeNothing) {
  MountedFs::Options options;
  options.stripe_count = 1;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string root = fs.mnt();
  const std::string file = fs.Path("f");
  ASSERT_TRUE(WriteFile(file, "x"));

  // "user." alone names no attribute.
  EXPECT_EQ(SetX(file, "user.", "v"), EINVAL);
  char buf[64];
  EXPECT_EQ(ErrnoOf(getxattr(file.c_str(), "user.", buf, sizeof(buf))), EINVAL);
  EXPECT_EQ(ErrnoOf(removexattr(file.c_str(), "user.")), EINVAL);
  EXPECT_EQ(listxattr(file.c_str(), nullptr, 0), 0);
  EXPECT_TRUE(Contains(fs.Log(), "empty attribute name")) << fs.Log();

  // A project id on anything but a directory.
  EXPECT_EQ(SetX(file, "user.stripefs.projid", "42"), EINVAL);
  EXPECT_EQ(Xattr(file, "user.stripefs.projid"), "<No data available>");
  EXPECT_TRUE(Contains(fs.Log(), "project id can only be set on a directory")) << fs.Log();

  // jobid_var must be an environment variable name.
  for (const char* bad : {"1JOB", "9", "JOB-ID", "JOB.ID"}) {
    EXPECT_EQ(SetX(root, "user.stripefs.jobid_var", bad), EINVAL) << bad;
  }
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "SLURM_JOB_ID");
  EXPECT_EQ(SetX(root, "user.stripefs.jobid_var", "_JOB1"), 0);
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "_JOB1");

  // Control characters in pool rules and TBF rules; the log line quotes
  // them escaped, so it stays one line.
  ASSERT_EQ(SetX(root, "user.stripefs.pool.fast", "osts=0,1"), 0);
  const std::string nul_rule("jobid={ior\0x} pool=fast", 23);
  EXPECT_EQ(SetX(root, "user.stripefs.pool_rule.r", nul_rule), EINVAL);
  EXPECT_EQ(SetX(root, "user.stripefs.pool_rule.r", "jobid={ior\x1b[2J} pool=fast"), EINVAL);
  EXPECT_EQ(SetX(root, "user.stripefs.pool_rule.r", "jobid={a\nb\x01} pool=fast"), EINVAL);
  EXPECT_EQ(Xattr(root, "user.stripefs.pool_rules"), "");
  EXPECT_TRUE(Contains(fs.Log(), "jobid={a\\x0ab\\x01} pool=fast")) << fs.Log();
  EXPECT_FALSE(Contains(fs.Log(), "\x1b")) << "a raw escape reached the log";
  const std::string nul_tbf("start x jobid={a\0b} rate=5", 26);
  EXPECT_EQ(SetX(root, "user.stripefs.nrs_tbf_rule", nul_tbf), EINVAL);
  EXPECT_EQ(SetX(root, "user.stripefs.nrs_tbf_rule", "start x jobid={a\x7f} rate=5"), EINVAL);
  EXPECT_FALSE(Contains(Xattr(root, "user.stripefs.nrs_tbf_rule"), "x jobid"));
  EXPECT_TRUE(Contains(fs.Log(), "control character")) << fs.Log();
}

TEST(StrictTest, LayoutCountMustMatchItsOstList) {
  MountedFs::Options options;
  options.stripe_count = 1;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string dir = fs.Path("d");
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  EXPECT_EQ(SetX(dir, "user.stripefs.layout", "stripe_count=4 osts=1"), EINVAL);
  EXPECT_EQ(Xattr(dir, "user.stripefs.layout"), "<No data available>");
  EXPECT_TRUE(Contains(fs.Log(), "osts lists 1 OSTs")) << fs.Log();

  const std::string bin = Stripefs("setstripe ");
  CommandResult refused = Shell(bin + "-c 4 -o 1 " + fs.Path("wide"));
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  EXPECT_TRUE(Contains(refused.output, "Invalid argument")) << refused.output;
  EXPECT_FALSE(Exists(fs.Path("wide"))) << "a refused setstripe left its new file behind";

  CommandResult all = Shell(bin + "-c -1 -o 3,1 " + fs.Path("all"));
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const std::string layout = Xattr(fs.Path("all"), "user.stripefs.layout");
  EXPECT_TRUE(Contains(layout, "stripe_count=2 ")) << layout;
  EXPECT_TRUE(Contains(layout, "stripe0=ost3:")) << layout;
  EXPECT_TRUE(Contains(layout, "stripe1=ost1:")) << layout;
  CommandResult same = Shell(bin + "-c 2 -o 0,2 " + fs.Path("same"));
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_TRUE(Contains(Xattr(fs.Path("same"), "user.stripefs.layout"), "stripe_count=2 "));
}

TEST(StrictTest, MkfsStripeCountIsParsedWhole) {
  MountedFs fs;  // for its temporary folder
  ASSERT_TRUE(fs.formatted());
  const std::string dir = fs.root() + "/mkfs";
  for (const char* bad : {"4294967297", "2x", "-1", "", "0x2"}) {
    CommandResult r = Shell(Stripefs("mkfs --meta " + dir + "/meta --ost " + dir + "/a --ost " +
                                     dir + "/b --stripe-count '" + bad + "'"));
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.output;
    EXPECT_TRUE(Contains(r.output, "stripe count")) << bad << ": " << r.output;
    EXPECT_FALSE(Exists(dir + "/a/.stripefs-ost")) << bad;
  }
  CommandResult good = Shell(Stripefs("mkfs --meta " + dir + "/meta --ost " + dir + "/a --ost " +
                                      dir + "/b --stripe-count 2"));
  EXPECT_EQ(good.exit_code, 0) << good.output;
}

// -o values parse whole and in range; a refused option mounts nothing.
TEST(StrictTest, BadMountOptionsMountNothing) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), "kept"));
  ASSERT_TRUE(fs.Unmount());
  const std::string mount = Stripefs("mount " + fs.meta_dir() + " " + fs.mnt());
  for (const char* bad :
       {"admin_uid=4295032830", "admin_uid=65534junk", "admin_uid=-1",
        "admin_uid=", "attr_timeout=nan", "attr_timeout=-1", "attr_timeout=1e9", "ost_threads=0",
        "ost_threads=65", "ost_threads=2x", "ost_timeout=0", "ost_timeout=3601", "ost_timeout=inf",
        "log_level=loud", "ro,admin_uid=1,ost_threads=0", "max_read=100", "max_read=2097152",
        "max_read=64k"}) {
    for (const char* foreground : {"", " -f"}) {
      CommandResult r = Shell(mount + " -o " + bad + foreground);
      EXPECT_EQ(r.exit_code, 1) << bad << foreground << ": " << r.output;
      EXPECT_TRUE(Contains(r.output, "bad mount option")) << bad << ": " << r.output;
      EXPECT_EQ(Shell("mountpoint -q " + fs.mnt()).exit_code, 32) << bad << " mounted";
    }
  }
  CommandResult named = Shell(mount + " -o admin_uid=4295032830");
  EXPECT_TRUE(Contains(named.output, "admin_uid=4295032830")) << named.output;

  // Good values of every numeric option mount; ost_timeout is ours, not
  // FUSE's; max_read is both (libfuse ends a session whose INIT reply
  // disagrees with the mount's max_read, so the daemon must repeat it).
  CommandResult good = Shell(mount + " -o admin_uid=4294967294,attr_timeout=0.5,ost_threads=3," +
                             "ost_timeout=2.5,log_level=warn,max_read=131072");
  ASSERT_EQ(good.exit_code, 0) << good.output;
  EXPECT_EQ(ReadFile(fs.Path("f")), "kept");
  EXPECT_EQ(Shell("fusermount3 -u " + fs.mnt()).exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return Shell("mountpoint -q " + fs.mnt()).exit_code == 32; }));
  // The daemon may still hold its store for a moment after the unmount; the
  // next mount waits for it (design.md, "One daemon per metadata store").
  ASSERT_TRUE(fs.Mount());
  EXPECT_EQ(ReadFile(fs.Path("f")), "kept");
}

}  // namespace
}  // namespace sfs::test
