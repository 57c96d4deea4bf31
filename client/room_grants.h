// A client mount's room on the OSTs (issue 35, item 4; Lustre's grants
// from OST to client, with the MDS as the master here): the MDS's
// control::SpaceGrants follows every OST's free space; a client asks it
// (ROOM_GRANT) for room on the OSTs a write needs and a chunk beyond,
// spends it locally, one write at a time, and asks again when it runs
// out. A refusal at the MDS takes back the other grants on the short OST
// (call-backs) before it is final, so a client's write that cannot fit is
// refused whole before any part is sent (ENOSPC), whatever the number of
// clients, as on the one-process mount.
//
// Room a write was granted counts as used once the write is gone (the
// OST's next sample at the MDS shows what it really took); what a grant
// still has unspent goes back with it.
//
// Thread safety: every method from any thread; mu_ guards the grants and
// is a leaf, never held while asking; asker_mu_ guards the asks handed to
// the asker thread (ReserveSoon).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "client/grant_table.h"
#include "control/space_grants.h"

namespace sfs::client {

// What the MDS answered a ROOM_GRANT: one grant, with room on each OST asked.
struct RoomGrant {
  uint64_t id = 0;
  std::map<uint32_t, uint64_t> bytes;  // by OST
};

class RoomGrants final : public control::SpaceGate {
 public:
  // `ask(per_ost, done)`: the ROOM_GRANT call, asking for at least
  // per_ost's bytes on each of its OSTs and telling the grants in `done`
  // spent.
  using Ask = std::function<Result<RoomGrant>(const std::map<uint32_t, uint64_t>& per_ost,
                                              const std::vector<uint64_t>& done)>;
  explicit RoomGrants(Ask ask) : ask_(std::move(ask)) {}
  ~RoomGrants() { StopAsker(); }

  // From the grants this client holds; else, if `may_wait`, asks the MDS
  // (blocking), else refuses with ENOSPC at once (the caller then asks
  // ReserveSoon, whose asker thread may wait).
  Granted Reserve(const std::vector<std::pair<uint32_t, uint64_t>>& per_ost,
                  bool may_wait) override;
  void ReserveSoon(std::vector<std::pair<uint32_t, uint64_t>> per_ost,
                   std::function<void(Granted)> done) override;
  // Room this client's truncates and punches free is seen by the MDS in the
  // OST's next sample, which it asks for before it refuses room: nothing
  // to do here. (Telling it with the next ask was tried: a resent ask
  // credited it twice.)
  void Freed(uint32_t, uint64_t, std::chrono::steady_clock::time_point) override {}
  // Answers the asks the asker thread holds and stops it; later asks are
  // answered on the caller's thread. Before the OSTs go (answers launch ops).
  void StopAsker();

  // The MDS takes these grants back (a call-back): no room is taken from
  // them any more; returns once the writes in flight under them ended.
  // Ids this client does not hold are ignored.
  void Revoke(const std::vector<uint64_t>& ids);
  // The call-back stream was lost (client/quota_grants.h).
  void Forget();

  // For tests: grants held, and those to be told done at the next ask.
  size_t held_grants() const;
  std::vector<uint64_t> done_for_tests() const;
  size_t revoking_for_tests() const;  // grants a Revoke waits for

 private:
  struct Grant {
    uint64_t id = 0;
    std::map<uint32_t, uint64_t> room;  // by OST: what is left to take
    uint64_t held = 0;   // bytes taken by writes in flight
    int current = 0;     // OSTs whose writes take from it now
    bool revoking = false;
  };
  class Hold;
  friend class Hold;
  using Taken = std::vector<std::pair<std::shared_ptr<Grant>, uint64_t>>;
  // Takes `need` from the current grants, or from `fresh` for the OSTs it
  // has room on (all or nothing). REQUIRES mu_.
  bool TryTake(const std::map<uint32_t, uint64_t>& need, Taken* taken,
               const std::shared_ptr<Grant>& fresh);
  // The OSTs of `need` whose current grant is short. REQUIRES mu_.
  std::map<uint32_t, uint64_t> Short(const std::map<uint32_t, uint64_t>& need) const;
  // `ost` stops taking from its current grant. REQUIRES mu_.
  void Retire(uint32_t ost);
  // Told done once no OST takes from it and nothing is held. REQUIRES mu_.
  void MaybeDone(const std::shared_ptr<Grant>& grant);
  void End(const Taken& taken);
  Granted Give(Taken taken);
  void AskerLoop();

  const Ask ask_;
  mutable std::mutex mu_;  // guards the two below
  std::map<uint32_t, std::shared_ptr<Grant>> current_;  // by OST
  GrantTable<Grant> table_;

  struct PendingAsk {
    std::vector<std::pair<uint32_t, uint64_t>> per_ost;
    std::function<void(Granted)> done;
  };
  std::mutex asker_mu_;
  std::condition_variable asked_;
  std::deque<PendingAsk> asks_;  // GUARDED_BY(asker_mu_)
  bool asker_stop_ = false;      // GUARDED_BY(asker_mu_)
  std::thread asker_;            // started by the first ask; GUARDED_BY(asker_mu_)
};

}  // namespace sfs::client
