#include "resource/counted.h"

#include <algorithm>
#include <utility>

namespace sfs::resource {

CountedCredits::CountedCredits(uint64_t total, CountedTunables tunables)
    : tunables_(tunables), free_(static_cast<int64_t>(total)) {
  owners_.push_back(Owner{"root", true, {}, {}});
}

OwnerId CountedCredits::AddOwner(std::string name) {
  owners_.push_back(Owner{std::move(name), true, {}, {}});
  ++live_;
  return static_cast<OwnerId>(owners_.size() - 1);
}

void CountedCredits::RemoveOwner(OwnerId id) {
  if (id == kRootOwner || id >= owners_.size() || !owners_[id].alive) return;
  Owner& owner = owners_[id];
  owner.alive = false;
  --live_;
  free_ += static_cast<int64_t>(owner.stats.cached + owner.stats.held);
  owner.stats.cached = owner.stats.held = 0;
}

bool CountedCredits::Get(OwnerId id, uint64_t amount, Clock::time_point now) {
  if (id == kRootOwner || id >= owners_.size() || !owners_[id].alive) return false;
  Owner& owner = owners_[id];
  owner.lease_end = now + tunables_.lease;
  if (owner.stats.cached < amount) {
    // Ask the root for the rest, and a share of what is free beyond it so
    // the next requests stay local; near the limit the share shrinks, so
    // no owner sits on what another needs.
    const int64_t deficit = static_cast<int64_t>(amount - owner.stats.cached);
    ++owner.stats.asked;
    if (free_ < deficit) {
      int64_t reclaimable = 0;
      for (size_t i = 1; i < owners_.size(); ++i) {
        if (i != id) reclaimable += static_cast<int64_t>(owners_[i].stats.cached);
      }
      if (free_ + reclaimable < deficit) return false;
      for (size_t i = 1; i < owners_.size(); ++i) {
        if (i != id && owners_[i].stats.cached > 0) Revoke(owners_[i]);
      }
    }
    const int64_t spare = std::max<int64_t>(0, free_ - deficit);
    const int64_t share = std::min<int64_t>(static_cast<int64_t>(tunables_.chunk),
                                            spare / static_cast<int64_t>(live_ + 1));
    free_ -= deficit + share;
    owner.stats.cached += static_cast<uint64_t>(deficit + share);
  }
  owner.stats.cached -= amount;
  owner.stats.held += amount;
  return true;
}

void CountedCredits::Put(OwnerId id, uint64_t reserved, uint64_t used, Clock::time_point now) {
  if (id >= owners_.size()) return;
  Owner& owner = owners_[id];
  if (!owner.alive) return;  // RemoveOwner returned its reservations already
  reserved = std::min(reserved, owner.stats.held);
  used = std::min(used, reserved);
  owner.stats.held -= reserved;
  owner.lease_end = now + tunables_.lease;
  free_ += static_cast<int64_t>(used);  // its Charge took it already
  const int64_t unused = static_cast<int64_t>(reserved - used);
  if (free_ < 0) {
    // The total fell below what was held: pay that back first.
    const int64_t back = std::min(unused, -free_);
    free_ += back;
    owner.stats.cached += static_cast<uint64_t>(unused - back);
  } else {
    owner.stats.cached += static_cast<uint64_t>(unused);
  }
}

void CountedCredits::Charge(int64_t delta) {
  free_ -= delta;
  // Usage grew past what is free (unreserved, or a reservation's change
  // charged before it ended): unused chunks pay the debt, so no owner goes
  // on granting from a cache the limit no longer covers.
  for (size_t i = 1; i < owners_.size() && free_ < 0; ++i) {
    if (owners_[i].stats.cached > 0) Revoke(owners_[i]);
  }
}

void CountedCredits::SetTotal(uint64_t total) {
  for (size_t i = 1; i < owners_.size(); ++i) {
    if (owners_[i].stats.cached > 0) Revoke(owners_[i]);
  }
  int64_t held = 0;
  for (const Owner& owner : owners_) held += static_cast<int64_t>(owner.stats.held);
  free_ = static_cast<int64_t>(total) - held;
}

void CountedCredits::Expire(Clock::time_point now) {
  for (size_t i = 1; i < owners_.size(); ++i) {
    Owner& owner = owners_[i];
    if (owner.stats.cached > 0 && owner.stats.held == 0 && owner.lease_end <= now) {
      free_ += static_cast<int64_t>(owner.stats.cached);
      owner.stats.cached = 0;
    }
  }
}

int64_t CountedCredits::total() const {
  int64_t sum = free_;
  for (const Owner& owner : owners_) {
    sum += static_cast<int64_t>(owner.stats.cached + owner.stats.held);
  }
  return sum;
}

CountedStats CountedCredits::Stats(OwnerId id) const {
  return id < owners_.size() ? owners_[id].stats : CountedStats{};
}

void CountedCredits::Revoke(Owner& owner) {
  const uint64_t amount = owner.stats.cached;
  free_ += static_cast<int64_t>(amount);
  owner.stats.cached = 0;
  ++owner.stats.revoked;
}

}  // namespace sfs::resource
