#include "mds/cache_credits.h"

#include <algorithm>

namespace sfs::mds {

void CacheCredits::Grant(uint64_t ino, SessionId session) {
  std::lock_guard lock(mu_);
  std::vector<SessionId>& holders = holders_[ino];
  if (std::find(holders.begin(), holders.end(), session) != holders.end()) return;
  holders.push_back(session);
  held_[session].insert(ino);
}

void CacheCredits::Take(uint64_t ino, SessionId changer, bool directory,
                        std::map<SessionId, Revocation>& out) {
  auto it = holders_.find(ino);
  if (it == holders_.end()) return;
  std::vector<SessionId>& holders = it->second;
  for (SessionId session : holders) {
    if (session == changer) continue;
    Revocation& revocation = out[session];
    (directory ? revocation.directories : revocation.inodes).push_back(ino);
    auto held = held_.find(session);
    if (held != held_.end()) {
      held->second.erase(ino);
      if (held->second.empty()) held_.erase(held);
    }
  }
  const bool changer_holds = std::find(holders.begin(), holders.end(), changer) != holders.end();
  holders.clear();
  if (changer_holds) {
    holders.push_back(changer);
  } else {
    holders_.erase(it);
  }
}

std::map<SessionId, Revocation> CacheCredits::Change(const std::vector<uint64_t>& inodes,
                                                     const std::vector<uint64_t>& directories,
                                                     SessionId changer) {
  std::map<SessionId, Revocation> out;
  std::lock_guard lock(mu_);
  for (uint64_t ino : directories) Take(ino, changer, /*directory=*/true, out);
  for (uint64_t ino : inodes) {
    // A directory named twice is revoked once, as a directory.
    if (std::find(directories.begin(), directories.end(), ino) != directories.end()) continue;
    Take(ino, changer, /*directory=*/false, out);
  }
  return out;
}

void CacheCredits::DropSession(SessionId session) {
  std::lock_guard lock(mu_);
  auto held = held_.find(session);
  if (held == held_.end()) return;
  for (uint64_t ino : held->second) {
    auto it = holders_.find(ino);
    if (it == holders_.end()) continue;
    std::erase(it->second, session);
    if (it->second.empty()) holders_.erase(it);
  }
  held_.erase(held);
}

size_t CacheCredits::size() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [ino, holders] : holders_) n += holders.size();
  return n;
}

size_t CacheCredits::held_by(SessionId session) const {
  std::lock_guard lock(mu_);
  auto held = held_.find(session);
  return held == held_.end() ? 0 : held->second.size();
}

}  // namespace sfs::mds
