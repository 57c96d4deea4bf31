// Directories whose every name a client mount knows (seed 003's credits,
// client side), so a lookup of a name it does not know there is answered
// "absent" without a call to the MDS: the lookup before every create
// (the kernel looks a name up before it creates it) costs nothing in a
// directory the client made itself, as mdtest's and most jobs' are.
//
// A directory is known from its creation by this client (empty), if the
// credit the create's reply granted may be cached (client/cache_log.h: no
// revocation of it since the call began); the names this client adds and
// removes there are followed; it is forgotten when the MDS revokes it
// (another client changed its entries), when the call-back stream goes,
// when one of this client's own changes there fails or is not followed,
// and past kMaxNames names.
//
// Pure data. Thread safety: every method from any thread (one leaf lock;
// Created reads the cache log under it, so a revocation logged before
// Forget runs is seen).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client/cache_log.h"

namespace sfs::client {

class KnownDirs {
 public:
  static constexpr size_t kMaxNames = 1 << 16;

  // This client made the empty directory `dir` in a call begun at event
  // `begun` of `log`.
  void Created(uint64_t dir, uint64_t begun, const CacheLog& log);
  // This client's change made `name` in `dir` exist, or not.
  void Added(uint64_t dir, std::string_view name);
  void Removed(uint64_t dir, std::string_view name);
  void Forget(const std::vector<uint64_t>& dirs);
  void Clear();
  // True when `name` is known not to be in `dir`.
  bool Absent(uint64_t dir, std::string_view name) const;
  size_t size() const;  // directories known (for tests)

 private:
  mutable std::mutex mu_;  // guards dirs_
  std::unordered_map<uint64_t, std::unordered_set<std::string>> dirs_;
};

}  // namespace sfs::client
