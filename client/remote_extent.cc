#include "client/remote_extent.h"

namespace sfs::client {

Status RemoteExtent::Acquire(bool write) {
  const int wanted = write ? 2 : 1;
  std::unique_lock lock(mu_);
  for (;;) {
    // A revocation drains first: no I/O starts under a credit going away.
    changed_.wait(lock, [&] { return !revoking_; });
    if (held_ >= wanted) {
      ++in_flight_;
      return Status::Ok();
    }
    const uint64_t before = revocations_;
    lock.unlock();
    Status granted = ask_(write);
    lock.lock();
    if (!granted.ok()) return granted;
    // Granted, unless a revocation came meanwhile: it may have been for
    // this grant (and was acknowledged, holding nothing then).
    if (revocations_ == before) held_ = std::max(held_, wanted);
  }
}

void RemoteExtent::Release() {
  {
    std::lock_guard lock(mu_);
    --in_flight_;
  }
  changed_.notify_all();
}

void RemoteExtent::Revoke() {
  std::unique_lock lock(mu_);
  ++revocations_;
  revoking_ = true;
  changed_.wait(lock, [&] { return in_flight_ == 0; });
  held_ = 0;
  revoking_ = false;
  lock.unlock();
  changed_.notify_all();
}

void RemoteExtent::Lost() {
  std::lock_guard lock(mu_);
  ++revocations_;
  held_ = 0;
}

int RemoteExtent::held() const {
  std::lock_guard lock(mu_);
  return held_;
}

}  // namespace sfs::client
