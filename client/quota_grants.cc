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
      done = table_.TakeDone();
      forgotten = table_.forgotten();
    }
    auto asked = ask_(owner, caller, ost, bytes, done);
    std::lock_guard lock(mu_);
    if (!asked.ok()) {
      // An MDS that refused the room heard the done grants first; one that
      // did not answer may not have: they are told again (an id it freed
      // already is ignored).
      if (asked.err() != EDQUOT) table_.GiveBackDone(done);
      return asked.status();
    }
    if (table_.RevokedEarly(asked->id)) continue;  // the MDS freed it already
    auto grant = std::make_shared<Grant>();
    grant->key = key;
    grant->id = asked->id;
    grant->bytes = asked->bytes;
    grant->unlimited = asked->unlimited;
    if (!grant->unlimited && grant->bytes < bytes) {
      table_.GiveBackDone({grant->id});
      return Status::Error(EIO, "the MDS granted " + std::to_string(grant->bytes) +
                                    " bytes of quota for a write of " + std::to_string(bytes));
    }
    if (forgotten != table_.forgotten()) {
      // The stream went while asking: the MDS frees (or freed) this grant
      // with the stream it was given under. It serves this write only.
      if (grant->unlimited) return std::shared_ptr<control::QuotaHold>();
      grant->open = false;
      grant->held = bytes;
      table_.Add(grant);
      return std::shared_ptr<control::QuotaHold>(std::make_shared<Hold>(this, grant, bytes));
    }
    table_.Add(grant);
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
  table_.Done(grant);
}

void QuotaGrants::End(const std::shared_ptr<Grant>& grant, uint64_t reserved, uint64_t used) {
  std::lock_guard lock(mu_);
  grant->held -= reserved;
  grant->spent += used;
  if (grant->held != 0) return;
  if (grant->revoking) {
    table_.Drained();
  } else if (!grant->open) {
    table_.Done(grant);
  }
}

void QuotaGrants::Revoke(const std::vector<uint64_t>& ids) {
  std::unique_lock lock(mu_);
  table_.Revoke(lock, ids, [&](Grant& grant) {
    grant.open = false;
    if (auto cur = current_.find(grant.key); cur != current_.end() && cur->second.get() == &grant) {
      current_.erase(cur);
    }
  });
}

void QuotaGrants::Forget() {
  std::lock_guard lock(mu_);
  current_.clear();
  table_.Forget();
}

size_t QuotaGrants::revoking_for_tests() const {
  std::lock_guard lock(mu_);
  return table_.revoking();
}

size_t QuotaGrants::held_grants() const {
  std::lock_guard lock(mu_);
  return table_.size();
}

std::vector<uint64_t> QuotaGrants::done_for_tests() const {
  std::lock_guard lock(mu_);
  return table_.done();
}

}  // namespace sfs::client
