// Which client may cache what: seed 003's cached credits on inodes, with
// the MDS as their master and each client session an owner. A client that
// holds the credit of an inode may let its kernel keep the inode's
// attributes and, for a directory, the names under it; a change by
// another client revokes the credit, and the call-back that says so
// (mds/callbacks.h) makes the holder drop what its kernel kept.
//
// Order, which makes a credit safe without a sequence number: a reply
// takes the credit (Grant) before it reads what it carries, and a change
// collects the holders (Change) after it is stored. A reply whose read
// came before the store is then among the holders the change revokes; one
// granted after the change was collected reads the changed state.
//
// Thread safety: every method from any thread (one leaf lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sfs::mds {

using SessionId = uint64_t;

// What one client must drop.
struct Revocation {
  std::vector<uint64_t> inodes;       // attributes
  std::vector<uint64_t> directories;  // names under them (their attributes too)
  std::vector<uint64_t> extents;      // open files' extent credits (extent_master.h)
  std::vector<uint64_t> grants;       // quota and room grants (grant_book.h)
  bool operator==(const Revocation&) const = default;
};

class CacheCredits {
 public:
  // `session` may cache `ino` (and, for a directory, the names under it)
  // from now on, until revoked. Returns how many credits it holds now.
  size_t Grant(uint64_t ino, SessionId session);
  // `changer` changed the attributes of `inodes` and the entries of
  // `directories` (already stored): per other session that held a credit
  // of any of them, what it must drop. Those credits end; the changer
  // keeps its own (its kernel learns its change from the reply).
  std::map<SessionId, Revocation> Change(const std::vector<uint64_t>& inodes,
                                         const std::vector<uint64_t>& directories,
                                         SessionId changer);
  // Every credit of `session` ends (it went, or was evicted).
  void DropSession(SessionId session);
  // Bounds what one client caches (Lustre's LRU of locks): once `session`
  // holds more than `limit` credits not being trimmed, those granted least
  // recently are picked until `keep` are left, for a revocation the client
  // must be sent. They stay held until EndTrim (a change meanwhile revokes
  // them as any other and waits for the client). Nothing under `limit`.
  struct Trimmed {
    uint64_t ino;
    uint64_t grant;  // its number: granted again since, it is kept
  };
  std::vector<Trimmed> Trim(SessionId session, size_t limit, size_t keep);
  // The client acknowledged (or went): what Trim picked ends, unless it was
  // granted again meanwhile.
  void EndTrim(SessionId session, const std::vector<Trimmed>& trimmed);
  // Credits held now (all sessions).
  size_t size() const;
  size_t held_by(SessionId session) const;

 private:
  void Take(uint64_t ino, SessionId changer, bool directory, std::map<SessionId, Revocation>& out);

  mutable std::mutex mu_;  // guards everything below
  // Per inode, its holders (rarely more than a few).
  std::unordered_map<uint64_t, std::vector<SessionId>> holders_;
  // Per session, what it holds (for DropSession), with the number of its
  // latest grant (for Trim).
  std::unordered_map<SessionId, std::unordered_map<uint64_t, uint64_t>> held_;
  // Per session, its grants in order (inode, grant number); an entry whose
  // number is not the inode's latest is stale, skipped and compacted away.
  std::unordered_map<SessionId, std::deque<std::pair<uint64_t, uint64_t>>> granted_;
  uint64_t next_grant_ = 1;
  std::unordered_map<SessionId, size_t> trimming_;  // picked by Trim, EndTrim not yet
};

}  // namespace sfs::mds
