#include "client/quota_grants.h"

#include <algorithm>
#include <cerrno>

namespace sfs::client {

// One growing write's share of a grant, given back (what it did not use
// returns to the grant's room) when the write's size is stored or it
// failed.
class QuotaGrants::Hold final : public control::QuotaHold {
 public:
  Hold(QuotaGrants* owner, std::shared_ptr<Grant> grant, uint64_t reserved)
      : owner_(owner), grant_(std::move(grant)), reserved_(reserved) {}
  ~Hold() override { owner_->End(grant_, reserved_, std::min(used(), reserved_)); }

 private:
  QuotaGrants* const owner_;
  const std::shared_ptr<Grant> grant_;
  const uint64_t reserved_;
};

Result<std::shared_ptr<control::QuotaHold>> QuotaGrants::ReserveBytes(
    const control::QuotaOwner& owner, uint32_t caller, size_t ost, uint64_t bytes) {
  if (bytes == 0) return std::shared_ptr<control::QuotaHold>();
  const Key key{owner.uid, owner.gid, owner.projid, caller == 0};
  // A grant taken back before its reply came is asked for again, a few
  // times (the owner is at its limit with others writing).
  for (int round = 0; round < kAsks; ++round) {
    std::vector<uint64_t> done;
    uint64_t forgotten = 0;
    {
      std::lock_guard lock(mu_);
      if (auto it = current_.find(key); it != current_.end()) {
        const std::shared_ptr<Grant>& grant = it->second;
        if (grant->unlimited) return std::shared_ptr<control::QuotaHold>();
        if (grant->bytes - grant->spent - grant->held >= bytes) {
          grant->held += bytes;
          return std::shared_ptr<control::QuotaHold>(std::make_shared<Hold>(this, grant, bytes));
        }
        // Spent: the next grant takes its place.
        Close(grant);
        current_.erase(it);
      }
      done.swap(done_);
      forgotten = forgotten_;
    }
    auto asked = ask_(owner, caller, ost, bytes, done);
    std::lock_guard lock(mu_);
    if (!asked.ok()) {
      // An MDS that refused the room heard the done grants first; one that
      // did not answer may not have: they are told again (an id it freed
      // already is ignored).
      if (asked.err() != EDQUOT) done_.insert(done_.end(), done.begin(), done.end());
      return asked.status();
    }
    if (revoked_early_.erase(asked->id) > 0) continue;  // the MDS freed it already
    auto grant = std::make_shared<Grant>();
    grant->key = key;
    grant->id = asked->id;
    grant->bytes = asked->bytes;
    grant->unlimited = asked->unlimited;
    if (!grant->unlimited && grant->bytes < bytes) {
      done_.push_back(grant->id);
      return Status::Error(EIO, "the MDS granted " + std::to_string(grant->bytes) +
                                    " bytes of quota for a write of " + std::to_string(bytes));
    }
    if (forgotten != forgotten_) {
      // The stream went while asking: the MDS frees (or freed) this grant
      // with the stream it was given under. It serves this write only.
      if (grant->unlimited) return std::shared_ptr<control::QuotaHold>();
      grant->open = false;
      grant->held = bytes;
      all_[grant->id] = grant;
      return std::shared_ptr<control::QuotaHold>(std::make_shared<Hold>(this, grant, bytes));
    }
    all_[grant->id] = grant;
    std::shared_ptr<Grant>& slot = current_[key];
    // Another write of the same owner asked at the same time: the newest
    // grant is spent from, the other ends with its writes.
    if (slot != nullptr) Close(slot);
    slot = grant;
    if (grant->unlimited) return std::shared_ptr<control::QuotaHold>();
    grant->held = bytes;
    return std::shared_ptr<control::QuotaHold>(std::make_shared<Hold>(this, grant, bytes));
  }
  return Status::Error(EDQUOT, "uid " + std::to_string(owner.uid) + " gid " +
                                   std::to_string(owner.gid) + ": each quota grant was taken "
                                   "back before it could be used (the limit is near)");
}

void QuotaGrants::Close(const std::shared_ptr<Grant>& grant) {
  grant->open = false;
  if (grant->held == 0 && !grant->revoking && all_.erase(grant->id) > 0) {
    done_.push_back(grant->id);
  }
}

void QuotaGrants::End(const std::shared_ptr<Grant>& grant, uint64_t reserved, uint64_t used) {
  std::lock_guard lock(mu_);
  grant->held -= reserved;
  grant->spent += used;
  if (grant->held != 0) return;
  if (grant->revoking) {
    drained_.notify_all();
  } else if (!grant->open && all_.erase(grant->id) > 0) {
    done_.push_back(grant->id);
  }
}

void QuotaGrants::Revoke(const std::vector<uint64_t>& ids) {
  std::unique_lock lock(mu_);
  std::vector<std::shared_ptr<Grant>> revoked;
  for (uint64_t id : ids) {
    auto it = all_.find(id);
    if (it == all_.end()) {
      // Told done already, or forgotten, or its reply is still on its way
      // (the revocation overtook it): then it must not be used.
      RememberRevoked(id);
      continue;
    }
    const std::shared_ptr<Grant> grant = it->second;
    grant->open = false;
    grant->revoking = true;
    if (auto cur = current_.find(grant->key); cur != current_.end() && cur->second == grant) {
      current_.erase(cur);
    }
    revoked.push_back(grant);
  }
  const uint64_t forgotten = forgotten_;
  drained_.wait(lock, [&] {
    return forgotten_ != forgotten ||
           std::all_of(revoked.begin(), revoked.end(), [](const auto& g) { return g->held == 0; });
  });
  // The MDS frees them when it hears the acknowledgement.
  for (const auto& grant : revoked) {
    grant->revoking = false;
    // Not one with the same id from a restarted MDS (Forget ran meanwhile).
    if (auto it = all_.find(grant->id); it != all_.end() && it->second == grant) all_.erase(it);
  }
}

void QuotaGrants::RememberRevoked(uint64_t id) {
  revoked_early_.insert(id);
  // Ids told done before their revocation came are never asked about:
  // the oldest go (ids grow).
  while (revoked_early_.size() > kRevokedEarly) revoked_early_.erase(revoked_early_.begin());
}

void QuotaGrants::Forget() {
  std::lock_guard lock(mu_);
  for (auto& [id, grant] : all_) grant->open = false;
  all_.clear();
  current_.clear();
  done_.clear();
  revoked_early_.clear();
  ++forgotten_;
  drained_.notify_all();
}

size_t QuotaGrants::revoking_for_tests() const {
  std::lock_guard lock(mu_);
  size_t n = 0;
  for (const auto& [id, grant] : all_) n += grant->revoking;
  return n;
}

size_t QuotaGrants::held_grants() const {
  std::lock_guard lock(mu_);
  return all_.size();
}

std::vector<uint64_t> QuotaGrants::done_for_tests() const {
  std::lock_guard lock(mu_);
  return done_;
}

}  // namespace sfs::client
