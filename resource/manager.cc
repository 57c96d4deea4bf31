#include "resource/manager.h"

#include <algorithm>
#include <utility>

namespace sfs::resource {

CreditManager::CreditManager(std::unique_ptr<CreditType> type, Tunables tunables)
    : type_(std::move(type)), tunables_(tunables) {
  owners_.push_back(Owner{"root", true, 0});
}

OwnerId CreditManager::AddOwner(std::string name) {
  ++live_sub_owners_;
  // A gone owner's slot is taken again once nothing refers to it, so a
  // file opened and closed forever keeps a bounded table.
  for (size_t i = 0; i < gone_.size(); ++i) {
    const OwnerId id = gone_[i];
    const bool referred =
        std::any_of(grants_.begin(), grants_.end(), [id](const Grant& g) { return g.owner == id; }) ||
        std::any_of(holds_.begin(), holds_.end(), [id](const Hold& h) { return h.owner == id; });
    if (referred) continue;
    gone_.erase(gone_.begin() + static_cast<std::ptrdiff_t>(i));
    owners_[id] = Owner{std::move(name), true, 0};
    return id;
  }
  owners_.push_back(Owner{std::move(name), true, 0});
  return static_cast<OwnerId>(owners_.size() - 1);
}

void CreditManager::RemoveOwner(OwnerId owner, Clock::time_point now) {
  if (owner == kRootOwner || owner >= owners_.size() || !owners_[owner].alive) return;
  owners_[owner].alive = false;
  --live_sub_owners_;
  gone_.push_back(owner);
  for (size_t i = grants_.size(); i-- > 0;) {
    if (grants_[i].owner != owner) continue;
    if (grants_[i].pins == 0) {
      Cancel(i);
    } else {
      grants_[i].revoking = true;  // cancelled by the last Put
    }
  }
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->owner != owner) {
      ++it;
      continue;
    }
    callbacks_.push_back([done = std::move(it->done), ticket = it->ticket] {
      done(Outcome::kError, ticket);
    });
    it = waiting_.erase(it);
  }
  Pump(now);
}

CreditManager::GetResult CreditManager::Get(OwnerId owner, const Credit& wanted, GetFlags flags,
                                            Done done, OnBlocking blocking,
                                            Clock::time_point now) {
  if (owner >= owners_.size() || !owners_[owner].alive) return {State::kError, 0};
  Expire(now);
  const Ticket ticket = next_ticket_++;
  // Behind every earlier waiting request it clashes with: conflicting
  // requests are granted in arrival order.
  bool behind = false;
  for (const Waiter& waiter : waiting_) {
    if (type_->Conflicts(waiter.credit, wanted)) {
      behind = true;
      break;
    }
  }
  if (!behind) {
    switch (TryAdmit(ticket, owner, wanted, flags, blocking, now)) {
      case Admit::kGranted:
        return {State::kGranted, ticket};
      case Admit::kDenied:
        return {State::kDenied, 0};
      case Admit::kWait:
        break;
    }
  } else if (flags.non_block_local) {
    return {State::kDenied, 0};
  }
  waiting_.push_back(Waiter{ticket, owner, wanted, std::move(done), std::move(blocking)});
  return {State::kQueued, ticket};
}

void CreditManager::Put(Ticket ticket, Clock::time_point now) {
  auto hold = std::find_if(holds_.begin(), holds_.end(),
                           [ticket](const Hold& h) { return h.ticket == ticket; });
  if (hold == holds_.end()) return;
  const uint64_t grant_id = hold->grant;
  holds_.erase(hold);
  if (grant_id != 0) {
    auto grant = std::find_if(grants_.begin(), grants_.end(),
                              [grant_id](const Grant& g) { return g.id == grant_id; });
    if (grant != grants_.end() && --grant->pins == 0) {
      if (grant->revoking) {
        Cancel(static_cast<size_t>(grant - grants_.begin()));
      } else {
        grant->lease_end = now + tunables_.lease;
        grant->last_used = now;
        TrimCache(grant->owner);
      }
    }
  }
  Expire(now);
  Pump(now);
}

CreditManager::Callbacks CreditManager::TakeCallbacks() { return std::exchange(callbacks_, {}); }

OwnerStats CreditManager::Stats(OwnerId owner) const {
  OwnerStats stats;
  if (owner >= owners_.size()) return stats;
  stats.revoked = owners_[owner].revoked;
  for (const Hold& hold : holds_) stats.held += hold.owner == owner;
  for (const Grant& grant : grants_) {
    if (grant.owner == owner && grant.pins == 0) ++stats.cached;
    if (owner == kRootOwner) ++stats.granted;
  }
  for (const Waiter& waiter : waiting_) {
    if (waiter.owner == owner) ++stats.pending_out;
    if (owner == kRootOwner && waiter.owner != kRootOwner) ++stats.pending_in;
  }
  return stats;
}

size_t CreditManager::owners() const { return live_sub_owners_; }

CreditManager::Admit CreditManager::TryAdmit(Ticket ticket, OwnerId owner, const Credit& wanted,
                                             GetFlags flags, OnBlocking& blocking,
                                             Clock::time_point now) {
  if (ClashesWithHold(wanted)) {
    if (flags.non_block_local) return Admit::kDenied;
    WaitFor(wanted, {});
    return Admit::kWait;
  }
  if (owner != kRootOwner) {
    for (Grant& grant : grants_) {
      if (grant.owner == owner && !grant.revoking && type_->Matches(wanted, grant.credit)) {
        ++grant.pins;
        holds_.push_back(Hold{ticket, owner, wanted, grant.id, std::move(blocking)});
        return Admit::kGranted;
      }
    }
  }
  if (flags.non_block_local) return Admit::kDenied;
  // Ask the root: every other owner's conflicting credit must go first.
  // Unused ones go now; one in use is marked and goes with its last Put.
  std::vector<uint64_t> blocked;  // grants in use: they go with their last Put
  for (size_t i = grants_.size(); i-- > 0;) {
    Grant& grant = grants_[i];
    if (grant.owner == owner || !type_->Conflicts(wanted, grant.credit)) continue;
    if (!grant.revoking) Revoke(grant);
    if (grant.pins == 0) {
      Cancel(i);
    } else {
      blocked.push_back(grant.id);
    }
  }
  if (!blocked.empty()) {
    WaitFor(wanted, blocked);
    return Admit::kWait;
  }
  if (owner == kRootOwner) {
    holds_.push_back(Hold{ticket, owner, wanted, 0, std::move(blocking)});
    return Admit::kGranted;
  }
  // More than was asked for only if it clashes with nothing anyone has or
  // waits for: a larger credit that a waiting request would have to
  // revoke again could keep that request waiting for ever.
  Credit granted = type_->Expand(wanted, live_sub_owners_ == 1);
  if (ClashesWithOthersGrant(owner, granted) || ClashesWithHold(granted) ||
      ClashesWithWaiter(ticket, granted)) {
    granted = wanted;
  }
  grants_.push_back(Grant{next_grant_++, owner, granted, 1, false, now, now});
  holds_.push_back(Hold{ticket, owner, wanted, grants_.back().id, std::move(blocking)});
  return Admit::kGranted;
}

void CreditManager::WaitFor(const Credit& wanted, const std::vector<uint64_t>& grants) {
  for (Hold& hold : holds_) {
    if (!hold.blocking) continue;
    const bool on_blocked_grant =
        hold.grant != 0 && std::find(grants.begin(), grants.end(), hold.grant) != grants.end();
    if (on_blocked_grant || type_->Conflicts(hold.credit, wanted)) {
      callbacks_.push_back(std::exchange(hold.blocking, nullptr));
    }
  }
}

bool CreditManager::ClashesWithHold(const Credit& wanted) const {
  for (const Hold& hold : holds_) {
    if (type_->Conflicts(hold.credit, wanted)) return true;
  }
  return false;
}

bool CreditManager::ClashesWithWaiter(Ticket self, const Credit& credit) const {
  for (const Waiter& waiter : waiting_) {
    if (waiter.ticket != self && type_->Conflicts(waiter.credit, credit)) return true;
  }
  return false;
}

bool CreditManager::ClashesWithOthersGrant(OwnerId owner, const Credit& credit) const {
  for (const Grant& grant : grants_) {
    if (grant.owner != owner && type_->Conflicts(grant.credit, credit)) return true;
  }
  return false;
}

void CreditManager::Revoke(Grant& grant) {
  grant.revoking = true;
  ++owners_[grant.owner].revoked;
}

void CreditManager::Cancel(size_t grant_index) {
  grants_.erase(grants_.begin() + static_cast<std::ptrdiff_t>(grant_index));
}

void CreditManager::TrimCache(OwnerId owner) {
  for (;;) {
    size_t cached = 0;
    size_t oldest = grants_.size();
    for (size_t i = 0; i < grants_.size(); ++i) {
      const Grant& grant = grants_[i];
      if (grant.owner != owner || grant.pins != 0) continue;
      ++cached;
      if (oldest == grants_.size() || grant.last_used < grants_[oldest].last_used) oldest = i;
    }
    if (cached <= tunables_.max_cached_per_owner) return;
    Cancel(oldest);
  }
}

void CreditManager::Expire(Clock::time_point now) {
  for (size_t i = grants_.size(); i-- > 0;) {
    if (grants_[i].pins == 0 && grants_[i].lease_end <= now) Cancel(i);
  }
}

void CreditManager::Pump(Clock::time_point now) {
  if (waiting_.empty()) return;  // the usual case: nothing to let in
  // Earlier waiters first; one that clashes with an earlier waiter still
  // waiting stays behind it.
  // Copies: erasing from a deque moves the others.
  std::vector<Credit> still_waiting;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    bool behind = false;
    for (const Credit& earlier : still_waiting) {
      if (type_->Conflicts(earlier, it->credit)) {
        behind = true;
        break;
      }
    }
    if (!behind && TryAdmit(it->ticket, it->owner, it->credit, GetFlags{}, it->blocking, now) ==
                       Admit::kGranted) {
      callbacks_.push_back([done = std::move(it->done), ticket = it->ticket] {
        done(Outcome::kGranted, ticket);
      });
      it = waiting_.erase(it);
      continue;
    }
    still_waiting.push_back(it->credit);
    ++it;
  }
}

}  // namespace sfs::resource
