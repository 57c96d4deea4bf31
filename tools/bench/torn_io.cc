// torn_io: do overlapping O_DIRECT writes and reads of one file ever mix?
// Writers overwrite the same SIZE bytes at offset 0 again and again, each
// write filled with one 8-byte stamp (writer, sequence); readers read those
// bytes and count a read torn when it holds more than one stamp. Used by
// tests/integration/extent_test.cc and tools/bench/extent_bench.sh.
//
//   torn_io FILE SIZE WRITERS READERS READS [one-handle | readers-at=PATH]
//
// Each thread opens the file itself (a handle of its own, as separate
// processes would have), or all share one handle with "one-handle". With
// "readers-at=PATH" the readers open PATH instead: the same file through
// another mount (another client of the same MDS).
//
// Prints "reads R torn T writes W" and exits 0; 2 on an I/O error (with a
// line saying which), 1 on bad arguments.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint64_t[], FreeDeleter>;

Buffer Aligned(size_t bytes) {
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, bytes) != 0) return nullptr;
  return Buffer(static_cast<uint64_t*>(memory));
}

bool ParseSize(const char* text, uint64_t* out) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text) return false;
  uint64_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1024, ++end;
  else if (*end == 'M' || *end == 'm') scale = 1024 * 1024, ++end;
  if (*end != '\0') return false;
  *out = value * scale;
  return true;
}

void Fill(uint64_t* words, size_t count, uint64_t stamp) {
  for (size_t i = 0; i < count; ++i) words[i] = stamp;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t size = 0, writers = 0, readers = 0, reads = 0;
  const std::string extra = argc == 7 ? argv[6] : "";
  const bool one_handle = extra == "one-handle";
  const std::string readers_at =
      extra.rfind("readers-at=", 0) == 0 ? extra.substr(11) : std::string(argv[1]);
  if ((argc != 6 && !one_handle && readers_at == argv[1]) || !ParseSize(argv[2], &size) || size == 0 || size % 4096 != 0 ||
      !ParseSize(argv[3], &writers) || writers == 0 || !ParseSize(argv[4], &readers) ||
      readers == 0 || !ParseSize(argv[5], &reads) || reads == 0) {
    std::fprintf(stderr,
                 "usage: torn_io FILE SIZE(multiple of 4K; K, M) WRITERS READERS READS "
                 "[one-handle | readers-at=PATH]\n");
    return 1;
  }
  const int fd = open(argv[1], O_RDWR | O_CREAT | O_DIRECT, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "torn_io: open %s: %s\n", argv[1], std::strerror(errno));
    return 2;
  }
  // A thread's own handle, or the shared one.
  auto open_handle = [&](const std::string& path) -> int {
    if (one_handle) return fd;
    const int own = open(path.c_str(), O_RDWR | O_DIRECT);
    if (own < 0) std::fprintf(stderr, "torn_io: open %s: %s\n", path.c_str(), std::strerror(errno));
    return own;
  };
  auto close_handle = [&](int own) {
    if (own != fd && own >= 0) close(own);
  };
  const size_t words = size / 8;
  std::atomic<bool> failed{false};
  std::atomic<bool> reading{true};
  std::atomic<uint64_t> torn{0}, done_reads{0}, done_writes{0};
  {
    Buffer first = Aligned(size);
    Fill(first.get(), words, 0);
    if (pwrite(fd, first.get(), size, 0) != static_cast<ssize_t>(size)) {
      std::fprintf(stderr, "torn_io: first write: %s\n", std::strerror(errno));
      return 2;
    }
  }
  auto writer = [&](uint64_t id) {
    Buffer buffer = Aligned(size);
    const int own = open_handle(argv[1]);
    if (own < 0) failed = true;
    for (uint64_t sequence = 1; reading.load() && !failed.load(); ++sequence) {
      Fill(buffer.get(), words, (id << 40) | sequence);
      if (pwrite(own, buffer.get(), size, 0) != static_cast<ssize_t>(size)) {
        std::fprintf(stderr, "torn_io: write: %s\n", std::strerror(errno));
        failed = true;
      }
      ++done_writes;
    }
    close_handle(own);
  };
  auto reader = [&](uint64_t count) {
    Buffer buffer = Aligned(size);
    const int own = open_handle(readers_at);
    if (own < 0) failed = true;
    for (uint64_t i = 0; i < count && !failed.load(); ++i) {
      if (pread(own, buffer.get(), size, 0) != static_cast<ssize_t>(size)) {
        std::fprintf(stderr, "torn_io: read: %s\n", std::strerror(errno));
        failed = true;
        break;
      }
      const uint64_t stamp = buffer[0];
      for (size_t w = 1; w < words; ++w) {
        if (buffer[w] != stamp) {
          ++torn;
          break;
        }
      }
      ++done_reads;
    }
    close_handle(own);
  };
  std::vector<std::thread> writing, reading_threads;
  for (uint64_t id = 1; id <= writers; ++id) writing.emplace_back(writer, id);
  for (uint64_t r = 0; r < readers; ++r) {
    reading_threads.emplace_back(reader, reads / readers + (r < reads % readers ? 1 : 0));
  }
  for (auto& thread : reading_threads) thread.join();
  reading = false;
  for (auto& thread : writing) thread.join();
  close(fd);
  if (failed.load()) return 2;
  std::printf("reads %llu torn %llu writes %llu\n",
              static_cast<unsigned long long>(done_reads.load()),
              static_cast<unsigned long long>(torn.load()),
              static_cast<unsigned long long>(done_writes.load()));
  return 0;
}
