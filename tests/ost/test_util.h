// Helpers shared by the ost tests: a scratch directory removed on scope exit
// and byte patterns that tell objects and offsets apart.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/uio.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sfs::ost::testing {

class TempDir {
 public:
  TempDir() {
    const char* base = getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/sfs-ost-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp " << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `n` bytes that depend on `seed` and position, so misplaced data shows.
inline std::string Pattern(uint64_t seed, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((seed * 131 + i * 7 + i / 251) & 0xff);
  return s;
}

// Splits a buffer into iovecs of at most `piece` bytes.
inline std::vector<iovec> Iov(std::string& buf, size_t piece) {
  std::vector<iovec> iov;
  for (size_t at = 0; at < buf.size(); at += piece) {
    iov.push_back({buf.data() + at, std::min(piece, buf.size() - at)});
  }
  return iov;
}

}  // namespace sfs::ost::testing
