// What a client's quota grants and room grants (client/quota_grants.h,
// client/room_grants.h) keep alike: the grants it holds by the MDS's id,
// those to tell the MDS done with the next ask, a revocation that waits
// for the writes in flight under its grants, the ids revoked before their
// reply came (such a grant is not used), and forgetting it all with a lost
// call-back stream.
//
// Not thread-safe by itself: the owner's mutex guards it (Revoke waits on
// that mutex's lock).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace sfs::client {

// `Grant` has `uint64_t id`, `uint64_t held` (reserved by writes in
// flight) and `bool revoking`.
template <typename Grant>
class GrantTable {
 public:
  void Add(std::shared_ptr<Grant> grant) { all_[grant->id] = std::move(grant); }
  // No write takes from `grant` any more and none holds it: told done with
  // the next ask (unless revoked or forgotten meanwhile).
  void Done(const std::shared_ptr<Grant>& grant) {
    if (grant->held != 0 || grant->revoking) return;
    auto it = all_.find(grant->id);
    if (it == all_.end() || it->second != grant) return;
    all_.erase(it);
    done_.push_back(grant->id);
  }
  // A write under a grant ended: a revocation may be waiting for it.
  void Drained() { drained_.notify_all(); }
  // The done ids to send with an ask, and taken back if it went unheard.
  std::vector<uint64_t> TakeDone() { return std::exchange(done_, {}); }
  void GiveBackDone(const std::vector<uint64_t>& done) {
    done_.insert(done_.end(), done.begin(), done.end());
  }
  // The MDS freed this id before its reply came: not to be used.
  bool RevokedEarly(uint64_t id) { return revoked_early_.erase(id) > 0; }
  uint64_t forgotten() const { return forgotten_; }

  // Takes `ids` back: `detach(grant)` stops new writes taking from each;
  // returns, with `lock` (the owner's) held again, once none is held. Ids
  // not held are remembered: a reply bringing one is not used.
  template <typename Detach>
  void Revoke(std::unique_lock<std::mutex>& lock, const std::vector<uint64_t>& ids,
              Detach detach) {
    std::vector<std::shared_ptr<Grant>> revoked;
    for (uint64_t id : ids) {
      auto it = all_.find(id);
      if (it == all_.end()) {
        // Told done already, or forgotten, or its reply is still on its
        // way (the revocation overtook it). The oldest go past a bound:
        // ids told done before their revocation came are never asked about.
        revoked_early_.insert(id);
        while (revoked_early_.size() > kRevokedEarly) revoked_early_.erase(revoked_early_.begin());
        continue;
      }
      const std::shared_ptr<Grant> grant = it->second;
      grant->revoking = true;
      detach(*grant);
      revoked.push_back(grant);
    }
    const uint64_t forgotten = forgotten_;
    drained_.wait(lock, [&] {
      if (forgotten_ != forgotten) return true;
      for (const auto& grant : revoked) {
        if (grant->held != 0) return false;
      }
      return true;
    });
    // The MDS frees them when it hears the acknowledgement. (Not one with
    // the same id from a restarted MDS: Forget ran meanwhile.)
    for (const auto& grant : revoked) {
      grant->revoking = false;
      if (auto it = all_.find(grant->id); it != all_.end() && it->second == grant) all_.erase(it);
    }
  }

  // The stream was lost: the MDS frees every grant given under it.
  void Forget() {
    all_.clear();
    done_.clear();
    revoked_early_.clear();
    ++forgotten_;
    drained_.notify_all();
  }

  size_t size() const { return all_.size(); }
  const std::vector<uint64_t>& done() const { return done_; }
  size_t revoking() const {
    size_t n = 0;
    for (const auto& [id, grant] : all_) n += grant->revoking;
    return n;
  }

 private:
  static constexpr size_t kRevokedEarly = 4096;
  std::map<uint64_t, std::shared_ptr<Grant>> all_;  // not yet told done or revoked
  std::vector<uint64_t> done_;
  std::set<uint64_t> revoked_early_;
  uint64_t forgotten_ = 0;  // Forget calls: a grant asked across one is not kept
  std::condition_variable drained_;  // a revoked grant's held fell to 0
};

}  // namespace sfs::client
