// Internal to nrs/: filesystem-wide TBF (nrs_tbf_scope=fs). Each epoch
// every OST's TBF policy reports, per class active there, its demand (the
// requests and KiB that arrived during the epoch plus those still queued)
// what it served, and the tokens its buckets lost to their cap (earned
// where the class had nothing to send); the reduction sums them per class
// across the OSTs; each OST's bucket of a class then earns the rule's rate
// (and bps) times its share of the class's demand, and gets that share of
// the lost tokens, so the shares of a class add up to the rule's numbers
// and an OST where the class is idle hands its share to those where it is
// busy. Without the hand-over, tokens an idle OST earned during an epoch
// are lost while the busy ones wait: measured, 4 writers spread at random
// over 4 OSTs got 174 of 200 req/s with 50 ms epochs.
//
// Payload of an EpochKind::kTbfShares section: u32 reporters (how many
// OSTs' TBF reported; sums), u64 epoch (the one the data was reported in),
// u64 window (a class key), then entries of 32 bytes, at most
// kTbfShareEntries (63, so a section fits kMaxEpochPayload): u64 key, u32
// demand, u32 demand KiB, u32 served requests, u32 served KiB, u32 lost
// thousandths of a request, u32 lost KiB (little endian, sums saturate;
// demand in 1/16 units, smoothed over reports). Entries are sorted by
// their place in the window, (key - window) mod 2^64, and when more
// classes are busy than fit, the first kTbfShareEntries from the window on
// are kept, at each OST and in every reduction: a rule on keys, so the
// reduction stays associative and commutative, and a class cut anywhere is
// cut everywhere.
//
// The window moves on (as the epoch policy's, epoch_groups.h, but every
// epoch): after a full reduction every OST starts the next window just
// past its last key (NextTbfShareWindow), so with G classes busy each is
// in the data at least once every ceil(G / 63) epochs. A reduction speaks
// for the keys it covers (TbfSharesCover: all of them when it is not full,
// else those from the window to its last key); a covered class it lacks is
// idle everywhere. A class it does not cover keeps its shares and goes on
// counting its demand, service and lost tokens until it is covered. The
// reduction keeps only the inputs of the latest (epoch, window), summing
// the others' reporters: an OST whose policy just started (or rejoined)
// reports with an old tag, and two windows would cut by two orders.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nrs/epoch_data.h"
#include "nrs/request.h"

namespace sfs::nrs {

struct TbfShareEntry {
  uint64_t key = 0;
  uint32_t demand = 0;      // requests
  uint32_t demand_kib = 0;  // KiB, rounded up
  uint32_t served = 0;
  uint32_t served_kib = 0;
  uint32_t lost_milli = 0;  // thousandths of a request token
  uint32_t lost_kib = 0;
  bool operator==(const TbfShareEntry&) const = default;
};

inline constexpr size_t kTbfShareEntryBytes = 32;
inline constexpr size_t kTbfSharesHeaderBytes = 20;
inline constexpr size_t kTbfShareEntries =
    (kMaxEpochPayload - kTbfSharesHeaderBytes) / kTbfShareEntryBytes;

struct TbfShares {
  uint32_t reporters = 0;
  Epoch epoch = kFirstEpoch;
  uint64_t window = 0;
  std::vector<TbfShareEntry> entries;  // sorted by place in the window, keys unique
};

// A bucket's share of its rule's numbers, in 1/kShareOne.
inline constexpr uint32_t kShareOne = 1024;

// Sorts the entries by place in the window, merges equal keys, keeps the
// first kTbfShareEntries.
std::vector<uint8_t> EncodeTbfShares(TbfShares shares);
// Bytes that are not whole entries are ignored; entries out of window
// order end the list.
TbfShares DecodeTbfShares(std::span<const uint8_t> payload);
std::vector<uint8_t> CombineTbfShares(std::span<const uint8_t> a, std::span<const uint8_t> b);
// The entry of `key` in `shares.entries`, or null.
const TbfShareEntry* FindTbfShare(const TbfShares& shares, uint64_t key);
// Whether `reduced` speaks for `key`: it would hold the key's entry had any
// OST reported one.
bool TbfSharesCover(const TbfShares& reduced, uint64_t key);
// The window of the data every OST reports in the epoch after the one
// `reduced` started: past its last key when it is full, else the same.
uint64_t NextTbfShareWindow(const TbfShares& reduced);

// An OST's share of a class: mine/total rounded to the nearest 1/kShareOne
// (at least 1/kShareOne when mine > 0, so demand is never starved by
// rounding); an equal 1/reporters when nobody reported demand.
uint32_t TbfShareOf(uint64_t mine, uint64_t total, uint32_t reporters);

// The class key every OST computes alike (FNV-1a over the fields, little
// endian): the same on every machine and in every run.
uint64_t TbfClassKeyHash(uint32_t uid, uint32_t gid, uint8_t op, std::string_view jobid);

}  // namespace sfs::nrs
