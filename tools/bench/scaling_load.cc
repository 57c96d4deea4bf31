// scaling_load: the load of tools/bench/scaling_bench.sh (issue 33, scaling
// with cores). PROCS processes (forked, as separate applications would be)
// start together and each runs WORK in its own directory or file under DIR
// for SECONDS:
//   meta  create (open O_CREAT|O_EXCL, close), stat, unlink of one name, in
//         DIR/p<i>; one op is the three calls together
//   4k    buffered 4 KiB pwrite to DIR/w<i>, sequential offsets wrapping at
//         MIB MiB (the file stays in the page cache on a local filesystem)
//   1m    1 MiB writes to DIR/w<i>, sequential, wrapping at MIB MiB
// A write file is sized to MIB MiB before the start, so every write lands
// inside it whatever the process count: appends store a new size per
// write, another cost, which fewer processes would pay for a smaller part
// of their run (they wrap sooner).
// A C++ loop, not a script: an interpreter's own cost per call would hide
// the filesystem's.
//
//   scaling_load WORK DIR PROCS SECONDS [MIB]
//
// Prints "<ops/s> <MiB/s>" for all processes together and exits 0; 2 when
// a call failed (with a line saying which), 1 on bad arguments. Files it
// made are removed.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// What each child reports through the shared page.
struct Slot {
  std::atomic<uint64_t> ops;
  std::atomic<uint64_t> bytes;
  std::atomic<int> failed;
};

int Fail(const char* what, const std::string& path) {
  std::fprintf(stderr, "scaling_load: %s %s: %s\n", what, path.c_str(), std::strerror(errno));
  return 2;
}

// The metadata loop of one process: create, stat, unlink.
int RunMeta(const std::string& dir, Clock::time_point end, Slot* slot) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return Fail("mkdir", dir);
  uint64_t ops = 0;
  std::string path;
  while (Clock::now() < end) {
    // Fresh names, as mdtest's: the kernel caches nothing for them.
    path = dir + "/f" + std::to_string(ops);
    const int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return Fail("create", path);
    close(fd);
    struct stat st;
    if (stat(path.c_str(), &st) != 0) return Fail("stat", path);
    if (unlink(path.c_str()) != 0) return Fail("unlink", path);
    slot->ops.store(++ops, std::memory_order_relaxed);
  }
  rmdir(dir.c_str());
  return 0;
}

// The write loops: `block` bytes per pwrite, wrapping at `wrap` bytes.
int RunWrites(int fd, const std::string& path, size_t block, uint64_t wrap,
              Clock::time_point end, Slot* slot) {
  std::vector<char> data(block, 'x');
  uint64_t ops = 0, offset = 0;
  while (Clock::now() < end) {
    if (pwrite(fd, data.data(), block, static_cast<off_t>(offset)) != static_cast<ssize_t>(block)) {
      close(fd);
      return Fail("pwrite", path);
    }
    offset = offset + block >= wrap ? 0 : offset + block;
    ++ops;
    slot->ops.store(ops, std::memory_order_relaxed);
    slot->bytes.store(ops * block, std::memory_order_relaxed);
  }
  close(fd);
  unlink(path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: scaling_load meta|4k|1m DIR PROCS SECONDS [MIB]\n");
    return 1;
  }
  const std::string work = argv[1];
  const std::string dir = argv[2];
  const int procs = std::atoi(argv[3]);
  const double seconds = std::atof(argv[4]);
  const uint64_t wrap = (argc == 6 ? std::strtoull(argv[5], nullptr, 10) : 64) << 20;
  if ((work != "meta" && work != "4k" && work != "1m") || procs < 1 || procs > 1024 ||
      seconds <= 0 || wrap < (1u << 20)) {
    std::fprintf(stderr, "scaling_load: bad arguments\n");
    return 1;
  }
  void* shared = mmap(nullptr, sizeof(Slot) * procs, PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) return Fail("mmap", "");
  auto* slots = new (shared) Slot[procs]();
  // Children say on `ready` that they have set up, then wait on `go` until
  // the parent closes its write end, so every process starts at once.
  int go[2], ready[2];
  if (pipe(go) != 0 || pipe(ready) != 0) return Fail("pipe", "");
  std::vector<pid_t> children;
  for (int i = 0; i < procs; ++i) {
    const pid_t pid = fork();
    if (pid < 0) return Fail("fork", "");
    if (pid == 0) {
      close(go[1]);
      const std::string own = dir + (work == "meta" ? "/p" : "/w") + std::to_string(i);
      int fd = -1;
      if (work != "meta") {
        fd = open(own.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
        if (fd < 0) _exit(Fail("create", own));
        if (ftruncate(fd, static_cast<off_t>(wrap)) != 0) _exit(Fail("ftruncate", own));
      }
      char byte = 1;
      (void)!write(ready[1], &byte, 1);
      (void)!read(go[0], &byte, 1);  // returns 0 when the parent closes
      const Clock::time_point end =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(seconds));
      const int rc = work == "meta" ? RunMeta(own, end, &slots[i])
                     : work == "4k" ? RunWrites(fd, own, 4096, wrap, end, &slots[i])
                                    : RunWrites(fd, own, 1 << 20, wrap, end, &slots[i]);
      slots[i].failed.store(rc);
      _exit(rc);
    }
    children.push_back(pid);
  }
  close(go[0]);
  close(ready[1]);
  for (int i = 0; i < procs; ++i) {
    char byte;
    if (read(ready[0], &byte, 1) != 1) break;  // a child failed: it exits
  }
  close(go[1]);
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 2;
  }
  uint64_t ops = 0, bytes = 0;
  for (int i = 0; i < procs; ++i) {
    ops += slots[i].ops.load();
    bytes += slots[i].bytes.load();
  }
  // Each child counted what it did in its SECONDS (its last call may end a
  // little later); removing its files afterwards is not part of the load.
  std::printf("%.0f %.1f\n", ops / seconds, bytes / seconds / (1 << 20));
  return failed;
}
