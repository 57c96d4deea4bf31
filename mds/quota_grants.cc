#include "mds/quota_grants.h"

#include <algorithm>

namespace sfs::mds {

uint64_t QuotaGrantBook::Add(SessionId session, uint64_t generation,
                             const control::QuotaOwner& owner,
                             std::shared_ptr<control::QuotaHold> hold) {
  std::lock_guard lock(mu_);
  const uint64_t id = next_id_++;
  grants_.emplace(id, Grant{session, generation, owner, std::move(hold)});
  return id;
}

void QuotaGrantBook::Free(SessionId session, const std::vector<uint64_t>& ids) {
  std::vector<std::shared_ptr<control::QuotaHold>> ended;  // settled outside mu_
  std::lock_guard lock(mu_);
  for (uint64_t id : ids) {
    auto it = grants_.find(id);
    if (it == grants_.end() || it->second.session != session) continue;
    ended.push_back(std::move(it->second.hold));
    grants_.erase(it);
  }
  // `ended` is destroyed after the lock is released (declared before it).
}

void QuotaGrantBook::StreamEnded(SessionId session, uint64_t generation) {
  std::vector<std::shared_ptr<control::QuotaHold>> ended;
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

std::map<SessionId, std::vector<uint64_t>> QuotaGrantBook::Holding(const std::vector<QuotaId>& ids,
                                                                   SessionId except) const {
  std::map<SessionId, std::vector<uint64_t>> holding;
  std::lock_guard lock(mu_);
  for (const auto& [id, grant] : grants_) {
    if (grant.session == except) continue;
    const std::vector<QuotaId> counted = IdsOf(grant.owner);
    const bool shares = std::any_of(counted.begin(), counted.end(), [&](const QuotaId& one) {
      return std::find(ids.begin(), ids.end(), one) != ids.end();
    });
    if (shares) holding[grant.session].push_back(id);
  }
  return holding;
}

size_t QuotaGrantBook::size() const {
  std::lock_guard lock(mu_);
  return grants_.size();
}

std::vector<QuotaId> QuotaGrantBook::IdsOf(const control::QuotaOwner& owner) {
  std::vector<QuotaId> ids{{QuotaType::kUser, owner.uid}, {QuotaType::kGroup, owner.gid}};
  if (owner.projid != 0) ids.push_back({QuotaType::kProject, owner.projid});
  return ids;
}

}  // namespace sfs::mds
