// Block quota grants to client mounts (issue 35, item 4; seed 003's
// hierarchical owners with the MDS as master): the MDS's quota control
// (control/quota_control.h) reserves room for a client's writes in chunks
// (QUOTA_GRANT), which the client spends locally (client/quota_grants.h).
// This book keeps each grant's reservation until the client tells it
// spent, a call-back took it back, or the client's stream ended; and says
// whose grants to take back when a client is refused room or a limit
// changes.
//
// A grant's reservation holds its whole amount, what the client already
// wrote under it included (that part is charged as usage too when the
// size is stored, so the room the others see is short of it until the
// grant ends): a refusal takes every grant of the same ids back (the
// asker's own of other owners too) before it is final, so EDQUOT comes at
// the limit.
//
// A grant of an owner with no limit holds nothing and is kept too: a
// limit set later takes it back, so the client asks again and is held to
// the limit from then on.
//
// Thread safety: every method from any thread; one leaf lock, released
// before a freed reservation is settled.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "common/quota_id.h"
#include "control/quota_control.h"
#include "mds/cache_credits.h"

namespace sfs::mds {

class QuotaGrantBook {
 public:
  // Records a grant to `session`, given while its stream of `generation`
  // was up; `hold` is null for an owner with no limit. Returns its id.
  uint64_t Add(SessionId session, uint64_t generation, const control::QuotaOwner& owner,
               std::shared_ptr<control::QuotaHold> hold);
  // `session` spent or gave back these grants: their reservations end.
  // Ids that are not the session's (or no longer known) are ignored.
  void Free(SessionId session, const std::vector<uint64_t>& ids);
  // The session's stream of `generation` ended: the grants given under it
  // or before end (the client forgot them with the stream).
  void StreamEnded(SessionId session, uint64_t generation);
  // The grants of sessions other than `except` (0: none) whose owner is
  // counted in any of `ids` (its user, group or project), per session.
  std::map<SessionId, std::vector<uint64_t>> Holding(const std::vector<QuotaId>& ids,
                                                     SessionId except) const;
  size_t size() const;

  // The ids a grant for `owner` counts in.
  static std::vector<QuotaId> IdsOf(const control::QuotaOwner& owner);

 private:
  struct Grant {
    SessionId session;
    uint64_t generation;
    control::QuotaOwner owner;
    std::shared_ptr<control::QuotaHold> hold;
  };
  mutable std::mutex mu_;  // guards the two below
  uint64_t next_id_ = 1;
  std::map<uint64_t, Grant> grants_;
};

}  // namespace sfs::mds
