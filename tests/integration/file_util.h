// Small file helpers for the integration tests: whole-file reads and writes
// through plain system calls, reproducible random bytes, and polling.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mounted_fs.h"

namespace sfs::test {

// lstat that records a failure (with errno) instead of returning it.
inline struct stat Stat(const std::string& path) {
  struct stat st;
  std::memset(&st, 0, sizeof(st));
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path << ": " << strerror(errno);
  return st;
}

// Everything an archive keeps of the tree under `dir`, one sorted line per
// entry: type, mode, owner, size, links, mtime, symlink target, and an MD5
// of each regular file. Directory sizes are filesystem-specific and left out.
inline CommandResult Manifest(const std::string& dir) {
  return Shell("cd " + dir +
               " && { find . ! -type d -printf '%p %y %m %U %G %s %n %T@ %l\\n';"
               " find . -mindepth 1 -type d -printf '%p %y %m %U %G %n %T@\\n';"
               " find . -type f -exec md5sum {} +; } | sort");
}

// Byte-exact comparison whose failure message names the first differing
// offset instead of printing megabytes.
inline ::testing::AssertionResult SameBytes(const std::optional<std::string>& actual,
                                            const std::string& expected) {
  if (!actual.has_value()) {
    return ::testing::AssertionFailure() << "read failed: " << strerror(errno);
  }
  if (*actual == expected) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < actual->size() && i < expected.size() && (*actual)[i] == expected[i]) ++i;
  return ::testing::AssertionFailure() << "sizes " << actual->size() << " vs expected "
                                       << expected.size() << ", first difference at byte " << i;
}

inline std::string RandomBytes(size_t n, uint64_t seed) {
  std::string bytes(n, '\0');
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    std::memcpy(bytes.data() + i, &v, std::min<size_t>(8, n - i));
  }
  return bytes;
}

// Writes all of `data` at `offset`; false (errno set) on failure.
inline bool PwriteAll(int fd, const std::string& data, off_t offset) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = pwrite(fd, data.data() + done, data.size() - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads up to `length` bytes at `offset` (fewer only at end of file).
inline std::optional<std::string> PreadAll(int fd, size_t length, off_t offset) {
  std::string data(length, '\0');
  size_t done = 0;
  while (done < length) {
    ssize_t n = pread(fd, data.data() + done, length - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

// Creates or truncates `path` and writes `data`; false (errno set) on failure.
inline bool WriteFile(const std::string& path, const std::string& data, mode_t mode = 0644) {
  int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, mode);
  if (fd < 0) return false;
  bool ok = PwriteAll(fd, data, 0);
  int saved = errno;
  if (close(fd) != 0 && ok) return false;
  errno = saved;
  return ok;
}

// The whole file, or nullopt (errno set).
inline std::optional<std::string> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return std::nullopt;
  std::string data;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      close(fd);
      errno = saved;
      return std::nullopt;
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return data;
}

// The errno of a failed call returning -1, or 0 if it succeeded.
inline int ErrnoOf(long rc) { return rc == -1 ? errno : 0; }

// Polls `done` every 50 ms for up to `timeout_ms`; true once it holds.
inline bool WaitFor(const std::function<bool()>& done, int timeout_ms = 5000) {
  for (int waited = 0;; waited += 50) {
    if (done()) return true;
    if (waited >= timeout_ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// Runs `body` in a child process as uid/gid (no supplementary groups) and
// returns its result (0..255) as the exit status, or -1 if the child could
// not switch users or died. The child must not touch gtest state.
inline int RunAs(uid_t uid, gid_t gid, const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(255);
    _exit(body() & 0xff);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  const int code = WEXITSTATUS(status);
  return code == 255 ? -1 : code;
}
inline constexpr uid_t kNobody = 65534;
inline constexpr gid_t kNogroup = 65534;

inline bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// The value of extended attribute `name` of `path`, or "<strerror>" when
// getxattr fails (so a test can compare with the error it expects).
inline std::string Xattr(const std::string& path, const std::string& name) {
  std::string value(256 * 1024, '\0');  // above the 64 KiB a value can have
  const ssize_t n = getxattr(path.c_str(), name.c_str(), value.data(), value.size());
  if (n < 0) return "<" + std::string(strerror(errno)) + ">";
  value.resize(static_cast<size_t>(n));
  return value;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Run-time setting user.stripefs.<name> on the mount root: setxattr's
// errno (0 when it took), and the value (or "<error text>").
inline int SetSetting(const MountedFs& fs, const std::string& name, const std::string& value) {
  const std::string full = "user.stripefs." + name;
  return ErrnoOf(setxattr(fs.mnt().c_str(), full.c_str(), value.data(), value.size(), 0));
}
inline std::string GetSetting(const MountedFs& fs, const std::string& name) {
  return Xattr(fs.mnt(), "user.stripefs." + name);
}

// The sum over every OST of ost_status's `key=` counter (say "raised").
inline uint64_t SumOfOstCounter(const MountedFs& fs, const std::string& key) {
  const std::string status = GetSetting(fs, "ost_status");
  const std::string field = " " + key + "=";
  uint64_t sum = 0;
  for (size_t at = status.find(field); at != std::string::npos; at = status.find(field, at + 1)) {
    sum += std::strtoull(status.c_str() + at + field.size(), nullptr, 10);
  }
  return sum;
}

// ost_status's `key=` field of OST `ost` ("" if not shown).
inline std::string OstField(const MountedFs& fs, int ost, const std::string& key) {
  std::istringstream lines(GetSetting(fs, "ost_status"));
  const std::string name = "ost" + std::to_string(ost) + " ";
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name, 0) != 0) continue;
    const size_t at = line.find(" " + key + "=");
    if (at == std::string::npos) return "";
    const size_t from = at + key.size() + 2;
    return line.substr(from, line.find(' ', from) - from);
  }
  return "";
}

// The epoch OST `ost` runs, from ost_status; -1 if not shown.
inline long EpochOf(const MountedFs& fs, int ost) {
  const std::string epoch = OstField(fs, ost, "epoch");
  return epoch.empty() ? -1 : std::atol(epoch.c_str());
}

// Requests/s of `writes` O_DIRECT writes of 64 KiB (one OST request each,
// going round the file's stripes) into `name` as nobody; -1 on failure.
inline double WriteRateAsNobody(const MountedFs& fs, const std::string& name, int writes) {
  const auto start = std::chrono::steady_clock::now();
  CommandResult r = Shell("runuser -u nobody -- dd if=/dev/zero of=" + fs.Path(name) +
                          " bs=64k count=" + std::to_string(writes) +
                          " oflag=direct conv=notrunc status=none");
  if (r.exit_code != 0) return -1;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return writes / seconds;
}

// Appends `bytes` bytes of `byte` to an object file by hand (as a crash
// could have left it), making its directory if needed.
inline CommandResult AppendToObject(const std::string& object, size_t bytes, char byte) {
  return Shell("mkdir -p $(dirname " + object + ") && head -c " + std::to_string(bytes) +
               " /dev/zero | tr '\\0' '" + byte + "' >> " + object);
}

// The object files of a file, from its user.stripefs.layout
// ("... stripe0=ost2:0x1a stripe1=ost3:0x1b").
// `ost_dir` names the directory of an OST by its index.
inline std::vector<std::string> ObjectPaths(const std::string& path,
                                            const std::function<std::string(int)>& ost_dir) {
  std::vector<std::string> objects;
  char layout[1024];
  ssize_t n = getxattr(path.c_str(), "user.stripefs.layout", layout, sizeof(layout) - 1);
  if (n <= 0) return objects;
  layout[n] = '\0';
  for (const char* p = strstr(layout, " stripe"); p != nullptr; p = strstr(p + 1, " stripe")) {
    unsigned stripe, ost;
    uint64_t id;
    if (sscanf(p, " stripe%u=ost%u:0x%" SCNx64, &stripe, &ost, &id) != 3) continue;
    char object[64];
    snprintf(object, sizeof(object), "/objects/%02" PRIx64 "/%016" PRIx64, id & 0xff, id);
    objects.push_back(ost_dir(static_cast<int>(ost)) + object);
  }
  return objects;
}
inline std::vector<std::string> ObjectPaths(const MountedFs& fs, const std::string& path) {
  return ObjectPaths(path, [&](int ost) { return fs.ost_dir(ost); });
}

}  // namespace sfs::test
