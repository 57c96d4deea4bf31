// Filesystem-wide TBF with many busy classes on a real mount (issue 31,
// item 1): 200 users, each under a rule of its own, each writing O_DIRECT
// into its own file striped over the 4 OSTs, get their rule's rate. The
// epoch data holds 63 classes per head, so the shares are coordinated
// through a window that moves over the class keys (nrs/tbf_shares.h); with
// the fixed cut of before, 137 of the users always fell back to rate/4 per
// OST (seen: those 137 got 1.25-1.88 req/s of 5, the others 4.94-5.12).
// And the metadata service's TBF is seed 001's bucket (scope ost).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kFirstUid = 20000;
constexpr int kUsers = 200;
constexpr int kRate = 5;  // requests/s of each user's rule
constexpr off_t kStripe = 1 << 20;
constexpr size_t kWrite = 4096;

// One user's writer: a thread whose filesystem uid alone is `uid` (the raw
// setfsuid changes only the calling thread's credentials; FUSE sends the
// fsuid), one 4 KiB O_DIRECT write in flight, 70 % of them in the file's
// stripe `home` and the rest anywhere in its 4 stripes, so the user's
// demand is uneven over the OSTs and moves. Counts the writes that end in
// [from, to).
void Writer(const std::string& path, uint32_t uid, int home, Clock::time_point from,
            Clock::time_point to, std::atomic<int>* failures, int* counted) {
  if (syscall(SYS_setfsuid, uid) < 0 || static_cast<uint32_t>(syscall(SYS_setfsuid, -1)) != uid) {
    failures->fetch_add(1);
    return;
  }
  const int fd = open(path.c_str(), O_WRONLY | O_DIRECT);
  void* buffer = nullptr;
  if (fd < 0 || posix_memalign(&buffer, kWrite, kWrite) != 0) {
    failures->fetch_add(1);
    if (fd >= 0) close(fd);
    return;
  }
  std::fill_n(static_cast<char*>(buffer), kWrite, 'w');
  std::mt19937 rng(uid);
  for (Clock::time_point now = Clock::now(); now < to; now = Clock::now()) {
    const off_t stripe = rng() % 100 < 70 ? home : rng() % 4;
    const off_t offset = stripe * kStripe + static_cast<off_t>(rng() % (kStripe / kWrite)) * kWrite;
    if (pwrite(fd, buffer, kWrite, offset) != static_cast<ssize_t>(kWrite)) {
      failures->fetch_add(1);
      break;
    }
    const Clock::time_point done = Clock::now();
    if (done >= from && done < to) (*counted)++;
  }
  free(buffer);
  close(fd);
}

TEST(TbfClassesTest, TwoHundredUsersEachGetTheirRuleAcrossTheStripes) {
  MountedFs fs;  // 4 OSTs, stripe count 4, 1 MiB stripes
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(SetSetting(fs, "nrs_policies", "tbf uid"), 0);
  EXPECT_EQ(GetSetting(fs, "nrs_tbf_scope"), "fs");
  std::vector<std::string> paths;
  for (int i = 0; i < kUsers; i++) {
    const uint32_t uid = kFirstUid + i;
    paths.push_back(fs.Path("u" + std::to_string(uid)));
    ASSERT_TRUE(WriteFile(paths.back(), "", 0666));
    ASSERT_EQ(chmod(paths.back().c_str(), 0666), 0);  // whatever the umask
    ASSERT_EQ(truncate(paths.back().c_str(), 4 * kStripe), 0);
    ASSERT_EQ(SetSetting(fs, "nrs_tbf_rule", "start u" + std::to_string(uid) + " uid={" +
                                                 std::to_string(uid) + "} rate=" +
                                                 std::to_string(kRate) + " depth=1"),
              0);
  }

  // 4 s for the shares to settle (200 classes: each coordinated every 4
  // epochs of 50 ms), then 16 s measured. depth=1: a new class starts with
  // a full bucket on every OST, spent only as fast as its writes visit
  // that OST (7.5 % of them on three of the four), so at depth 3 the
  // banked tokens showed as +4 % over 16 s (a start-up effect: +1 % over
  // 56 s in the unit simulation).
  const Clock::time_point from = Clock::now() + std::chrono::seconds(4);
  const Clock::time_point to = from + std::chrono::seconds(16);
  std::atomic<int> failures{0};
  std::vector<int> counted(kUsers, 0);
  std::vector<std::thread> writers;
  for (int i = 0; i < kUsers; i++) {
    writers.emplace_back(Writer, paths[i], kFirstUid + i, i % 4, from, to, &failures, &counted[i]);
  }
  for (std::thread& t : writers) t.join();
  ASSERT_EQ(failures.load(), 0) << fs.Log();

  const double seconds = std::chrono::duration<double>(to - from).count();
  std::vector<double> rates;
  std::string table;
  for (int i = 0; i < kUsers; i++) {
    rates.push_back(counted[i] / seconds);
    char cell[32];
    std::snprintf(cell, sizeof(cell), "%u:%.2f%s", kFirstUid + i, rates.back(),
                  i % 10 == 9 ? "\n" : " ");
    table += cell;
  }
  std::printf("requests/s of each uid (rule rate=%d):\n%s", kRate, table.c_str());
  double sum = 0;
  for (double r : rates) sum += r;
  const auto [low, high] = std::minmax_element(rates.begin(), rates.end());
  std::printf("min %.2f mean %.2f max %.2f\n", *low, sum / kUsers, *high);
  // Every user near its rule: the old cut held 137 of them to about a
  // third of it (a quarter share on the OST with most of their writes).
  // Wide bounds for a loaded machine: a user below its rate may be the
  // machine's doing, but never far above.
  EXPECT_GT(*low, kRate * 0.8) << table;
  EXPECT_LT(*high, kRate * 1.1) << table;
  EXPECT_NEAR(sum / kUsers, kRate, kRate * 0.05) << table;
  // Each user was a class of its own, far more than one epoch's data holds
  // (63 per head), under its own rule.
  const std::string policies = GetSetting(fs, "nrs_policies");
  size_t most = 0;
  const std::string tag = "scope=fs classes=";
  for (size_t at = policies.find(tag); at != std::string::npos; at = policies.find(tag, at + 1)) {
    most = std::max<size_t>(most, std::strtoul(policies.c_str() + at + tag.size(), nullptr, 10));
  }
  EXPECT_GT(most, 150u) << policies;
  const std::string rules = GetSetting(fs, "nrs_tbf_rule");
  EXPECT_TRUE(Contains(rules, "u" + std::to_string(kFirstUid + kUsers - 1) + " uid={")) << rules;
}

TEST(TbfClassesTest, TheMetadataServicesTbfIsPerHead) {
  MountedFs fs;
  ASSERT_TRUE(fs.mounted());
  ASSERT_EQ(SetSetting(fs, "mdt.nrs_policies", "tbf uid"), 0);
  const std::string policies = GetSetting(fs, "mdt.nrs_policies");
  EXPECT_TRUE(Contains(policies, "scope=ost")) << policies;
  // The OSTs' default stays filesystem-wide.
  EXPECT_EQ(GetSetting(fs, "nrs_tbf_scope"), "fs");
}

}  // namespace
}  // namespace sfs::test
