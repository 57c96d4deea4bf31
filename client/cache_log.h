// What a client mount may let its kernel cache of the metadata, given the
// call-backs it heard (seed 003's cached credits, client side; the MDS's
// side is mds/cache_credits.h).
//
// A reply may be cached when the client's call-back stream was up before
// the request was sent and no revocation of the inode has arrived since
// (a revocation can overtake the reply it makes stale: they travel on
// different streams). Events are counted: Begin() before a request is
// sent, MayCache with that count when its reply is sent to the kernel.
//
// Pure data: no clock, no I/O. Thread safety: every method from any
// thread (one leaf lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace sfs::client {

class CacheLog {
 public:
  // Revocations remembered one by one; older ones make everything begun
  // before them uncacheable (a bound on memory, not on correctness).
  static constexpr size_t kRemembered = 65536;

  uint64_t Begin() const;
  bool MayCache(uint64_t ino, uint64_t begun) const;
  void Revoked(const std::vector<uint64_t>& inodes);
  // The stream is up (the MDS grants from now on) or down (nothing
  // cached may stay: whatever was begun before cannot cache).
  void Connected();
  void Disconnected();
  bool connected() const;

 private:
  mutable std::mutex mu_;  // guards everything below
  uint64_t events_ = 0;
  bool connected_ = false;
  // Replies begun before this may not cache (a connection or a forgotten
  // revocation came after them).
  uint64_t floor_ = 1;
  std::unordered_map<uint64_t, uint64_t> revoked_;  // inode -> event of its last revocation
  std::deque<std::pair<uint64_t, uint64_t>> order_;  // (inode, event), oldest first
};

}  // namespace sfs::client
