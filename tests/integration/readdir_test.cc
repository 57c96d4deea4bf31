// Directory listings on a real mount: an open directory handle costs the
// daemon little memory however big the directory, a listing that runs while
// other entries come and go lists every entry that stays exactly once,
// telldir/seekdir round trips, and ls, find and rm -rf on a big tree.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

// The kernel's struct linux_dirent64 (not in glibc's headers).
struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

// One getdents64 call with a `buffer_size` byte buffer: appends the names it
// returned to `out`; -1 (errno set) on error, else the number of entries (0
// at the end of the directory).
int Getdents(int fd, size_t buffer_size, std::vector<std::string>* out) {
  std::vector<char> buffer(buffer_size);
  const long n = syscall(SYS_getdents64, fd, buffer.data(), buffer.size());
  if (n < 0) return -1;
  int count = 0;
  for (long pos = 0; pos < n;) {
    const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer.data() + pos);
    out->push_back(entry->d_name);
    pos += entry->d_reclen;
    ++count;
  }
  return count;
}

// Every name of `path` ("." and ".." included), read with getdents64 and a
// `buffer_size` byte buffer; a buffer that holds only a few entries makes the
// kernel resume in the middle of each batch the daemon sent.
std::vector<std::string> ListRaw(const std::string& path, size_t buffer_size) {
  std::vector<std::string> names;
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY);
  EXPECT_GE(fd, 0) << path << ": " << strerror(errno);
  if (fd < 0) return names;
  int n;
  while ((n = Getdents(fd, buffer_size, &names)) > 0) {
  }
  EXPECT_EQ(n, 0) << "getdents64: " << strerror(errno);
  close(fd);
  return names;
}

// The same through glibc's readdir.
std::vector<std::string> ListLibc(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  EXPECT_NE(dir, nullptr) << path << ": " << strerror(errno);
  if (dir == nullptr) return names;
  while (struct dirent* entry = readdir(dir)) names.push_back(entry->d_name);
  closedir(dir);
  return names;
}

// The resident set size of process `pid` in KiB (VmRSS), or -1.
long RssKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    long kib = 0;
    if (sscanf(line.c_str(), "VmRSS: %ld kB", &kib) == 1) return kib;
  }
  return -1;
}

std::string Numbered(const char* format, int i) {
  char buf[64];
  snprintf(buf, sizeof(buf), format, i);
  return buf;
}

// One stripe per file: these tests make thousands of empty files, and each
// stripe is an object to create and destroy that a listing never looks at.
MountedFs::Options OneStripe() {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 1;
  return options;
}

class ReaddirTest : public ::testing::Test {
 protected:
  ReaddirTest() : fs_(OneStripe()) {}
  void SetUp() override { ASSERT_TRUE(fs_.mounted()); }

  std::string P(const std::string& relative) const { return fs_.Path(relative); }

  // An empty regular file: one mknod, the cheapest create through FUSE.
  void Touch(const std::string& relative) {
    ASSERT_EQ(mknod(P(relative).c_str(), S_IFREG | 0644, 0), 0)
        << relative << ": " << strerror(errno);
  }

  MountedFs fs_;
};

// Issue 8, item 7: every open directory handle copied the whole directory
// into the daemon. 100 handles on 5,000 entries with 200-byte names, each
// partly read, grew it by about 130 MB; now each holds one batch of names.
TEST_F(ReaddirTest, OpenHandlesDoNotCopyTheDirectory) {
  constexpr int kFiles = 5000;
  constexpr int kHandles = 100;
  ASSERT_EQ(mkdir(P("big").c_str(), 0755), 0);
  const std::string filler(194, 'x');
  for (int i = 0; i < kFiles; ++i) {
    ASSERT_NO_FATAL_FAILURE(Touch("big/" + Numbered("%05d_", i) + filler));
  }
  // Warm up what every listing uses (RocksDB blocks, FUSE worker threads) so
  // that only what the handles keep shows as growth.
  for (int i = 0; i < 2; ++i) ASSERT_EQ(ListLibc(P("big")).size(), size_t{kFiles + 2});

  const long before = RssKiB(fs_.daemon_pid());
  ASSERT_GT(before, 0);
  // Through glibc's readdir, as ls and find list: its buffer follows
  // st_blksize (1 MiB here), so the kernel asks for the largest batches.
  std::vector<DIR*> handles;
  std::vector<std::string> first;  // what the first handle has listed
  for (int h = 0; h < kHandles; ++h) {
    DIR* dir = opendir(P("big").c_str());
    ASSERT_NE(dir, nullptr) << strerror(errno);
    handles.push_back(dir);
    for (int i = 0; i < 10; ++i) {
      struct dirent* entry = readdir(dir);
      ASSERT_NE(entry, nullptr) << strerror(errno);
      if (h == 0) first.push_back(entry->d_name);
    }
  }
  const long after = RssKiB(fs_.daemon_pid());
  const long growth = after - before;
  printf("daemon VmRSS %ld KiB before, %ld KiB with %d open handles: +%ld KiB\n", before, after,
         kHandles, growth);
  RecordProperty("rss_growth_kib", std::to_string(growth));
  EXPECT_LT(growth, 20 * 1024);

  // A partly read handle still lists the rest, each name once.
  std::set<std::string> names(first.begin(), first.end());
  while (struct dirent* entry = readdir(handles[0])) {
    EXPECT_TRUE(names.insert(entry->d_name).second) << entry->d_name;
  }
  EXPECT_EQ(names.size(), size_t{kFiles + 2});
  for (DIR* dir : handles) closedir(dir);
}

// Entries that stay in the directory while others are created and removed
// all around them (before, between and after them in name order) are each
// listed exactly once, and no name is ever listed twice: through readdir,
// through getdents64 with a buffer so small that the kernel resumes inside
// every batch, and with a large one.
TEST_F(ReaddirTest, StableEntriesListedOnceWhileOthersComeAndGo) {
  constexpr int kStable = 2000;
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  std::set<std::string> stable;
  for (int i = 0; i < kStable; ++i) {
    stable.insert(Numbered("k%05d", i));
    ASSERT_NO_FATAL_FAILURE(Touch("d/" + Numbered("k%05d", i)));
  }
  // Churn names sort before every stable name ("a..."), right after one
  // ("k...c") or after all of them ("z...").
  const char* const kChurnFormats[] = {"a%05d", "k%05dc", "z%05d"};
  auto is_churn = [](const std::string& name) {
    return name[0] == 'a' || name[0] == 'z' || (name[0] == 'k' && name.back() == 'c');
  };

  std::atomic<bool> stop{false};
  std::atomic<long> churn_ops{0};
  std::atomic<int> churn_error{0};
  std::thread churner([&] {
    std::mt19937 rng(8);
    while (!stop.load()) {
      const std::string path =
          P("d/" + Numbered(kChurnFormats[rng() % 3], static_cast<int>(rng() % kStable)));
      if (mknod(path.c_str(), S_IFREG | 0644, 0) != 0) {
        if (errno != EEXIST || unlink(path.c_str()) != 0) churn_error = errno;
      }
      ++churn_ops;
    }
  });

  struct Way {
    const char* what;
    std::function<std::vector<std::string>()> list;
  };
  const std::vector<Way> ways = {
      {"readdir", [&] { return ListLibc(P("d")); }},
      {"getdents64, 80-byte buffer", [&] { return ListRaw(P("d"), 80); }},
      {"getdents64, 64 KiB buffer", [&] { return ListRaw(P("d"), 65536); }},
  };
  long churn_while_listing = 0;
  // Two rounds at least, more while the churn has hardly overlapped the
  // listings (a busy machine may not run the churner much): what is checked
  // below needs the overlap, not a particular speed.
  for (int round = 0; round < 2 || (churn_while_listing <= 100 && round < 20); ++round) {
    for (const Way& way : ways) {
      const long ops_before = churn_ops.load();
      const std::vector<std::string> listed = way.list();
      churn_while_listing += churn_ops.load() - ops_before;
      std::map<std::string, int> count;
      for (const std::string& name : listed) ++count[name];
      for (const auto& [name, times] : count) {
        EXPECT_EQ(times, 1) << way.what << ": " << name;
        EXPECT_TRUE(name == "." || name == ".." || stable.count(name) == 1 || is_churn(name))
            << way.what << ": " << name;
      }
      for (const std::string& name : stable) {
        EXPECT_EQ(count.count(name), 1u) << way.what << ": missed " << name;
      }
      EXPECT_EQ(count.count("."), 1u) << way.what;
      EXPECT_EQ(count.count(".."), 1u) << way.what;
    }
  }
  stop = true;
  churner.join();
  EXPECT_EQ(churn_error.load(), 0) << strerror(churn_error.load());
  // The listings did overlap with the churn (else this test proves nothing).
  EXPECT_GT(churn_while_listing, 100);
  printf("%ld creates/removes ran during the listings\n", churn_while_listing);
}

// telldir marks taken anywhere in a listing lead seekdir back to the same
// place: a mark from the batch just read, marks many batches back, the mark
// after "." and after the last entry, and a mark used on another handle of
// the same (unchanged) directory.
TEST_F(ReaddirTest, TelldirSeekdirRoundTrip) {
  constexpr int kFiles = 1500;
  ASSERT_EQ(mkdir(P("d").c_str(), 0755), 0);
  for (int i = 0; i < kFiles; ++i) {
    // Names of varied length, so batches hold varied numbers of entries.
    ASSERT_NO_FATAL_FAILURE(Touch("d/" + std::string(1 + i % 40, 'n') + Numbered("%04d", i)));
  }
  DIR* dir = opendir(P("d").c_str());
  ASSERT_NE(dir, nullptr);
  std::vector<std::string> order;
  std::vector<long> marks;  // marks[i]: telldir just after order[i] was read
  while (struct dirent* entry = readdir(dir)) {
    order.push_back(entry->d_name);
    marks.push_back(telldir(dir));
  }
  ASSERT_EQ(order.size(), size_t{kFiles + 2});
  EXPECT_EQ(order[0], ".");
  EXPECT_EQ(order[1], "..");

  auto next_after = [&](DIR* d, size_t i) -> std::string {
    seekdir(d, marks[i]);
    struct dirent* entry = readdir(d);
    return entry == nullptr ? "<end>" : entry->d_name;
  };
  auto expected_after = [&](size_t i) {
    return i + 1 < order.size() ? order[i + 1] : std::string("<end>");
  };
  for (size_t i : {order.size() - 2, order.size() - 3, order.size() - 1, size_t{0}, size_t{1},
                   size_t{2}, order.size() / 2}) {
    EXPECT_EQ(next_after(dir, i), expected_after(i)) << "mark " << i;
  }
  for (size_t i = 0; i < order.size(); i += 37) {
    EXPECT_EQ(next_after(dir, i), expected_after(i)) << "mark " << i;
  }
  std::mt19937 rng(7);
  for (int k = 0; k < 40; ++k) {
    const size_t i = rng() % order.size();
    EXPECT_EQ(next_after(dir, i), expected_after(i)) << "mark " << i;
  }
  // After a seek far back, the listing goes on from there to the end.
  seekdir(dir, marks[100]);
  std::vector<std::string> rest;
  while (struct dirent* entry = readdir(dir)) rest.push_back(entry->d_name);
  EXPECT_EQ(rest, std::vector<std::string>(order.begin() + 101, order.end()));
  // rewinddir lists it all again.
  rewinddir(dir);
  std::vector<std::string> again;
  while (struct dirent* entry = readdir(dir)) again.push_back(entry->d_name);
  EXPECT_EQ(again, order);
  closedir(dir);

  DIR* other = opendir(P("d").c_str());
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(next_after(other, 700), expected_after(700));
  EXPECT_EQ(next_after(other, 3), expected_after(3));
  closedir(other);
}

// ls, find and rm -rf over a tree with a large flat directory and many
// smaller ones.
TEST_F(ReaddirTest, LsFindAndRmOnABigTree) {
  constexpr int kFlat = 1200;  // ten batches of short names
  constexpr int kDirs = 6;
  constexpr int kPerDir = 100;
  ASSERT_EQ(mkdir(P("tree").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(P("tree/flat").c_str(), 0755), 0);
  for (int i = 0; i < kFlat; ++i) ASSERT_NO_FATAL_FAILURE(Touch(Numbered("tree/flat/f%05d", i)));
  for (int d = 0; d < kDirs; ++d) {
    const std::string sub = Numbered("tree/sub%d", d);
    ASSERT_EQ(mkdir(P(sub).c_str(), 0755), 0);
    ASSERT_EQ(mkdir(P(sub + "/inner").c_str(), 0755), 0);
    for (int i = 0; i < kPerDir; ++i) {
      ASSERT_NO_FATAL_FAILURE(Touch(sub + Numbered(i % 2 ? "/inner/g%03d" : "/g%03d", i)));
    }
  }
  const int dirs = 2 + 2 * kDirs;  // tree, flat, and each sub with its inner
  const int files = kFlat + kDirs * kPerDir;

  CommandResult ls = Shell("ls -f " + P("tree/flat") + " | wc -l");
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_EQ(std::stoi(ls.output), kFlat + 2);
  CommandResult ls_long = Shell("ls -la " + P("tree/flat") + " | grep -c '^-'");
  EXPECT_EQ(std::stoi(ls_long.output), kFlat) << ls_long.output;
  CommandResult sorted =
      Shell("ls " + P("tree/flat") + " | sort -c && ls " + P("tree/flat") + " | tail -1");
  EXPECT_EQ(sorted.output, Numbered("f%05d\n", kFlat - 1));
  CommandResult find_all = Shell("find " + P("tree") + " | wc -l");
  EXPECT_EQ(std::stoi(find_all.output), dirs + files);
  CommandResult find_files = Shell("find " + P("tree") + " -type f | sort -u | wc -l");
  EXPECT_EQ(std::stoi(find_files.output), files);
  CommandResult rm = Shell("rm -rf " + P("tree"));
  EXPECT_EQ(rm.exit_code, 0) << rm.output;
  EXPECT_FALSE(Exists(P("tree")));
  EXPECT_EQ(ListLibc(fs_.mnt()), (std::vector<std::string>{".", ".."}));
}

}  // namespace
}  // namespace sfs::test
