// Open object files of one OST, at most `capacity` of them kept open.
//
// A daemon that kept one descriptor per object of every open file could be
// run out of descriptors by one user holding files open, and then everyone's
// I/O and the metadata store fail. Objects are instead opened on demand and
// kept in a least-recently-used cache: any number of files may be open,
// and a file whose object was closed meanwhile reopens it at its next I/O.
//
// Thread safety: all methods are safe from any thread. mu_ is a leaf lock;
// no object is opened or closed while holding it.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ost/backend.h"

namespace sfs::ost {

class ObjectCache {
 public:
  // Borrows `backend`, which must outlive the cache. capacity >= 1.
  ObjectCache(Backend* backend, size_t capacity);
  ObjectCache(const ObjectCache&) = delete;
  ObjectCache& operator=(const ObjectCache&) = delete;

  // Object `id`, opened now if it is not cached (with create=false a
  // missing object is ENOENT and nothing is cached). The caller may use the
  // file as long as it holds it, even if it is evicted meanwhile: its
  // descriptor is closed when the last holder lets go, so the open files
  // number at most capacity + the callers holding evicted ones.
  Result<std::shared_ptr<ObjectFile>> Get(uint64_t id, bool create);
  // Object `id` if it is open now, else null: never opens (so never waits
  // on the disk).
  std::shared_ptr<ObjectFile> Cached(uint64_t id);
  // Drops `id` from the cache (after the object was removed).
  void Forget(uint64_t id);

  Backend& backend() { return *backend_; }
  size_t capacity() const;
  // A new bound (>= 1): when the filesystem gains an OST, every OST's share
  // of the descriptors shrinks. Objects over it are closed at once, unless
  // a caller still holds them (then when it lets go).
  void SetCapacity(size_t capacity);
  size_t size() const;

 private:
  using Entry = std::pair<uint64_t, std::shared_ptr<ObjectFile>>;

  // REQUIRES: mu_ held. Moves the least recently used objects over
  // capacity_ into `evicted`, to be closed after unlocking.
  void EvictLocked(std::vector<std::shared_ptr<ObjectFile>>* evicted);

  Backend* const backend_;
  mutable std::mutex mu_;
  size_t capacity_;       // GUARDED_BY(mu_)
  std::list<Entry> lru_;  // GUARDED_BY(mu_): most recently used first
  std::unordered_map<uint64_t, std::list<Entry>::iterator> index_;  // GUARDED_BY(mu_)
};

}  // namespace sfs::ost
