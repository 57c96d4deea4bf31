// strided_read: a collective strided read of one file, backwards, as MPI
// ranks reading a checkpoint in interleaved blocks do. READERS threads, each
// with its own O_DIRECT handle (as separate processes would have); the file
// is cut in windows of READERS blocks of BLOCK bytes, reader i reads block i
// of each window, and the windows are read from the last to the first, all
// readers waiting for each other at the end of each (the collective's step).
// So every window's requests reach the OST together, in whatever order the
// threads wake, and the next window lies just below. Used by
// tools/bench/nrs_mount_bench.sh (ORR against FIFO on a slow disk).
//
//   strided_read FILE READERS BLOCK SECONDS
//
// Stops after SECONDS or at the first window; prints "MiB/s M requests R"
// and exits 0; 2 on an I/O error (with a line saying which), 1 on bad
// arguments.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: strided_read FILE READERS BLOCK SECONDS\n");
    return 1;
  }
  const char* path = argv[1];
  const long readers = std::atol(argv[2]);
  const long block = std::atol(argv[3]);
  const double seconds = std::atof(argv[4]);
  struct stat st;
  if (readers < 1 || block < 4096 || block % 4096 != 0 || seconds <= 0 || stat(path, &st) != 0) {
    std::fprintf(stderr, "strided_read: bad arguments or no file %s\n", path);
    return 1;
  }
  const int64_t windows = st.st_size / (readers * block);
  const auto start = std::chrono::steady_clock::now();
  // The window being read; the barrier's completion (one thread, once per
  // window) moves it down, or to -1 when time is up.
  std::atomic<int64_t> window{windows - 1};
  std::atomic<bool> failed{false};
  std::barrier step(readers, [&]() noexcept {
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    const int64_t w = window.load();
    window.store(failed.load() || elapsed.count() >= seconds || w <= 0 ? -1 : w - 1);
  });
  std::atomic<int64_t> requests{0};
  std::vector<std::thread> threads;
  for (long i = 0; i < readers; i++) {
    threads.emplace_back([&, i] {
      void* memory = nullptr;
      if (posix_memalign(&memory, 4096, block) != 0) std::abort();
      std::unique_ptr<void, FreeDeleter> buffer(memory);
      const int fd = open(path, O_RDONLY | O_DIRECT);
      if (fd < 0) {
        std::fprintf(stderr, "strided_read: open %s: %s\n", path, std::strerror(errno));
        failed = true;
      }
      for (int64_t w = window.load(); w >= 0; w = window.load()) {
        const off_t offset = (w * readers + i) * block;
        if (fd >= 0 && pread(fd, buffer.get(), block, offset) != block) {
          std::fprintf(stderr, "strided_read: read at %lld: %s\n", static_cast<long long>(offset),
                       std::strerror(errno));
          failed = true;
        }
        requests++;
        step.arrive_and_wait();
      }
      if (fd >= 0) close(fd);
    });
  }
  for (std::thread& t : threads) t.join();
  if (failed) return 2;
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  std::printf("MiB/s %.2f requests %lld\n",
              static_cast<double>(requests.load()) * block / elapsed.count() / (1 << 20),
              static_cast<long long>(requests.load()));
  return 0;
}
