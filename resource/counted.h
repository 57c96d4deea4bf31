// Counted credits: an amount of one resource (bytes or inodes of a quota
// id, free space of an OST) that a root hands to sub-owners in chunks they
// spend locally (seed 003's quota and grant types, Lustre's qmt/qsd
// split). Amounts are divisible and never clash, so nothing queues: a
// request is granted from the owner's cache, else from the root's free
// amount, else from other owners' unused chunks taken back (revoked),
// else denied (the caller's EDQUOT or ENOSPC).
//
// Usage is told by Charge, from whoever knows it exactly (the metadata
// store's batches, for quota): a reservation only keeps room for a change
// until it is made, and its end (Put) gives back all of it, what was spent
// included, since the spending was charged on its own. So the pool's total
// is the limit minus usage whatever the order of the two.
//
// Pure logic, clock injected; not thread-safe (one caller at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "resource/manager.h"

namespace sfs::resource {

struct CountedTunables {
  // What a sub-owner asks the root for beyond its need, so that its next
  // requests are local; near the limit the root hands out less (below).
  uint64_t chunk = 64ull << 20;
  // How long a sub-owner keeps an unused chunk.
  Clock::duration lease = std::chrono::seconds(30);
};

struct CountedStats {
  uint64_t cached = 0;   // granted to the owner, unused
  uint64_t held = 0;     // reserved by its users' requests in flight
  uint64_t revoked = 0;  // times the root took its unused chunk back
  uint64_t asked = 0;    // times it had to ask the root
};

class CountedCredits {
 public:
  // `total`: what may be in use at all (a limit minus what is used).
  // Revocation needs no call-back: an owner's unused chunk is only a
  // number here, which the root takes back itself (Stats().revoked
  // counts it); the owner learns at its next Get.
  CountedCredits(uint64_t total, CountedTunables tunables);

  OwnerId AddOwner(std::string name);
  // Its unused and reserved amounts go back to the root.
  void RemoveOwner(OwnerId owner);

  // Reserves `amount` for a user of `owner`: true if granted (from its
  // cache, or with the root's help), false if there is not that much.
  bool Get(OwnerId owner, uint64_t amount, Clock::time_point now);
  // Ends a reservation of `reserved`, of which `used` was spent and
  // charged (Charge): that part is free again (the charge took it), the
  // rest returns to the owner's cache. REQUIRES: used <= reserved <= what
  // the owner holds.
  void Put(OwnerId owner, uint64_t reserved, uint64_t used, Clock::time_point now);

  // Usage changed by `delta`: what is free shrinks by it or grows. If it
  // falls below zero, owners' unused chunks are taken back to pay for it;
  // what they cannot pay stays a debt (usage over the limit, e.g. by an
  // exempt user) that denies every request until usage falls.
  void Charge(int64_t delta);
  // A new total (the limit changed, or usage was recounted): what the
  // owners cache beyond it is taken back at once. Reservations in flight
  // are kept (they may end above the total; the next request is denied).
  void SetTotal(uint64_t total);

  // Unused chunks whose lease ran out go back to the root.
  void Expire(Clock::time_point now);

  // Held by nobody; negative after SetTotal fell below what is held.
  int64_t free() const { return free_; }
  int64_t total() const;  // free + cached + held: the limit minus usage
  CountedStats Stats(OwnerId owner) const;

 private:
  struct Owner {
    std::string name;
    bool alive = true;
    CountedStats stats;
    Clock::time_point lease_end;
  };
  void Revoke(Owner& owner);

  const CountedTunables tunables_;
  // Below zero when SetTotal fell below what users hold: unused ends of
  // reservations then pay it back before any owner caches again.
  int64_t free_ = 0;
  std::vector<Owner> owners_;  // by OwnerId; [0] is the root, unused
  size_t live_ = 0;
};

}  // namespace sfs::resource
