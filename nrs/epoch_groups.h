// Internal to nrs/: the policy data of the `epoch` policy (seed 002's use
// case, issue 10 item 2). Each epoch every OST reports, per group (a job id
// or a uid) with requests queued there, the bytes and requests waiting and
// how long its oldest request has waited; the reduction sums bytes and
// requests and keeps the longest wait; every OST then derives the same
// chosen group from the reduction and the epoch number
// (ChooseEpochGroup), and serves that group first.
//
// Payload of an EpochKind::kEpochGroups section: u32 reporters (how many
// OSTs' epoch policy reported; sums), u64 epoch (the one the data was
// reported in), u64 window (a group key), then entries of 24 bytes, at most
// kEpochGroupEntries (84, so a section fits kMaxEpochPayload): u64 key,
// u64 waiting bytes (sums, saturating), u32 waiting requests (sums,
// saturating), u32 microseconds the oldest request has waited (the
// maximum; saturates at about 71 minutes), little endian. Entries are
// sorted by their place in the window, (key - window) mod 2^64, and when
// more groups wait than fit, the first kEpochGroupEntries from the window
// on are kept, at each OST and in every reduction: a rule on keys, so the
// reduction stays associative and commutative.
//
// The window moves on: after an aging epoch whose reduction was full,
// every OST starts the next window just past its last key
// (NextEpochGroupWindow), so with G groups waiting every one is in the
// data at least once every ceil(G / 84) aging epochs. The reduction keeps
// only the inputs of the latest (epoch, window), summing the others'
// reporters: data reported in an older epoch (an OST that is rejoining,
// or whose policy just started) is stale, and two windows would cut by two
// orders.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nrs/epoch_data.h"

namespace sfs::nrs {

struct EpochGroupEntry {
  uint64_t key = 0;
  uint64_t bytes = 0;
  uint32_t requests = 0;
  uint32_t waited_us = 0;
  bool operator==(const EpochGroupEntry&) const = default;
};

inline constexpr size_t kEpochGroupEntryBytes = 24;
inline constexpr size_t kEpochGroupsHeaderBytes = 20;
inline constexpr size_t kEpochGroupEntries =
    (kMaxEpochPayload - kEpochGroupsHeaderBytes) / kEpochGroupEntryBytes;

struct EpochGroups {
  uint32_t reporters = 0;
  Epoch epoch = kFirstEpoch;
  uint64_t window = 0;
  std::vector<EpochGroupEntry> entries;  // sorted by place in the window, keys unique
};

// Sorts `entries` by place in the window, merges equal keys, keeps the
// first kEpochGroupEntries.
std::vector<uint8_t> EncodeEpochGroups(EpochGroups groups);
// Bytes that are not whole entries are ignored; entries out of window
// order end the list.
EpochGroups DecodeEpochGroups(std::span<const uint8_t> payload);
std::vector<uint8_t> CombineEpochGroups(std::span<const uint8_t> a, std::span<const uint8_t> b);
// The window of the data every OST reports in the epoch after `epoch`,
// from the reduction that started `epoch`: past the last key kept when
// `epoch` is an aging epoch and the reduction was full, else the same.
uint64_t NextEpochGroupWindow(const EpochGroups& reduced, Epoch epoch);

// Every kEpochAgingPeriod-th epoch chooses by wait instead of by bytes, so
// a group with little data is not starved by one that always has more.
inline constexpr int64_t kEpochAgingPeriod = 4;
// Whether `epoch` chooses by wait (a positive multiple of the period).
bool IsAgingEpoch(Epoch epoch);

// The group every OST serves first in `epoch`, or none when no group waits.
// Usually the one with the most waiting bytes, ties by the longest wait,
// then the smallest key; in epochs that are multiples of kEpochAgingPeriod,
// the one that has waited longest, ties by bytes, then key. Bound: a
// request that is the oldest waiting anywhere has its group chosen within
// kEpochAgingPeriod epochs, and the chosen group's oldest request is served
// first on its OST, so a request with k requests older than it waiting
// anywhere is chosen within kEpochAgingPeriod x (k + 1) epochs while at
// most kEpochGroupEntries groups wait; with G groups, within
// kEpochAgingPeriod x ceil(G / kEpochGroupEntries) x (k + 1) (the window).
std::optional<uint64_t> ChooseEpochGroup(const EpochGroups& groups, Epoch epoch);

// What one head's epoch policy served, counted to check its promise on a
// mount (shown in nrs_policies): the chosen group is served first, and
// another group's request only while the chosen one has nothing queued on
// that head. The policy tells it, per request served, whether that request
// was of the chosen group (from the request itself, not from how it was
// picked) and whether the chosen group had a request queued then.
class EpochServeOrder {
 public:
  // An epoch starts: its first request served here says whether the
  // chosen group was served first in it.
  void StartEpoch() { first_pending_ = true; }
  void Served(bool of_chosen, bool chosen_queued);

  uint64_t served_chosen() const { return served_chosen_; }
  // Another group's requests served while the chosen group had one queued
  // here: 0 unless the order is broken.
  uint64_t violations() const { return violations_; }
  // Epochs whose first request served here was the chosen group's.
  uint64_t epochs_chosen_first() const { return epochs_chosen_first_; }
  // "served_chosen=N order_violations=N epochs_chosen_first=N".
  std::string Describe() const;

 private:
  bool first_pending_ = false;
  uint64_t served_chosen_ = 0;
  uint64_t violations_ = 0;
  uint64_t epochs_chosen_first_ = 0;
};

// The group key every OST computes alike (FNV-1a, little endian): by job id
// or by uid; the two never collide by construction (a tag byte first).
uint64_t EpochGroupKeyOfJobid(std::string_view jobid);
uint64_t EpochGroupKeyOfUid(uint32_t uid);

}  // namespace sfs::nrs
