#include "ost/object_cache.h"

#include <algorithm>

namespace sfs::ost {

ObjectCache::ObjectCache(Backend* backend, size_t capacity)
    : backend_(backend), capacity_(std::max<size_t>(capacity, 1)) {}

std::shared_ptr<ObjectFile> ObjectCache::Cached(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

Result<std::shared_ptr<ObjectFile>> ObjectCache::Get(uint64_t id, bool create) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(id);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);
      return it->second->second;
    }
  }
  // Opened without the lock: an open may wait on the disk.
  auto opened = backend_->Open(id, create);
  if (!opened.ok()) return opened.status();
  std::shared_ptr<ObjectFile> file = std::move(opened).value();
  std::vector<std::shared_ptr<ObjectFile>> evicted;  // closed after unlocking
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(id);
    if (it != index_.end()) {
      // Another thread opened it meanwhile; use one descriptor, not two.
      lru_.splice(lru_.begin(), lru_, it->second);
      evicted.push_back(std::move(file));
      return it->second->second;
    }
    lru_.emplace_front(id, file);
    index_.emplace(id, lru_.begin());
    EvictLocked(&evicted);
  }
  return file;
}

void ObjectCache::EvictLocked(std::vector<std::shared_ptr<ObjectFile>>* evicted) {
  while (lru_.size() > capacity_) {
    index_.erase(lru_.back().first);
    evicted->push_back(std::move(lru_.back().second));
    lru_.pop_back();
  }
}

size_t ObjectCache::capacity() const {
  std::lock_guard<std::mutex> lock(mu_);
  return capacity_;
}

void ObjectCache::SetCapacity(size_t capacity) {
  std::vector<std::shared_ptr<ObjectFile>> evicted;  // closed after unlocking
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = std::max<size_t>(capacity, 1);
  EvictLocked(&evicted);
}

void ObjectCache::Forget(uint64_t id) {
  std::shared_ptr<ObjectFile> dropped;  // closed after unlocking
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(id);
  if (it == index_.end()) return;
  dropped = std::move(it->second->second);
  lru_.erase(it->second);
  index_.erase(it);
}

size_t ObjectCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

}  // namespace sfs::ost
