// What the MDS hands client mounts to spend locally (issue 35, item 4;
// seed 003's hierarchical owners with the MDS as master): block quota of
// an owner (QUOTA_GRANT: control/quota_control.h reserves it) and room on
// an OST (ROOM_GRANT: control/space_grants.h reserves it), each in chunks
// a client spends one write at a time (client/quota_grants.h,
// client/room_grants.h). This book keeps each grant's reservation until
// the client tells it spent, a call-back took it back, or the client's
// stream ended; and says whose grants to take back when a client is
// refused or a limit changes.
//
// A grant's reservation holds its whole amount, what the client already
// wrote under it included (that part is counted as used too: charged as
// usage when the size is stored, or seen by the OST's next space sample),
// so the room the others see is short of it until the grant ends. A
// refusal therefore takes back every grant of what was short (the asker's
// own of other owners too) before it is final: EDQUOT and ENOSPC come at
// the limit, not at the limit less what clients sit on.
//
// A quota grant of an owner with no limit holds nothing and is kept too: a
// limit set later takes it back, so the client asks again and is held to
// the limit from then on.
//
// Thread safety: every method from any thread; one leaf lock, released
// before a freed reservation ends.
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

class GrantBook {
 public:
  // What a grant draws on: a quota id, or an OST's room.
  using Key = uint64_t;
  static Key QuotaKey(const QuotaId& id);
  static Key RoomKey(uint32_t ost);
  // The keys a quota grant for `owner` draws on (its user, group, project).
  static std::vector<Key> KeysOf(const control::QuotaOwner& owner);

  // Records a grant to `session`, given while its stream of `generation`
  // was up, drawing on `keys`; `hold` is its reservation (null for an
  // owner with no limit). Returns its id.
  uint64_t Add(SessionId session, uint64_t generation, std::vector<Key> keys,
               std::shared_ptr<void> hold);
  // `session` spent or gave back these grants: their reservations end.
  // Ids that are not the session's (or no longer known) are ignored.
  void Free(SessionId session, const std::vector<uint64_t>& ids);
  // The session's stream of `generation` ended: the grants given under it
  // or before end (the client forgot them with the stream).
  void StreamEnded(SessionId session, uint64_t generation);
  // The grants of sessions other than `except` (0: none) that draw on any
  // of `keys`, per session.
  std::map<SessionId, std::vector<uint64_t>> Holding(const std::vector<Key>& keys,
                                                     SessionId except) const;
  size_t size() const;

 private:
  struct Grant {
    SessionId session;
    uint64_t generation;
    std::vector<Key> keys;
    std::shared_ptr<void> hold;
  };
  mutable std::mutex mu_;  // guards the two below
  uint64_t next_id_ = 1;
  std::map<uint64_t, Grant> grants_;
};

}  // namespace sfs::mds
