#include "client/cache_log.h"

namespace sfs::client {

uint64_t CacheLog::Begin() const {
  std::lock_guard lock(mu_);
  return events_;
}

bool CacheLog::MayCache(uint64_t ino, uint64_t begun) const {
  std::lock_guard lock(mu_);
  if (!connected_ || begun < floor_) return false;
  auto it = revoked_.find(ino);
  return it == revoked_.end() || it->second <= begun;
}

void CacheLog::Revoked(const std::vector<uint64_t>& inodes) {
  std::lock_guard lock(mu_);
  for (uint64_t ino : inodes) {
    const uint64_t event = ++events_;
    revoked_[ino] = event;
    order_.emplace_back(ino, event);
  }
  while (order_.size() > kRemembered) {
    const auto [ino, event] = order_.front();
    order_.pop_front();
    // Forgotten: nothing begun before it may cache any more.
    if (event >= floor_) floor_ = event + 1;
    auto it = revoked_.find(ino);
    if (it != revoked_.end() && it->second == event) revoked_.erase(it);
  }
}

void CacheLog::Connected() {
  std::lock_guard lock(mu_);
  connected_ = true;
  floor_ = ++events_;
}

void CacheLog::Disconnected() {
  std::lock_guard lock(mu_);
  connected_ = false;
  floor_ = ++events_;
}

bool CacheLog::connected() const {
  std::lock_guard lock(mu_);
  return connected_;
}

}  // namespace sfs::client
