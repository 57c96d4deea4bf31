#include "mds/grant_book.h"

#include <algorithm>

namespace sfs::mds {

GrantBook::Key GrantBook::QuotaKey(const QuotaId& id) {
  return (uint64_t{1} << 40) | (uint64_t{static_cast<uint8_t>(id.type)} << 32) | id.id;
}

GrantBook::Key GrantBook::RoomKey(uint32_t ost) { return (uint64_t{2} << 40) | ost; }

std::vector<GrantBook::Key> GrantBook::KeysOf(const control::QuotaOwner& owner) {
  std::vector<Key> keys{QuotaKey({QuotaType::kUser, owner.uid}),
                        QuotaKey({QuotaType::kGroup, owner.gid})};
  if (owner.projid != 0) keys.push_back(QuotaKey({QuotaType::kProject, owner.projid}));
  return keys;
}

uint64_t GrantBook::Add(SessionId session, uint64_t generation, std::vector<Key> keys,
                        std::shared_ptr<void> hold) {
  std::lock_guard lock(mu_);
  const uint64_t id = next_id_++;
  grants_.emplace(id, Grant{session, generation, std::move(keys), std::move(hold)});
  return id;
}

void GrantBook::Free(SessionId session, const std::vector<uint64_t>& ids) {
  std::vector<std::shared_ptr<void>> ended;  // declared first: ends after the lock is released
  std::lock_guard lock(mu_);
  for (uint64_t id : ids) {
    auto it = grants_.find(id);
    if (it == grants_.end() || it->second.session != session) continue;
    ended.push_back(std::move(it->second.hold));
    grants_.erase(it);
  }
}

void GrantBook::StreamEnded(SessionId session, uint64_t generation) {
  std::vector<std::shared_ptr<void>> ended;
  std::lock_guard lock(mu_);
  for (auto it = grants_.begin(); it != grants_.end();) {
    if (it->second.session == session && it->second.generation <= generation) {
      ended.push_back(std::move(it->second.hold));
      it = grants_.erase(it);
    } else {
      ++it;
    }
  }
}

std::map<SessionId, std::vector<uint64_t>> GrantBook::Holding(const std::vector<Key>& keys,
                                                              SessionId except) const {
  std::map<SessionId, std::vector<uint64_t>> holding;
  std::lock_guard lock(mu_);
  for (const auto& [id, grant] : grants_) {
    if (except != 0 && grant.session == except) continue;
    const bool shares = std::any_of(grant.keys.begin(), grant.keys.end(), [&](Key key) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    });
    if (shares) holding[grant.session].push_back(id);
  }
  return holding;
}

size_t GrantBook::size() const {
  std::lock_guard lock(mu_);
  return grants_.size();
}

}  // namespace sfs::mds
