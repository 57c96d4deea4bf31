// Bad input and bad conditions: over-long names, reserved xattrs and the
// settings on the mount root, an OST directory removed at run time, a full
// OST, a busy mount point, wrong or missing OST labels and mkfs refusals.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

constexpr size_t kMiB = 1 << 20;

// The OST of stripe 0 of a file, from user.stripefs.layout; -1 if unknown.
int FirstOst(const std::string& path) {
  const std::string layout = Xattr(path, "user.stripefs.layout");
  unsigned ost = 0;
  const size_t at = layout.find(" stripe0=ost");
  if (at == std::string::npos || sscanf(layout.c_str() + at, " stripe0=ost%u", &ost) != 1) {
    return -1;
  }
  return static_cast<int>(ost);
}

// With stripe_count 1: creates `prefix`0, `prefix`1, ... (kept) until one
// lands on OST `ost` (on_it) or on any other (!on_it); "" if none did.
std::string CreateFileWhere(const MountedFs& fs, const std::string& prefix, int ost, bool on_it) {
  for (int i = 0; i < 200; ++i) {
    const std::string path = fs.Path(prefix + std::to_string(i));
    int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return "";
    close(fd);
    if ((FirstOst(path) == ost) == on_it) return path;
  }
  return "";
}

std::string Stripefs(const std::string& args) { return std::string(StripefsBinary()) + " " + args; }

// --- names ---

TEST(ErrorsTest, NameOf256BytesIsRefusedAndCreatesNothing) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  const std::string long_name(256, 'n');
  const std::string path = fs.Path(long_name);
  EXPECT_EQ(ErrnoOf(open(path.c_str(), O_CREAT | O_WRONLY, 0644)), ENAMETOOLONG);
  struct stat st;
  EXPECT_EQ(ErrnoOf(stat(path.c_str(), &st)), ENAMETOOLONG);
  EXPECT_EQ(ErrnoOf(mkdir(path.c_str(), 0755)), ENAMETOOLONG);
  EXPECT_EQ(ErrnoOf(symlink("x", path.c_str())), ENAMETOOLONG);
  EXPECT_EQ(ErrnoOf(mknod(path.c_str(), S_IFIFO | 0644, 0)), ENAMETOOLONG);
  ASSERT_TRUE(WriteFile(fs.Path("short"), "x"));
  EXPECT_EQ(ErrnoOf(link(fs.Path("short").c_str(), path.c_str())), ENAMETOOLONG);
  EXPECT_EQ(ErrnoOf(rename(fs.Path("short").c_str(), path.c_str())), ENAMETOOLONG);
  EXPECT_EQ(ReadFile(fs.Path("short")), "x");

  CommandResult listed = Shell("ls -A " + fs.mnt());
  EXPECT_EQ(listed.output, "short\n");
  // 255 bytes is fine.
  const std::string longest(255, 'm');
  ASSERT_TRUE(WriteFile(fs.Path(longest), "ok"));
  EXPECT_EQ(ReadFile(fs.Path(longest)), "ok");
}

// --- reserved xattrs and settings ---

TEST(ErrorsTest, UnknownStripefsXattrIsEinvalOnSetAndEnodataOnGet) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), "x"));
  for (const std::string& path : {fs.Path("f"), fs.mnt()}) {
    EXPECT_EQ(ErrnoOf(setxattr(path.c_str(), "user.stripefs.foo", "1", 1, 0)), EINVAL) << path;
    char buf[64];
    EXPECT_EQ(ErrnoOf(getxattr(path.c_str(), "user.stripefs.foo", buf, sizeof(buf))), ENODATA);
    EXPECT_EQ(ErrnoOf(removexattr(path.c_str(), "user.stripefs.foo")), EINVAL);
  }
  CommandResult set = Shell("setfattr -n user.stripefs.foo -v 1 " + fs.Path("f"));
  EXPECT_NE(set.exit_code, 0);
  EXPECT_TRUE(Contains(set.output, "Invalid argument")) << set.output;
  CommandResult get = Shell("getfattr -n user.stripefs.foo " + fs.Path("f"));
  EXPECT_NE(get.exit_code, 0);
  EXPECT_TRUE(Contains(get.output, "No such attribute")) << get.output;
  EXPECT_TRUE(Contains(fs.Log(), "user.stripefs.foo")) << fs.Log();

  // A malformed layout is refused and the layout kept; it is not listed.
  EXPECT_EQ(ErrnoOf(setxattr(fs.Path("f").c_str(), "user.stripefs.layout", "x", 1, 0)), EINVAL);
  EXPECT_TRUE(Contains(Xattr(fs.Path("f"), "user.stripefs.layout"), "stripe_count=4"));
  EXPECT_EQ(listxattr(fs.Path("f").c_str(), nullptr, 0), 0);
  // A setting lives on the mount root only.
  EXPECT_EQ(ErrnoOf(setxattr(fs.Path("f").c_str(), "user.stripefs.jobid_var", "X", 1, 0)), EINVAL);
}

TEST(ErrorsTest, JobidVarSettingOnTheMountRoot) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  const std::string root = fs.mnt();
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "SLURM_JOB_ID");  // the default

  CommandResult set = Shell("setfattr -n user.stripefs.jobid_var -v PBS_JOBID " + root);
  ASSERT_EQ(set.exit_code, 0) << set.output;
  CommandResult get =
      Shell("getfattr --absolute-names --only-values -n user.stripefs.jobid_var " + root);
  EXPECT_EQ(get.output, "PBS_JOBID");

  // Malformed values: refused, old value kept.
  for (const char* bad : {"a b", "", "A=B"}) {
    EXPECT_EQ(ErrnoOf(setxattr(root.c_str(), "user.stripefs.jobid_var", bad, strlen(bad), 0)),
              EINVAL)
        << "'" << bad << "'";
  }
  const std::string too_long(65, 'V');
  EXPECT_EQ(ErrnoOf(setxattr(root.c_str(), "user.stripefs.jobid_var", too_long.data(),
                             too_long.size(), 0)),
            EINVAL);
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "PBS_JOBID");

  // Not root: refused by the daemon (EPERM) once the kernel lets the
  // request through (user.* needs write permission on the directory).
  CommandResult denied =
      Shell("runuser -u nobody -- setfattr -n user.stripefs.jobid_var -v NOPE " + root);
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_TRUE(Contains(denied.output, "Permission denied")) << denied.output;  // kernel: 0755
  ASSERT_EQ(chmod(root.c_str(), 0777), 0);
  denied = Shell("runuser -u nobody -- setfattr -n user.stripefs.jobid_var -v NOPE " + root);
  EXPECT_NE(denied.exit_code, 0);
  EXPECT_TRUE(Contains(denied.output, "Operation not permitted")) << denied.output;
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "PBS_JOBID");
  // ... while an ordinary user.* xattr on the root works for nobody now.
  CommandResult plain = Shell("runuser -u nobody -- setfattr -n user.plain -v 1 " + root);
  EXPECT_EQ(plain.exit_code, 0) << plain.output;

  ASSERT_TRUE(fs.Unmount());
  ASSERT_TRUE(fs.Mount());
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "PBS_JOBID");
  EXPECT_EQ(ErrnoOf(setxattr(root.c_str(), "user.stripefs.jobid_var", "procname_uid", 12, 0)), 0);
  EXPECT_EQ(Xattr(root, "user.stripefs.jobid_var"), "procname_uid");
}

TEST(ErrorsTest, AdminUidMayChangeSettings) {
  MountedFs::Options options;
  options.mount_options = {"admin_uid=1"};
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(chmod(fs.mnt().c_str(), 0777), 0);
  CommandResult daemon =
      Shell("runuser -u daemon -- setfattr -n user.stripefs.jobid_var -v JOB " + fs.mnt());
  EXPECT_EQ(daemon.exit_code, 0) << daemon.output;
  EXPECT_EQ(Xattr(fs.mnt(), "user.stripefs.jobid_var"), "JOB");
  CommandResult nobody =
      Shell("runuser -u nobody -- setfattr -n user.stripefs.jobid_var -v NOPE " + fs.mnt());
  EXPECT_TRUE(Contains(nobody.output, "Operation not permitted")) << nobody.output;
}

// --- OST failures ---

TEST(ErrorsTest, OstRemovedAtRunTimeFailsOnlyItsFiles) {
  MountedFs::Options options;
  options.stripe_count = 1;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  constexpr int kGone = 2;
  const std::string victim = CreateFileWhere(fs, "v", kGone, true);
  const std::string survivor = CreateFileWhere(fs, "s", kGone, false);
  ASSERT_FALSE(victim.empty());
  ASSERT_FALSE(survivor.empty());
  const std::string data = RandomBytes(kMiB + 10, 31);
  ASSERT_TRUE(WriteFile(victim, data));
  ASSERT_TRUE(WriteFile(survivor, data));

  CommandResult removed = Shell("rm -rf " + fs.ost_dir(kGone));
  ASSERT_EQ(removed.exit_code, 0) << removed.output;

  int fd = open(victim.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ErrnoOf(pwrite(fd, "x", 1, 0)), EIO);
  close(fd);
  // A new file placed on the vanished OST fails the same way.
  const std::string fresh = CreateFileWhere(fs, "n", kGone, true);
  ASSERT_FALSE(fresh.empty());
  fd = open(fresh.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(ErrnoOf(pwrite(fd, data.data(), 4096, 0)), EIO);
  close(fd);
  struct stat st;
  ASSERT_EQ(stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0);  // a failed write does not grow the file
  EXPECT_TRUE(Contains(fs.Log(), fs.ost_dir(kGone))) << fs.Log();

  // Files on the other OSTs keep working, old and new.
  EXPECT_TRUE(SameBytes(ReadFile(survivor), data));
  ASSERT_TRUE(WriteFile(survivor, "rewritten"));
  EXPECT_EQ(ReadFile(survivor), "rewritten");
  const std::string elsewhere = CreateFileWhere(fs, "e", kGone, false);
  ASSERT_FALSE(elsewhere.empty());
  ASSERT_TRUE(WriteFile(elsewhere, data));
  EXPECT_TRUE(SameBytes(ReadFile(elsewhere), data));
  // The namespace is untouched.
  EXPECT_EQ(Shell("ls -l " + fs.mnt()).exit_code, 0);
  EXPECT_EQ(ErrnoOf(unlink(survivor.c_str())), 0);
}

// Bytes that were written to an OST that is gone must not come back as
// zeros: a read of such a file is an I/O error, as on Lustre.
TEST(ErrorsTest, ReadOfFileOnRemovedOstIsAnErrorNotZeros) {
  MountedFs::Options options;
  options.stripe_count = 1;
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  constexpr int kGone = 1;
  const std::string victim = CreateFileWhere(fs, "v", kGone, true);
  ASSERT_FALSE(victim.empty());
  ASSERT_TRUE(WriteFile(victim, RandomBytes(8192, 32)));
  ASSERT_EQ(Shell("rm -rf " + fs.ost_dir(kGone)).exit_code, 0);
  int fd = open(victim.c_str(), O_RDONLY | O_DIRECT);  // past any cached page
  ASSERT_GE(fd, 0);
  void* buf = nullptr;
  ASSERT_EQ(posix_memalign(&buf, 4096, 8192), 0);
  EXPECT_EQ(ErrnoOf(pread(fd, buf, 8192, 0)), EIO);
  free(buf);
  close(fd);
}

TEST(ErrorsTest, FullOstGivesEnospcAndOthersKeepWorking) {
  constexpr int kSmall = 1;
  MountedFs::Options options;
  options.stripe_count = 1;
  options.before_mkfs = [](MountedFs& fs) { ASSERT_TRUE(fs.MountTmpfs(kSmall, "4m")); };
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string full = CreateFileWhere(fs, "full", kSmall, true);
  const std::string other = CreateFileWhere(fs, "other", kSmall, false);
  ASSERT_FALSE(full.empty());
  ASSERT_FALSE(other.empty());

  const std::string before = RandomBytes(kMiB, 33);
  int fd = open(full.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, before, 0));
  ASSERT_EQ(fsync(fd), 0);
  const std::string chunk = RandomBytes(kMiB, 34);
  int err = 0;
  off_t at = kMiB;
  for (int i = 0; i < 16 && err == 0; ++i, at += kMiB) {
    if (pwrite(fd, chunk.data(), chunk.size(), at) != static_cast<ssize_t>(chunk.size())) {
      err = errno;
    }
  }
  close(fd);
  EXPECT_EQ(err, ENOSPC);
  const off_t reached = at - kMiB;  // the write at `reached` failed
  struct stat st;
  ASSERT_EQ(stat(full.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, reached);

  // Other OSTs still take writes, and the bytes written before still read.
  const std::string more = RandomBytes(3 * kMiB, 35);
  ASSERT_TRUE(WriteFile(other, more)) << strerror(errno);
  EXPECT_TRUE(SameBytes(ReadFile(other), more));
  auto back = ReadFile(full);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(SameBytes(back->substr(0, kMiB), before));
  for (off_t off = kMiB; off < reached; off += kMiB) {
    EXPECT_TRUE(SameBytes(back->substr(off, kMiB), chunk)) << off;
  }

  // The failed write stored nothing the file shows: growing the file
  // reads zeros there, not a part of the refused chunk.
  ASSERT_EQ(truncate(full.c_str(), reached + kMiB), 0);
  back = ReadFile(full);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(SameBytes(back->substr(reached), std::string(kMiB, '\0')));

  // Removing the file gives the space back.
  ASSERT_EQ(unlink(full.c_str()), 0);
  ASSERT_TRUE(WaitFor([&] { return fs.Objects(kSmall).empty(); }));
  const std::string again = CreateFileWhere(fs, "again", kSmall, true);
  ASSERT_FALSE(again.empty());
  EXPECT_TRUE(WriteFile(again, more)) << strerror(errno);
  EXPECT_TRUE(SameBytes(ReadFile(again), more));
}

// A write refused for lack of space may have stored part of its bytes past
// the end of the file; a later write further on must not bring them to
// light: the gap reads as zeros.
TEST(ErrorsTest, RefusedWriteLeavesNothingForALaterSparseWrite) {
  constexpr int kSmall = 3;
  MountedFs::Options options;
  options.stripe_count = 1;
  options.before_mkfs = [](MountedFs& fs) { ASSERT_TRUE(fs.MountTmpfs(kSmall, "4m")); };
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  const std::string filler = CreateFileWhere(fs, "filler", kSmall, true);
  const std::string file = CreateFileWhere(fs, "file", kSmall, true);
  ASSERT_FALSE(filler.empty());
  ASSERT_FALSE(file.empty());
  ASSERT_TRUE(WriteFile(filler, RandomBytes(2 * kMiB, 37)));

  const std::string chunk = RandomBytes(kMiB, 38);
  int fd = open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(PwriteAll(fd, "head", 0));
  // Unaligned 1 MiB writes span 257 pages, so the kernel may send two
  // requests and the write may come back short before it fails.
  int err = 0;
  off_t end = 4;
  while (err == 0 && end < static_cast<off_t>(16 * kMiB)) {
    ssize_t n = pwrite(fd, chunk.data(), chunk.size(), end);
    if (n < 0) err = errno;
    if (n > 0) end += n;
  }
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  close(fd);
  ASSERT_EQ(err, ENOSPC);
  ASSERT_EQ(st.st_size, end);
  fd = open(file.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);

  ASSERT_EQ(unlink(filler.c_str()), 0);
  ASSERT_TRUE(WaitFor([&] { return fs.Objects(kSmall).size() == 1; }));
  ASSERT_TRUE(PwriteAll(fd, "far", end + kMiB)) << strerror(errno);
  close(fd);
  auto back = ReadFile(file);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), static_cast<size_t>(end + kMiB + 3));
  EXPECT_TRUE(SameBytes(back->substr(end), std::string(kMiB, '\0') + "far"));
}

// --- mount and mkfs refusals ---

TEST(ErrorsTest, SecondMountOnBusyMountPointFails) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), "still here"));
  CommandResult second = Shell(Stripefs("mount " + fs.meta_dir() + " " + fs.mnt()));
  EXPECT_EQ(second.exit_code, 1) << second.output;
  EXPECT_TRUE(Contains(second.output, "busy")) << second.output;
  // Even in the foreground, and the first mount keeps working.
  second = Shell(Stripefs("mount " + fs.meta_dir() + " " + fs.mnt() + " -f"));
  EXPECT_EQ(second.exit_code, 1) << second.output;
  EXPECT_TRUE(Contains(second.output, "busy")) << second.output;
  EXPECT_EQ(ReadFile(fs.Path("f")), "still here");
  ASSERT_TRUE(WriteFile(fs.Path("g"), "new"));
  EXPECT_EQ(ReadFile(fs.Path("g")), "new");
}

TEST(ErrorsTest, MountRefusesMissingOrWrongOstLabels) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_TRUE(WriteFile(fs.Path("f"), RandomBytes(4 * kMiB, 36)));
  ASSERT_TRUE(fs.Unmount());
  const std::string mount = Stripefs("mount " + fs.meta_dir() + " " + fs.mnt());
  auto label = [&](int i) { return fs.ost_dir(i) + "/.stripefs-ost"; };

  // The label file moved away: no label.
  ASSERT_EQ(rename(label(1).c_str(), (label(1) + ".away").c_str()), 0);
  CommandResult missing = Shell(mount);
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(Contains(missing.output, fs.ost_dir(1))) << missing.output;
  EXPECT_TRUE(Contains(missing.output, "label")) << missing.output;
  EXPECT_EQ(Shell("mountpoint -q " + fs.mnt()).exit_code, 32);  // not a mount point
  ASSERT_EQ(rename((label(1) + ".away").c_str(), label(1).c_str()), 0);

  // Two OSTs' labels swapped: each carries another OST's identity.
  ASSERT_EQ(Shell("mv " + label(0) + " " + fs.root() + "/l0 && mv " + label(3) + " " + label(0) +
                  " && mv " + fs.root() + "/l0 " + label(3))
                .exit_code,
            0);
  CommandResult swapped = Shell(mount);
  EXPECT_EQ(swapped.exit_code, 1) << swapped.output;
  EXPECT_TRUE(Contains(swapped.output, fs.ost_dir(0))) << swapped.output;
  EXPECT_TRUE(Contains(swapped.output, "label of another")) << swapped.output;
  EXPECT_EQ(Shell("mountpoint -q " + fs.mnt()).exit_code, 32);  // not a mount point

  // A whole OST directory missing (an unmounted disk).
  ASSERT_EQ(Shell("mv " + label(0) + " " + fs.root() + "/l0 && mv " + label(3) + " " + label(0) +
                  " && mv " + fs.root() + "/l0 " + label(3))
                .exit_code,
            0);
  ASSERT_EQ(rename(fs.ost_dir(2).c_str(), (fs.ost_dir(2) + ".away").c_str()), 0);
  CommandResult gone = Shell(mount);
  EXPECT_EQ(gone.exit_code, 1) << gone.output;
  EXPECT_TRUE(Contains(gone.output, fs.ost_dir(2))) << gone.output;
  EXPECT_EQ(Shell("mountpoint -q " + fs.mnt()).exit_code, 32);  // not a mount point
  ASSERT_EQ(rename((fs.ost_dir(2) + ".away").c_str(), fs.ost_dir(2).c_str()), 0);

  // Everything back in place: it mounts and the data is there.
  ASSERT_TRUE(fs.Mount());
  struct stat st;
  ASSERT_EQ(stat(fs.Path("f").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, static_cast<off_t>(4 * kMiB));
  EXPECT_TRUE(SameBytes(ReadFile(fs.Path("f")), RandomBytes(4 * kMiB, 36)));
}

TEST(ErrorsTest, MkfsRefusesDuplicateNestedUsedOrForeignDirectories) {
  MountedFs fs;  // for its temporary folder, and a formatted fs to reuse
  ASSERT_TRUE(fs.formatted());
  const std::string dir = fs.root() + "/mkfs";
  const std::string meta = dir + "/meta";
  auto mkfs = [&](const std::string& args) {
    return Shell(Stripefs("mkfs --meta " + meta + args));
  };

  CommandResult twice = mkfs(" --ost " + dir + "/a --ost " + dir + "/a");
  EXPECT_EQ(twice.exit_code, 1) << twice.output;
  EXPECT_TRUE(Contains(twice.output, "given twice")) << twice.output;
  EXPECT_FALSE(Exists(dir + "/a"));  // a refused mkfs creates nothing
  CommandResult same_via_slash = mkfs(" --ost " + dir + "/a --ost " + dir + "/./a/");
  EXPECT_EQ(same_via_slash.exit_code, 1) << same_via_slash.output;
  CommandResult nested = mkfs(" --ost " + dir + "/a --ost " + dir + "/a/b");
  EXPECT_EQ(nested.exit_code, 1) << nested.output;
  EXPECT_FALSE(Exists(dir + "/a/b"));
  CommandResult over_meta = mkfs(" --ost " + meta);
  EXPECT_EQ(over_meta.exit_code, 1) << over_meta.output;
  CommandResult too_wide = mkfs(" --ost " + dir + "/a --ost " + dir + "/b --stripe-count 3");
  EXPECT_EQ(too_wide.exit_code, 1) << too_wide.output;
  CommandResult bad_size = mkfs(" --ost " + dir + "/a --stripe-size 1000");
  EXPECT_EQ(bad_size.exit_code, 1) << bad_size.output;
  EXPECT_FALSE(Exists(dir + "/a/.stripefs-ost"));

  // An OST directory with other data: refused, with or without --force.
  ASSERT_EQ(Shell("mkdir -p " + dir + "/data && echo precious > " + dir + "/data/file").exit_code,
            0);
  for (const char* force : {"", " --force"}) {
    CommandResult foreign = mkfs(" --ost " + dir + "/a --ost " + dir + "/data" + force);
    EXPECT_EQ(foreign.exit_code, 1) << foreign.output;
    EXPECT_TRUE(Contains(foreign.output, dir + "/data")) << foreign.output;
    EXPECT_EQ(ReadFile(dir + "/data/file"), "precious\n");
  }

  // A good format, then the same directories again: refused without --force.
  CommandResult good = mkfs(" --ost " + dir + "/a --ost " + dir + "/b");
  ASSERT_EQ(good.exit_code, 0) << good.output;
  EXPECT_TRUE(Exists(dir + "/a/.stripefs-ost"));
  CommandResult again = mkfs(" --ost " + dir + "/c");
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_TRUE(Contains(again.output, "not empty")) << again.output;
  EXPECT_FALSE(Exists(dir + "/c/.stripefs-ost"));
  CommandResult used_ost = Shell(Stripefs("mkfs --meta " + dir + "/meta2 --ost " + dir + "/a"));
  EXPECT_EQ(used_ost.exit_code, 1) << used_ost.output;
  EXPECT_TRUE(Contains(used_ost.output, "--force")) << used_ost.output;
  // --force with one OST directory it must refuse: the existing store and
  // OST labels are left whole, not destroyed before the refusal.
  CommandResult half_forced = mkfs(" --ost " + dir + "/a --ost " + dir + "/data --force");
  EXPECT_EQ(half_forced.exit_code, 1) << half_forced.output;
  EXPECT_TRUE(Exists(meta + "/CURRENT")) << "the previous store was destroyed";
  EXPECT_TRUE(Exists(dir + "/a/.stripefs-ost"));
  CommandResult forced = mkfs(" --ost " + dir + "/a --ost " + dir + "/b --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;

  // Another filesystem's live OST, without --force.
  CommandResult stolen = Shell(Stripefs("mkfs --meta " + dir + "/meta3 --ost " + fs.ost_dir(0)));
  EXPECT_EQ(stolen.exit_code, 1) << stolen.output;
}

}  // namespace
}  // namespace sfs::test
