#include "meta/inode_locks.h"

#include <algorithm>

namespace sfs::meta {

InodeLocks::Held::Held(Held&& other) noexcept
    : locks_(other.locks_), stripes_(std::move(other.stripes_)), wanted_(std::move(other.wanted_)) {
  other.stripes_.clear();
}

InodeLocks::Held::~Held() {
  for (auto it = stripes_.rbegin(); it != stripes_.rend(); ++it) locks_->stripes_[*it].mu.unlock();
}

bool InodeLocks::Held::Add(uint64_t ino) {
  wanted_.push_back(ino);
  const size_t stripe = StripeOf(ino);
  auto at = std::lower_bound(stripes_.begin(), stripes_.end(), stripe);
  if (at != stripes_.end() && *at == stripe) return true;
  if (at == stripes_.end()) {
    locks_->stripes_[stripe].mu.lock();  // above every held one: in order
  } else if (!locks_->stripes_[stripe].mu.try_lock()) {
    return false;
  }
  stripes_.insert(at, stripe);
  return true;
}

InodeLocks::Held InodeLocks::Lock(const std::vector<uint64_t>& inos) {
  Held held(this);
  held.wanted_ = inos;
  held.stripes_.reserve(inos.size());
  for (uint64_t ino : inos) held.stripes_.push_back(StripeOf(ino));
  std::sort(held.stripes_.begin(), held.stripes_.end());
  held.stripes_.erase(std::unique(held.stripes_.begin(), held.stripes_.end()), held.stripes_.end());
  for (size_t stripe : held.stripes_) stripes_[stripe].mu.lock();
  return held;
}

InodeLocks::Held InodeLocks::LockAll() {
  Held held(this);
  held.stripes_.reserve(kStripes);
  for (size_t stripe = 0; stripe < kStripes; ++stripe) {
    stripes_[stripe].mu.lock();
    held.stripes_.push_back(stripe);
  }
  return held;
}

}  // namespace sfs::meta
