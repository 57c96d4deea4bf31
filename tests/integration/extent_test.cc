// Extent credits on a real mount (issue 11): overlapping striped O_DIRECT
// writes and reads never mix while the OSTs' schedulers reorder, and the
// mount works without them (extent_credits=off) as before. With
// max_request=4M, 4 MiB I/O is one FUSE request and never mixes either.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <string>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

const std::string kTornIo = std::string(SFS_BUILD_DIR) + "/tools/bench/torn_io";

struct TornCount {
  long reads = -1;
  long torn = -1;
  long writes = -1;
};

TornCount RunTornIo(const std::string& file, const std::string& size, int reads) {
  CommandResult r = Shell(kTornIo + " " + file + " " + size + " 2 2 " + std::to_string(reads));
  TornCount count;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(sscanf(r.output.c_str(), "reads %ld torn %ld writes %ld", &count.reads, &count.torn,
                   &count.writes),
            3)
      << r.output;
  return count;
}

MountedFs::Options Striped64K() {
  MountedFs::Options options;
  options.osts = 4;
  options.stripe_count = 4;
  options.stripe_size = "64K";  // a 512 KiB request spans every OST twice
  return options;
}

// One FUSE request per read and per write (512 KiB: within max_read and
// max_write), each cut into a part per OST that the OST's policy orders on
// its own: with the credits no read sees two writes.
TEST(ExtentTest, OverlappingStripedDirectIoIsNeverTornWhileOstsReorder) {
  MountedFs fs(Striped64K());
  ASSERT_TRUE(fs.mounted());
  for (const char* policies : {"orr", "tbf uid", "crrn"}) {
    ASSERT_EQ(SetSetting(fs, "nrs_policies", policies), 0) << policies;
    const std::string file = fs.Path(std::string("torn_") + policies[0]);
    TornCount count = RunTornIo(file, "512K", 1500);
    EXPECT_EQ(count.reads, 1500) << policies;
    EXPECT_EQ(count.torn, 0) << policies;
    EXPECT_GT(count.writes, 0) << policies;
  }
}

// Without credits the same I/O runs and stores what the last write wrote.
TEST(ExtentTest, WithoutCreditsTheMountStillWorks) {
  MountedFs::Options options = Striped64K();
  options.mount_options = {"extent_credits=off"};
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  TornCount count = RunTornIo(fs.Path("plain"), "512K", 200);
  EXPECT_EQ(count.reads, 200);
  ASSERT_EQ(Shell("dd if=/dev/urandom of=" + fs.root() + "/src bs=1M count=3 status=none").exit_code, 0);
  ASSERT_EQ(Shell("cp " + fs.root() + "/src " + fs.Path("copy")).exit_code, 0);
  EXPECT_EQ(Shell("cmp " + fs.root() + "/src " + fs.Path("copy")).exit_code, 0);
}

// All threads through one handle: the handle alone caches a write credit
// over the whole file (lockless mode), and its users still keep order.
TEST(ExtentTest, OneHandleAloneKeepsItsOwnUsersInOrder) {
  MountedFs fs(Striped64K());
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(SetSetting(fs, "nrs_policies", "orr"), 0);
  CommandResult r = Shell(kTornIo + " " + fs.Path("one") + " 512K 2 2 1000 one-handle");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  long reads = -1, torn = -1;
  ASSERT_EQ(sscanf(r.output.c_str(), "reads %ld torn %ld", &reads, &torn), 2) << r.output;
  EXPECT_EQ(reads, 1000);
  EXPECT_EQ(torn, 0);
}

// The kernel's cap on pages per FUSE request, which max_request needs
// raised. It is the whole machine's, so a test sets it only for itself and
// puts the old value back; a mount keeps what it was when it was made.
class PagesLimit {
 public:
  static constexpr const char* kPath = "/proc/sys/fs/fuse/max_pages_limit";
  explicit PagesLimit(int pages) {
    std::ifstream in(kPath);
    present_ = static_cast<bool>(in >> old_);
    if (present_) set_ = Write(pages);
  }
  ~PagesLimit() {
    if (present_) Write(old_);
  }
  bool present() const { return present_; }  // false: an older kernel, 256 pages fixed
  bool set() const { return set_; }

 private:
  static bool Write(int pages) {
    std::ofstream out(kPath);
    out << pages << "\n" << std::flush;
    return out.good();
  }
  bool present_ = false;
  bool set_ = false;
  int old_ = 0;
};

// The largest read or write ("read_bytes", "write_bytes") an OST served
// for job `job` (job_stats): for a file on one OST, the largest FUSE
// request of that job.
uint64_t LargestPart(const MountedFs& fs, const std::string& job, const std::string& kind) {
  const std::string yaml = GetSetting(fs, "job_stats");
  uint64_t largest = 0;
  const std::string id = "job_id:          \"" + job + "\"";
  for (size_t at = yaml.find(id); at != std::string::npos; at = yaml.find(id, at + 1)) {
    const size_t next = yaml.find("job_id:", at + id.size());
    const size_t line = yaml.find(kind + ":", at);
    if (line == std::string::npos || line > next) continue;
    uint64_t max = 0;
    const size_t field = yaml.find("max: ", line);
    if (field != std::string::npos && sscanf(yaml.c_str() + field, "max: %" SCNu64, &max) == 1) {
      largest = std::max(largest, max);
    }
  }
  return largest;
}

// Writes and reads 8 MiB of a new file on one OST with 4 MiB O_DIRECT
// calls as job `job`; false if anything failed.
bool DirectOnOneOst(const MountedFs& fs, const std::string& name, const std::string& job) {
  const std::string file = fs.Path(name);
  return Shell(std::string(StripefsBinary()) + " setstripe -c 1 " + file).exit_code == 0 &&
         Shell("SLURM_JOB_ID=" + job + " dd if=/dev/urandom of=" + file +
               " bs=4M count=2 oflag=direct status=none")
                 .exit_code == 0 &&
         Shell("SLURM_JOB_ID=" + job + " dd if=" + file + " of=/dev/null bs=4M iflag=direct " +
               "status=none")
                 .exit_code == 0;
}

// max_request=4M with the kernel's limit raised: a 4 MiB O_DIRECT write or
// read is one FUSE request, so the credits keep it whole as well.
TEST(ExtentTest, FourMiBRequestsWithMaxRequestAreNeverTorn) {
  PagesLimit limit(1024);
  if (!limit.present()) {
    GTEST_SKIP() << "this kernel has no " << PagesLimit::kPath
                 << ": FUSE requests stay within 256 pages (1 MiB), max_request cannot help";
  }
  ASSERT_TRUE(limit.set()) << "cannot write " << PagesLimit::kPath << " (not root?)";
  MountedFs::Options options = Striped64K();
  options.mount_options = {"max_request=4M"};
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  // INIT is answered while the mount comes up; its log line may follow.
  EXPECT_TRUE(WaitFor([&] { return Contains(fs.Log(), "max_write 4194304 (max_request)"); }))
      << fs.Log();
  ASSERT_TRUE(DirectOnOneOst(fs, "one", "big"));
  EXPECT_EQ(LargestPart(fs, "big", "write_bytes"), 4u << 20);
  EXPECT_EQ(LargestPart(fs, "big", "read_bytes"), 4u << 20);
  for (const char* policies : {"orr", "tbf uid"}) {
    ASSERT_EQ(SetSetting(fs, "nrs_policies", policies), 0) << policies;
    TornCount count = RunTornIo(fs.Path(std::string("big_") + policies[0]), "4M", 600);
    EXPECT_EQ(count.reads, 600) << policies;
    EXPECT_EQ(count.torn, 0) << policies;
    EXPECT_GT(count.writes, 0) << policies;
  }
}

// Where the kernel allows fewer pages than asked, it keeps its limit and
// says nothing: the mount works, in 1 MiB requests, and its log says so.
TEST(ExtentTest, MaxRequestAboveTheKernelLimitMountsAndSaysWhatItGot) {
  PagesLimit limit(256);
  ASSERT_TRUE(!limit.present() || limit.set()) << "cannot write " << PagesLimit::kPath;
  MountedFs::Options options;
  options.mount_options = {"max_request=4M"};
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  EXPECT_TRUE(Contains(fs.Log(), limit.present()
                                     ? "the kernel sends at most 1048576 bytes a request"
                                     : "has no /proc/sys/fs/fuse/max_pages_limit"))
      << fs.Log();
  ASSERT_TRUE(DirectOnOneOst(fs, "capped", "capped"));
  EXPECT_EQ(LargestPart(fs, "capped", "write_bytes"), 1u << 20);
  EXPECT_EQ(LargestPart(fs, "capped", "read_bytes"), 1u << 20);
  ASSERT_EQ(
      Shell("dd if=/dev/urandom of=" + fs.root() + "/src bs=1M count=9 status=none").exit_code, 0);
  ASSERT_EQ(Shell("cp " + fs.root() + "/src " + fs.Path("copy")).exit_code, 0);
  EXPECT_EQ(Shell("cmp " + fs.root() + "/src " + fs.Path("copy")).exit_code, 0);
}

// Through the page cache (cache=writeback) large requests carry the
// flusher's pieces; what is written reads back.
TEST(ExtentTest, MaxRequestWithWritebackCacheKeepsData) {
  PagesLimit limit(1024);
  if (!limit.present()) GTEST_SKIP() << "this kernel has no " << PagesLimit::kPath;
  ASSERT_TRUE(limit.set()) << "cannot write " << PagesLimit::kPath;
  MountedFs::Options options;
  options.mount_options = {"max_request=4M", "cache=writeback"};
  MountedFs fs(options);
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(
      Shell("dd if=/dev/urandom of=" + fs.root() + "/src bs=1M count=13 status=none").exit_code, 0);
  ASSERT_EQ(
      Shell("dd if=" + fs.root() + "/src of=" + fs.Path("copy") + " bs=4M conv=fsync status=none")
          .exit_code,
      0);
  ASSERT_EQ(Shell("echo 3 > /proc/sys/vm/drop_caches").exit_code, 0);
  EXPECT_EQ(Shell("cmp " + fs.root() + "/src " + fs.Path("copy")).exit_code, 0);
}

}  // namespace
}  // namespace sfs::test
