// Owners, their credits and the requests between them, for one resource
// (seed 003's generic part: queuing, ordering, the owner hierarchy). What
// a credit means and when two clash is the CreditType's.
//
// Pure logic: no threads and no clock of its own (calls that may start or
// end a lease take `now`). Not thread-safe: one caller at a time
// (SharedCreditManager puts a lock around it).
//
// Owners form a tree of depth two. The root owns the whole resource; each
// sub-owner (an open file handle, an OST service) is granted credits by
// the root and keeps them after use, cached with a lease, until the root
// revokes them for a conflicting request, the lease runs out, or the owner
// goes. Revocation needs no call-back from the owner: everything an owner
// has is in this table, so the root cancels an unused credit itself, at
// once, and a held one at its last Put. Users take a credit through an owner with Get and give it back
// with Put; between the two the credit is held (pinned): a held credit is
// never revoked, its revocation waits for the Put.
//
// Order: a request waits behind every earlier request it conflicts with,
// whether that one is held or still waiting, so conflicting requests are
// granted in the order they arrived; requests that do not conflict pass
// each other freely.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "resource/credit.h"

namespace sfs::resource {

using Clock = std::chrono::steady_clock;
using OwnerId = uint32_t;
using Ticket = uint64_t;

constexpr OwnerId kRootOwner = 0;

enum class Outcome {
  kGranted,
  kDenied,  // non_block_local and no matching credit at the owner
  kError,   // the owner went away while the request waited
};

struct GetFlags {
  // Seed 003's non-block-local: deny at once unless the owner already has
  // a matching credit and nothing in use clashes; never queue, never ask
  // the master.
  // (Seed 003's non-block-remote has no user since layout changes stopped
  // asking for a credit: docs/design.md, "Layouts of open files".)
  bool non_block_local = false;
};

struct Tunables {
  // How long a sub-owner keeps an unused credit.
  Clock::duration lease = std::chrono::seconds(10);
  // Unused credits a sub-owner keeps at most; the least recently used go
  // first. Bounds the lists every request scans.
  size_t max_cached_per_owner = 16;
};

// Seed 003's owner state, as counts.
struct OwnerStats {
  size_t held = 0;         // credits its users hold now
  size_t cached = 0;       // credits granted to it and not in use
  size_t granted = 0;      // root only: credits granted to sub-owners
  size_t pending_in = 0;   // root only: sub-owners' requests waiting for it
  size_t pending_out = 0;  // its users' requests waiting
  uint64_t revoked = 0;    // its credits the root took back
};

class CreditManager {
 public:
  // Runs when a queued request is decided (granted, or kError).
  using Done = std::function<void(Outcome, Ticket)>;
  // Runs, at most once, when another request has to wait for the credit
  // this Get holds (seed 000's nrs_priority: the user holding it may hurry,
  // e.g. its I/O moves to the high-priority head; fs/extent_credits.h).
  using OnBlocking = std::function<void()>;
  // Work for the caller to run once it lets go of whatever serialises
  // calls: Done and OnBlocking call-backs, in the order they arose.
  using Callbacks = std::vector<std::function<void()>>;

  enum class State { kGranted, kQueued, kDenied, kError };
  struct GetResult {
    State state;
    Ticket ticket;  // for Put once granted (now, or when Done says so)
  };

  CreditManager(std::unique_ptr<CreditType> type, Tunables tunables);
  CreditManager(const CreditManager&) = delete;
  CreditManager& operator=(const CreditManager&) = delete;

  // A new sub-owner of the root. Ids of removed owners are used again
  // once nothing of theirs is left.
  OwnerId AddOwner(std::string name);
  // The owner's cached credits go at once, its held ones when put; its
  // queued requests end with kError.
  void RemoveOwner(OwnerId owner, Clock::time_point now);

  // Seed 003's credit_get. Granted (held now), queued (Done runs later),
  // or denied (non_block_local). `wanted.kind`/`id` must be this
  // manager's resource. `blocking` (may be null) belongs to the credit
  // once held: a request that must wait for it (it clashes with it, or
  // with the grant it was taken from) runs it, once; a request denied by
  // a flag does not.
  GetResult Get(OwnerId owner, const Credit& wanted, GetFlags flags, Done done,
                OnBlocking blocking, Clock::time_point now);
  // Seed 003's credit_put: releases a held credit. A sub-owner's credit
  // is then cached unless it is being revoked.
  void Put(Ticket ticket, Clock::time_point now);

  Callbacks TakeCallbacks();
  OwnerStats Stats(OwnerId owner) const;
  size_t owners() const;  // live sub-owners

 private:
  struct Grant {
    uint64_t id;
    OwnerId owner;
    Credit credit;
    uint32_t pins = 0;
    bool revoking = false;
    Clock::time_point lease_end;
    Clock::time_point last_used;
  };
  struct Hold {
    Ticket ticket;
    OwnerId owner;
    Credit credit;
    uint64_t grant;       // 0: the root's own, no grant
    OnBlocking blocking;  // null once run
  };
  struct Waiter {
    Ticket ticket;
    OwnerId owner;
    Credit credit;
    Done done;
    OnBlocking blocking;
  };
  struct Owner {
    std::string name;
    bool alive = true;
    uint64_t revoked = 0;
  };
  enum class Admit { kGranted, kWait, kDenied };

  Admit TryAdmit(Ticket ticket, OwnerId owner, const Credit& wanted, GetFlags flags,
                 OnBlocking& blocking, Clock::time_point now);
  bool ClashesWithHold(const Credit& wanted) const;
  // Queues the OnBlocking of every hold a request for `wanted` waits for:
  // those it clashes with, and those taken from a grant in `grants` (ids
  // of other owners' grants in use that must go first).
  void WaitFor(const Credit& wanted, const std::vector<uint64_t>& grants);
  bool ClashesWithOthersGrant(OwnerId owner, const Credit& credit) const;
  bool ClashesWithWaiter(Ticket self, const Credit& credit) const;
  void Revoke(Grant& grant);
  void Cancel(size_t grant_index);
  void TrimCache(OwnerId owner);
  void Expire(Clock::time_point now);
  void Pump(Clock::time_point now);

  const std::unique_ptr<CreditType> type_;
  const Tunables tunables_;
  std::vector<Owner> owners_;  // by OwnerId; [0] is the root
  size_t live_sub_owners_ = 0;
  std::vector<OwnerId> gone_;  // removed sub-owners, slots to take again
  std::vector<Grant> grants_;
  std::vector<Hold> holds_;
  std::deque<Waiter> waiting_;  // arrival order
  uint64_t next_grant_ = 1;
  Ticket next_ticket_ = 1;
  Callbacks callbacks_;
};

}  // namespace sfs::resource
