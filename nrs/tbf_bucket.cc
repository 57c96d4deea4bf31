#include "nrs/tbf_bucket.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace sfs::nrs {
namespace {

using Nanos = std::chrono::nanoseconds;

// A bucket earns rate x share units per nanosecond (share in 1/kShareOne),
// so a token is worth 10^9 x kShareOne units: exact for every share.
constexpr int64_t kUnitsPerToken = int64_t{1'000'000'000} * kShareOne;
constexpr uint64_t kByteWindowRate = 100;          // byte bursts span >= depth x 10 ms
// Waits are clamped to this (36 years) so a TimePoint never overflows.
constexpr int64_t kMaxWaitNs = int64_t{1} << 60;

// Time from `credit` to `threshold` at `per_ns` units per ns: positive to
// wait, negative (or zero) when the threshold was reached that long ago.
int64_t WaitFor(TbfCredit credit, TbfCredit threshold, uint64_t per_ns) {
  if (per_ns == 0) return credit >= threshold ? 0 : kMaxWaitNs;  // a share of 0 earns nothing
  // Both quotients are below 2^60 after clamping; 64-bit division when the
  // dividend fits is several times cheaper than the 128-bit one.
  auto divide = [per_ns](TbfCredit a) -> int64_t {
    if (a <= TbfCredit(std::numeric_limits<uint64_t>::max())) {
      return static_cast<int64_t>(static_cast<uint64_t>(a) / per_ns);
    }
    return static_cast<int64_t>(a / per_ns);
  };
  const TbfCredit max_credit = TbfCredit(kMaxWaitNs) * per_ns;
  if (credit >= threshold) return -divide(std::min(credit - threshold, max_credit));
  return divide(std::min(threshold - credit, max_credit) + per_ns - 1);
}

// A full bucket keeps up to one nanosecond's earnings above its capacity:
// less than one token, but what a deadline rounded up to a whole
// nanosecond overshoots by, so a service that is exactly on time loses no
// fraction of a token even with depth=1.
TbfCredit Capped(TbfCredit credit, TbfCredit capacity, uint64_t per_ns) {
  return std::min(credit, capacity + TbfCredit(std::max<uint64_t>(per_ns, 1)) - 1);
}

TbfCredit ByteThreshold(const TbfLimits& l, uint64_t length) {
  return std::min(TbfCredit(length) * kUnitsPerToken, l.byte_capacity);
}

}  // namespace

TbfLimits TbfLimitsOf(const TbfRule& rule, uint64_t rate) {
  TbfLimits limits;
  limits.rate = std::min(rate, kTbfMaxRate);
  limits.bps = rule.bps;
  limits.depth = std::max<uint32_t>(rule.depth, 1);
  limits.realtime = rule.realtime;
  limits.request_capacity = TbfCredit(limits.depth) * kUnitsPerToken;
  const uint64_t window_rate =
      limits.rate != 0 ? std::min(limits.rate, kByteWindowRate) : kByteWindowRate;
  const TbfCredit bytes =
      std::max<TbfCredit>(TbfCredit(limits.bps) * limits.depth / window_rate, 1);
  limits.byte_capacity = bytes * kUnitsPerToken;
  return limits;
}

int64_t NanosBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration_cast<Nanos>(to - from).count();
}

TbfBuckets TbfBuckets::Full(const TbfLimits& limits, TimePoint now) {
  TbfBuckets buckets;
  buckets.limits = limits;
  buckets.refilled = now;
  buckets.request_credit = limits.request_capacity;
  buckets.byte_credit = limits.byte_capacity;
  return buckets;
}

uint64_t TbfBuckets::RequestPerNs() const { return limits.rate * request_share; }
uint64_t TbfBuckets::BytePerNs() const { return limits.bps * byte_share; }

void TbfBuckets::Refill(TimePoint now, bool cap) {
  const TbfCredit elapsed = std::max<int64_t>(NanosBetween(refilled, now), 0);
  refilled = std::max(refilled, now);
  const TbfLimits& l = limits;
  if (l.rate != 0) {
    request_credit += elapsed * RequestPerNs();
    if (cap) {
      const TbfCredit capped = Capped(request_credit, l.request_capacity, RequestPerNs());
      lost_request_credit += request_credit - capped;
      request_credit = capped;
    }
  }
  if (l.bps != 0) {
    byte_credit += elapsed * BytePerNs();
    if (cap) {
      const TbfCredit capped = Capped(byte_credit, l.byte_capacity, BytePerNs());
      lost_byte_credit += byte_credit - capped;
      byte_credit = capped;
    }
  }
}

TbfBuckets::Lost TbfBuckets::TakeLost() {
  constexpr TbfCredit kPerMilli = kUnitsPerToken / 1000;
  constexpr TbfCredit kPerKib = TbfCredit(kUnitsPerToken) * 1024;
  constexpr TbfCredit kMax = std::numeric_limits<uint32_t>::max();
  Lost lost;
  const TbfCredit milli = std::min(lost_request_credit / kPerMilli, kMax);
  const TbfCredit kib = std::min(lost_byte_credit / kPerKib, kMax);
  lost_request_credit -= milli * kPerMilli;
  lost_byte_credit -= kib * kPerKib;
  // What could not be reported (over 2^32) is dropped, not carried for ever.
  lost_request_credit = std::min(lost_request_credit, kPerMilli);
  lost_byte_credit = std::min(lost_byte_credit, kPerKib);
  lost.milli_requests = static_cast<uint32_t>(milli);
  lost.kib = static_cast<uint32_t>(kib);
  return lost;
}

void TbfBuckets::AddCredit(uint64_t milli_requests, uint64_t kib) {
  if (limits.rate != 0) request_bonus += TbfCredit(milli_requests) * (kUnitsPerToken / 1000);
  if (limits.bps != 0) byte_bonus += TbfCredit(kib) * 1024 * kUnitsPerToken;
}

void TbfBuckets::SetShares(uint32_t request, uint32_t bytes) {
  request_share = std::min(request, kShareOne);
  byte_share = std::min(bytes, kShareOne);
}

void TbfBuckets::Adopt(const TbfLimits& next, bool cap) {
  const TbfLimits old = limits;
  limits = next;
  // A rate (or bps) of 0 means the bucket does not exist; a bucket whose
  // share is 0 exists and keeps its credit.
  auto adopt = [cap](TbfCredit& credit, uint64_t old_rate, uint64_t rate, uint64_t per_ns,
                     TbfCredit capacity) {
    if (rate == 0) {
      credit = 0;
    } else if (old_rate == 0) {
      credit = capacity;  // a bucket the class did not have starts full
    } else if (cap) {
      credit = Capped(credit, capacity, per_ns);
    }
  };
  adopt(request_credit, old.rate, limits.rate, RequestPerNs(), limits.request_capacity);
  adopt(byte_credit, old.bps, limits.bps, BytePerNs(), limits.byte_capacity);
}

bool TbfBuckets::FullAt(TimePoint now) const {
  TbfBuckets probe_credit = *this;
  probe_credit.Refill(now, /*cap=*/true);
  const TbfLimits& l = limits;
  return (l.rate == 0 || probe_credit.request_credit >= l.request_capacity) &&
         (l.bps == 0 || probe_credit.byte_credit >= l.byte_capacity);
}

bool TbfBuckets::Conforms(uint64_t length) const {
  return (limits.rate == 0 || request_credit + request_bonus >= kUnitsPerToken) &&
         (limits.bps == 0 || byte_credit + byte_bonus >= ByteThreshold(limits, length));
}

void TbfBuckets::Spend(uint64_t length) {
  // The bonus first: it is gone at the next hand-over anyway.
  auto spend = [](TbfCredit& credit, TbfCredit& bonus, TbfCredit cost) {
    const TbfCredit from_bonus = std::min(bonus, cost);
    bonus -= from_bonus;
    credit -= cost - from_bonus;
  };
  if (limits.rate != 0) spend(request_credit, request_bonus, kUnitsPerToken);
  if (limits.bps != 0) spend(byte_credit, byte_bonus, TbfCredit(length) * kUnitsPerToken);
}

TimePoint TbfBuckets::Deadline(uint64_t length) const {
  const TbfLimits& l = limits;
  int64_t wait = l.rate == 0 && l.bps == 0 ? 0 : -kMaxWaitNs;
  if (l.rate != 0) {
    wait = std::max(wait, WaitFor(request_credit + request_bonus, kUnitsPerToken, RequestPerNs()));
  }
  if (l.bps != 0) {
    wait = std::max(wait,
                    WaitFor(byte_credit + byte_bonus, ByteThreshold(l, length), BytePerNs()));
  }
  return refilled + Nanos(wait);
}

}  // namespace sfs::nrs
