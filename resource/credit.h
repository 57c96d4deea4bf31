// Credits: the right to use part of a resource, and the per-type rules that
// say when one credit covers or clashes with another (seed 003's resource
// types). The generic owner logic (resource/manager.h) knows nothing else
// about what a credit means.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>

namespace sfs::resource {

// Resource types, in the one total order in which anything that needs
// several credits acquires them: by kind, then resource id, then offset
// (operator< below). Two requests that both follow it can never wait for
// each other in a cycle (docs/design.md, "Resources and credits").
// CreditOrder checks it where one request takes several.
enum class Kind : uint8_t {
  kExtent = 2,  // a byte range of a file
  kQuota = 3,   // blocks and inodes of a uid, gid or project
  kSpace = 4,   // free space of an OST
  kIdentifier = 5,
};

enum class Mode : uint8_t { kRead = 1, kWrite = 2 };

constexpr uint64_t kWholeRange = UINT64_MAX;

struct Credit {
  Kind kind = Kind::kExtent;
  uint64_t id = 0;              // which resource: an inode, a quota id, an OST
  uint64_t start = 0;           // [start, end): bytes of an extent
  uint64_t end = kWholeRange;
  Mode mode = Mode::kRead;
};

// The total order (kind, id, start).
inline bool operator<(const Credit& a, const Credit& b) {
  return std::tie(a.kind, a.id, a.start) < std::tie(b.kind, b.id, b.start);
}

std::string ToString(const Credit& credit);

// What one request has taken so far, to check it takes in the total
// order: Take is false when `next` comes before (or is) something taken
// already, and a debug build stops there (assert), so a test of any path
// that takes out of order fails. Cheap enough for every request: one
// comparison.
class CreditOrder {
 public:
  bool Take(Kind kind, uint64_t id = 0, uint64_t start = 0);

 private:
  bool any_ = false;
  std::tuple<Kind, uint64_t, uint64_t> last_{};
};

// What a resource type decides. Implementations are immutable and may be
// shared by any number of threads.
class CreditType {
 public:
  CreditType() = default;
  CreditType(const CreditType&) = delete;
  CreditType& operator=(const CreditType&) = delete;
  virtual ~CreditType() = default;
  virtual const char* Name() const = 0;

  // Seed 003's matches(): true if `wanted` is implied by `have`, so an owner
  // holding or caching `have` may use it for `wanted` without its master.
  virtual bool Matches(const Credit& wanted, const Credit& have) const = 0;

  // True if `a` and `b` may not be in use at once (by two users, or
  // granted to two owners).
  virtual bool Conflicts(const Credit& a, const Credit& b) const = 0;

  // What a master grants an owner that asked for `wanted` (which it may
  // grant): `wanted`, or more of the resource to save the owner later
  // requests. `alone` says the owner is the only one below its master,
  // so a larger credit clashes with nobody (seed 003's lockless mode).
  virtual Credit Expand(const Credit& wanted, bool alone) const = 0;
};

// Byte ranges of one file in read or write mode. Reads share; a write
// clashes with any overlapping credit. An owner alone on its file is
// granted a write credit over the whole file; a reader beside others a
// read credit over the whole file.
std::unique_ptr<CreditType> NewExtentType();

}  // namespace sfs::resource
