// A client mount's block quota (issue 35, item 4; seed 003's hierarchical
// owners): the MDS is the quota master, each client a sub-owner. A client
// asks the MDS for a grant (QUOTA_GRANT) for one owner (user, group,
// project) with room for its write and a chunk beyond, spends it locally,
// one reservation per growing write, and asks again when it runs out. The
// MDS takes grants back through call-backs when another client needs the
// room (near the limit) or a limit changes; a revoked grant is given back
// once the writes in flight under it ended. So EDQUOT comes at the limit
// whatever the number of clients, and a client asks the MDS about once per
// chunk, not per write.
//
// Usage stays exact at the MDS: a write's growth is charged there when its
// size is stored (NOTE_WRITE), whoever granted it. A grant spent or
// superseded is told done with the next ask (the MDS then frees it); one
// the MDS does not limit (no limit on any of its ids) is remembered as
// such, and taken back by the MDS when a limit is set.
//
// Inode quota and a chown's move are checked by the MDS itself (a create
// and a setattr are calls there), so ReserveInodes and ReserveMove hold
// nothing here.
//
// Thread safety: every method from any thread; mu_ is a leaf, never held
// while asking.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "client/grant_table.h"
#include "control/quota_control.h"

namespace sfs::client {

// What the MDS answered a QUOTA_GRANT.
struct QuotaGrant {
  uint64_t id = 0;       // the MDS's
  uint64_t bytes = 0;    // room granted
  bool unlimited = false;  // no id of the owner has a limit (bytes unused)
};

class QuotaGrants final : public control::QuotaGate {
 public:
  // `ask(owner, caller, ost, bytes, done)`: the QUOTA_GRANT call, asking
  // for at least `bytes` and telling the grants in `done` spent.
  using Ask = std::function<Result<QuotaGrant>(const control::QuotaOwner& owner, uint32_t caller,
                                               size_t ost, uint64_t bytes,
                                               const std::vector<uint64_t>& done)>;
  explicit QuotaGrants(Ask ask) : ask_(std::move(ask)) {}

  Result<std::shared_ptr<control::QuotaHold>> ReserveBytes(const control::QuotaOwner& owner,
                                                           uint32_t caller, size_t ost,
                                                           uint64_t bytes) override;
  Result<std::shared_ptr<control::QuotaHold>> ReserveInodes(const control::QuotaOwner&, uint32_t,
                                                            uint64_t) override {
    return std::shared_ptr<control::QuotaHold>();
  }
  Result<MoveHolds> ReserveMove(const control::QuotaOwner&, const control::QuotaOwner&, uint32_t,
                                uint64_t) override {
    return MoveHolds{};
  }

  // The MDS takes these grants back (a call-back): no reservation is made
  // from them any more; returns once the writes in flight under them
  // ended (then the MDS hears the acknowledgement and frees them).
  void Revoke(const std::vector<uint64_t>& ids);
  // The call-back stream was lost: the MDS frees every grant of this
  // client given under it. The writes in flight end as they may.
  void Forget();

  // For tests: the grants this client holds now, and those it will tell done.
  size_t held_grants() const;
  std::vector<uint64_t> done_for_tests() const;
  size_t revoking_for_tests() const;  // grants a Revoke waits for

 private:
  // Whose grant: the owner, and whether the caller is root (exempt from
  // user and group limits).
  using Key = std::tuple<uint32_t, uint32_t, uint32_t, bool>;
  struct Grant {
    Key key;
    uint64_t id = 0;
    uint64_t bytes = 0;
    uint64_t spent = 0;  // by reservations that ended, as they used it
    uint64_t held = 0;   // by reservations in flight
    bool open = true;    // reservations may still be made from it
    bool unlimited = false;
    bool revoking = false;  // Revoke waits for held to reach 0
  };
  class Hold;
  friend class Hold;
  void End(const std::shared_ptr<Grant>& grant, uint64_t reserved, uint64_t used);
  // A grant no reservation will be made from again: told done at the next
  // ask once nothing is held under it. REQUIRES mu_.
  void Close(const std::shared_ptr<Grant>& grant);
  static constexpr int kAsks = 4;

  const Ask ask_;
  mutable std::mutex mu_;  // guards the two below
  std::map<Key, std::shared_ptr<Grant>> current_;  // the grant each owner spends from
  GrantTable<Grant> table_;
};

}  // namespace sfs::client
