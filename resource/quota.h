// Quota enforcement (seed 003's quota resource, after Lustre's qmt/qsd):
// per user, group and project id, byte and inode limits, soft ones with a
// grace period. The filesystem is the master of each id's quota; block
// quota's sub-owners are the OST services, each granted a chunk it
// spends locally and gives back when the master needs it (CountedCredits),
// so quota costs a lookup per growing write until an id is near its
// limit; inode quota has one sub-owner, the metadata service.
//
// Usage is not counted here but observed (Observe) from the metadata
// store, which keeps it exact in the same batch as each change; a
// reservation only keeps room for a change until that change is stored.
//
// Pure logic: no threads, no clock of its own (steady time for leases,
// wall-clock seconds for grace ends). Not thread-safe: one caller at a
// time (control/quota_control.h puts a lock around it).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "common/quota_id.h"
#include "resource/counted.h"
#include "resource/quota_limits.h"

namespace sfs::resource {

struct QuotaTunables {
  CountedTunables blocks{.chunk = 64ull << 20, .lease = std::chrono::seconds(30)};
  CountedTunables inodes{.chunk = 256, .lease = std::chrono::seconds(30)};
};

// What one id may still use right now, and why not (for reports).
struct QuotaReport {
  QuotaLimits limits;
  QuotaUsage usage;
};

class QuotaEnforcer {
 public:
  explicit QuotaEnforcer(QuotaTunables tunables = {});

  // Block quota's sub-owners: owner i is OST i. Only grows.
  void SetBlockOwners(size_t count);

  // The limits of `id` (all 0: none; its pools go). New limits take every
  // unused chunk back, so the new total holds at once.
  void SetLimits(const QuotaId& id, const QuotaLimits& limits, int64_t now_sec);
  // The store's usage of `id` after a batch (meta::UsageObserver).
  void Observe(const QuotaId& id, const QuotaUsage& usage, int64_t now_sec);

  // A reservation over several ids, all granted or none.
  struct Reservation {
    struct Part {
      QuotaId id;
      uint64_t generation;  // of the id's pool: a pool made anew ignores it
    };
    std::vector<Part> parts;
    OwnerId owner = 0;
    uint64_t amount = 0;
    bool blocks = true;
  };
  // Reserves `bytes` for each of `ids` (in order: user, group, project)
  // through OST `ost`'s chunk. nullopt when granted (into `out`); else the
  // first id that cannot take it, and nothing is reserved.
  std::optional<QuotaId> ReserveBlocks(const std::vector<QuotaId>& ids, size_t ost, uint64_t bytes,
                                       Clock::time_point now, int64_t now_sec, Reservation* out);
  std::optional<QuotaId> ReserveInodes(const std::vector<QuotaId>& ids, uint64_t inodes,
                                       Clock::time_point now, int64_t now_sec, Reservation* out);
  // Ends a reservation, of which `used` went into the change it was for.
  void Settle(const Reservation& reservation, uint64_t used, Clock::time_point now);

  // Unused chunks past their lease go back to the master.
  void Expire(Clock::time_point now);

  QuotaReport Report(const QuotaId& id) const;
  // Ids with limits, in order.
  std::vector<QuotaId> LimitedIds() const;
  // A sub-owner's state in one id's pool (zeros if the id has none).
  CountedStats BlockStats(const QuotaId& id, size_t ost) const;

 private:
  struct Pool {
    Pool(const QuotaTunables& tunables, uint64_t generation);
    QuotaLimits limits;
    uint64_t generation;
    CountedCredits blocks;
    CountedCredits inodes;
    bool block_grace_over = false;  // soft limit now enforced as hard
    bool inode_grace_over = false;
  };

  std::optional<QuotaId> Reserve(const std::vector<QuotaId>& ids, bool blocks, OwnerId owner,
                                 uint64_t amount, Clock::time_point now, int64_t now_sec,
                                 Reservation* out);
  // Sets the pool's totals from its limits and usage if they are new or
  // a grace period ran out or restarted since.
  void Retotal(const QuotaId& id, Pool& pool, int64_t now_sec, bool force);

  const QuotaTunables tunables_;
  size_t block_owners_ = 0;
  uint64_t next_generation_ = 1;
  std::map<QuotaId, QuotaUsage> usage_;  // as last observed
  std::map<QuotaId, std::unique_ptr<Pool>> pools_;  // ids with limits
};

}  // namespace sfs::resource
