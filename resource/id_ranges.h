// Identifiers as a resource (seed 003's own example: fids and inode
// numbers handed out in ranges). The master owns every id at or above its
// high-water mark; a sub-owner (the metadata service for inode numbers,
// the placement for object ids) asks it for a range and hands ids out of
// that range with no one else involved. Ids never conflict, so nothing is
// revoked; an owner that goes drops its unused ids, and no id is ever
// handed out twice.
//
// Crash safety: the master persists its new mark (through Persist, which
// must make it durable) before any id of a new range is handed out, so
// after a crash allocation resumes above every range ever granted. Ids of
// granted ranges that were never used are skipped, never reused.
//
// Pure logic; not thread-safe (one caller at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "resource/manager.h"

namespace sfs::resource {

class IdRanges {
 public:
  // Makes `mark` durable as the first id never granted.
  using Persist = std::function<Status(uint64_t mark)>;

  // `mark`: the persisted high-water mark; `range_size`: the ids a sub-owner
  // is granted at a time (more if it asks for more at once).
  IdRanges(uint64_t mark, uint64_t range_size, Persist persist);

  OwnerId AddOwner(std::string name);
  // Its unused ids are dropped.
  void RemoveOwner(OwnerId owner);

  // The first of `count` consecutive ids, from `owner`'s range, or from a
  // new range the master grants (persisted first) when it is short. A
  // range that ends at the mark grows in place, so one owner alone wastes
  // nothing. The error of a failed persist (nothing handed out, nothing
  // changed).
  Result<uint64_t> Take(OwnerId owner, uint64_t count);

  // Raises the mark to at least `mark` (persisted) and drops every owner's
  // range: ids below it are never handed out (fsck's repair).
  Status Raise(uint64_t mark);

  uint64_t mark() const { return mark_; }
  // What `owner` may still hand out without the master.
  uint64_t left(OwnerId owner) const;

 private:
  struct Owner {
    std::string name;
    bool alive = true;
    uint64_t next = 0;   // [next, limit): its range
    uint64_t limit = 0;
  };

  uint64_t mark_;
  const uint64_t range_size_;
  const Persist persist_;
  std::vector<Owner> owners_;  // by OwnerId; [0] is the master
};

}  // namespace sfs::resource
