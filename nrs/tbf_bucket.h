// Internal to nrs/: the token buckets of one TBF class (tbf_policy.cc), as
// arithmetic on credits that knows nothing of queues, heaps or rule sets.
//
// Token buckets are refilled lazily from the elapsed time, never by a timer.
// Credit is kept in exact integer units: a bucket earns `rate` units per
// nanosecond and a token is worth 10^9 units, so no fraction of a token is
// ever lost to rounding and a deadline is exact to the nanosecond (rounded
// up). A class has a request bucket (capacity depth tokens, one token per
// request) when its rule has rate=, and a byte bucket (bps= bytes/s, one
// token per byte of info.length) when it has bps=; its head request must
// conform to both.
//
// Byte bucket capacity: bps * depth / min(rate, 100) bytes (at least 1), the
// bytes earned in the time the request bucket takes to fill, but never a
// window shorter than depth x 10 ms; a bps-only rule uses that window too.
// The floor matters: with rate=10000 and depth 3 the window would be 0.3 ms,
// and any service latency longer than that (a timer wake-up, a busy core)
// would throw earned bytes away: measured on a mount, bps=50M then gave 41.
// A request bigger than the byte capacity conforms when the byte bucket is
// full and leaves it in debt, so the long-run bytes/s is exact whatever the
// request sizes.
//
// realtime=0 (Lustre's default): whenever a bucket is refilled its credit is
// capped at its capacity, so tokens earned while the service was late beyond
// a full bucket are lost (a backlogged class then gets less than its rate).
// realtime=1 (Lustre's NTRS_REALTIME, which neither caps ntoken at depth nor
// drops the sub-token remainder): while the class is backlogged its credit is
// not capped, so every token earned since its time base is paid back: after a
// late Dequeue the class is served back to back until it has caught up, and
// its deadline, which then lies in the past, sorts it before classes that are
// merely due now. The cap still applies when an idle class gets a request
// (idle time banks at most `depth`) and when the rule of an idle class
// changes (a backlogged realtime class keeps its credit across a rule
// change, so a change never costs it tokens it was owed). The policy
// applies this through the `cap` argument of Refill and Adopt.
#pragma once

#include <cstdint>

#include "nrs/request.h"
#include "nrs/tbf_rules.h"
#include "nrs/tbf_shares.h"

namespace sfs::nrs {

using TbfCredit = __int128;  // signed: a byte bucket may be in debt

// A class's numbers, copied from its rule.
struct TbfLimits {
  uint64_t rate = 0;  // requests/s; 0 = no request bucket
  uint64_t bps = 0;   // bytes/s; 0 = no byte bucket
  uint32_t depth = 3;
  bool realtime = false;
  TbfCredit request_capacity = 0;  // credit units
  TbfCredit byte_capacity = 0;
};

// The limits of `rule` earning `rate` requests/s: the rule's own rate=, or
// for the default rule the tunable when it has none.
TbfLimits TbfLimitsOf(const TbfRule& rule, uint64_t rate);

// Signed, so that a clock that went back shows.
int64_t NanosBetween(TimePoint from, TimePoint to);

// The buckets of one class. A plain value: FullAt probes a copy.
struct TbfBuckets {
  TbfLimits limits;
  TimePoint refilled{};  // the credits below are as of this time
  TbfCredit request_credit = 0;
  TbfCredit byte_credit = 0;
  uint32_t request_share = kShareOne;  // of limits.rate, in 1/kShareOne
  uint32_t byte_share = kShareOne;     // of limits.bps
  // Credit thrown away by capping since the last TakeLost (filesystem
  // scope hands it to the OSTs where the class is busy).
  TbfCredit lost_request_credit = 0;
  TbfCredit lost_byte_credit = 0;
  // Credit handed over from other OSTs (AddCredit) until the class is next
  // coordinated: spent before the bucket's own, never capped, and dropped
  // (DropBonus) when the next hand-over comes, so it never circulates for
  // more than one round of the epoch data's window.
  TbfCredit request_bonus = 0;
  TbfCredit byte_bonus = 0;

  // Buckets of `limits`, full as of `now`.
  static TbfBuckets Full(const TbfLimits& limits, TimePoint now);

  // Brings the credits up to `now` (a clock that went back adds nothing);
  // with `cap`, each is then capped at its capacity.
  void Refill(TimePoint now, bool cap);
  // Switches to `next`. A bucket `next` lacks is emptied; one the old limits
  // lacked starts full; otherwise the credit is kept, capped at the new
  // capacity with `cap`. Callers Refill first, so credit earned so far counts
  // at the old numbers.
  void Adopt(const TbfLimits& next, bool cap);
  // New shares from `refilled` on. Callers Refill first, so credit earned
  // so far counts at the old shares.
  void SetShares(uint32_t request, uint32_t bytes);
  // The credit lost to capping since the last call, in thousandths of a
  // request and in KiB; fractions stay for the next call.
  struct Lost {
    uint32_t milli_requests = 0;
    uint32_t kib = 0;
  };
  Lost TakeLost();
  // Adds credit handed over from other OSTs to the bonus.
  void AddCredit(uint64_t milli_requests, uint64_t kib);
  // Forgets what is left of the bonus.
  void DropBonus() { request_bonus = byte_bonus = 0; }
  // What each bucket earns per nanosecond, in credit units.
  uint64_t RequestPerNs() const;
  uint64_t BytePerNs() const;
  // Whether both buckets, refilled (and capped) to `now`, would be full.
  bool FullAt(TimePoint now) const;
  // Whether a request of `length` bytes may go on the credit as of `refilled`.
  bool Conforms(uint64_t length) const;
  // Pays for a request of `length` bytes. REQUIRES: Conforms(length).
  void Spend(uint64_t length);
  // When a request of `length` bytes conforms on the credit as of `refilled`:
  // exact to the nanosecond (rounded up), and in the past when the credit
  // passed the threshold that long ago (so an owed realtime class sorts
  // first). `refilled` itself when neither bucket exists.
  TimePoint Deadline(uint64_t length) const;
};

}  // namespace sfs::nrs
