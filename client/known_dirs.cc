#include "client/known_dirs.h"

namespace sfs::client {

void KnownDirs::Created(uint64_t dir, uint64_t begun, const CacheLog& log) {
  std::lock_guard lock(mu_);
  if (log.MayCache(dir, begun)) dirs_[dir];
}

void KnownDirs::Added(uint64_t dir, std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return;
  if (it->second.size() >= kMaxNames) {
    dirs_.erase(it);
    return;
  }
  it->second.emplace(name);
}

void KnownDirs::Removed(uint64_t dir, std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  if (it != dirs_.end()) it->second.erase(std::string(name));
}

void KnownDirs::Forget(const std::vector<uint64_t>& dirs) {
  std::lock_guard lock(mu_);
  for (uint64_t dir : dirs) dirs_.erase(dir);
}

void KnownDirs::Clear() {
  std::lock_guard lock(mu_);
  dirs_.clear();
}

bool KnownDirs::Absent(uint64_t dir, std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = dirs_.find(dir);
  return it != dirs_.end() && it->second.count(std::string(name)) == 0;
}

size_t KnownDirs::size() const {
  std::lock_guard lock(mu_);
  return dirs_.size();
}

}  // namespace sfs::client
