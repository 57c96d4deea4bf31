#include "mds/cache_credits.h"

#include <algorithm>

namespace sfs::mds {

size_t CacheCredits::Grant(uint64_t ino, SessionId session) {
  std::lock_guard lock(mu_);
  std::vector<SessionId>& holders = holders_[ino];
  if (std::find(holders.begin(), holders.end(), session) == holders.end()) {
    holders.push_back(session);
  }
  std::unordered_map<uint64_t, uint64_t>& mine = held_[session];
  const uint64_t grant = next_grant_++;
  mine[ino] = grant;
  std::deque<std::pair<uint64_t, uint64_t>>& order = granted_[session];
  order.emplace_back(ino, grant);
  if (order.size() > 2 * mine.size() + 1024) {
    // Mostly stale (inodes granted again, or revoked): keep the latest.
    std::erase_if(order, [&](const std::pair<uint64_t, uint64_t>& entry) {
      auto it = mine.find(entry.first);
      return it == mine.end() || it->second != entry.second;
    });
  }
  return mine.size();
}

std::vector<CacheCredits::Trimmed> CacheCredits::Trim(SessionId session, size_t limit,
                                                      size_t keep) {
  std::vector<Trimmed> trimmed;
  std::lock_guard lock(mu_);
  auto held = held_.find(session);
  if (held == held_.end()) return trimmed;
  size_t& trimming = trimming_[session];
  size_t left = held->second.size() - std::min(trimming, held->second.size());
  if (left <= limit) return trimmed;
  std::deque<std::pair<uint64_t, uint64_t>>& order = granted_[session];
  while (left > keep && !order.empty()) {
    const auto [ino, grant] = order.front();
    order.pop_front();
    auto it = held->second.find(ino);
    if (it == held->second.end() || it->second != grant) continue;  // stale
    trimmed.push_back(Trimmed{ino, grant});
    --left;
  }
  trimming += trimmed.size();
  return trimmed;
}

void CacheCredits::EndTrim(SessionId session, const std::vector<Trimmed>& trimmed) {
  std::lock_guard lock(mu_);
  if (auto trimming = trimming_.find(session); trimming != trimming_.end()) {
    trimming->second -= std::min(trimming->second, trimmed.size());
    if (trimming->second == 0) trimming_.erase(trimming);
  }
  auto held = held_.find(session);
  if (held == held_.end()) return;
  for (const Trimmed& one : trimmed) {
    auto it = held->second.find(one.ino);
    if (it == held->second.end() || it->second != one.grant) continue;  // taken or granted again
    held->second.erase(it);
    if (auto holders = holders_.find(one.ino); holders != holders_.end()) {
      std::erase(holders->second, session);
      if (holders->second.empty()) holders_.erase(holders);
    }
  }
  if (held->second.empty()) held_.erase(held);
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
  for (const auto& [ino, grant] : held->second) {
    auto it = holders_.find(ino);
    if (it == holders_.end()) continue;
    std::erase(it->second, session);
    if (it->second.empty()) holders_.erase(it);
  }
  held_.erase(held);
  granted_.erase(session);
  trimming_.erase(session);
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
