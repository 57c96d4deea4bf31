// Internal to nrs/: the policy data of the `epoch` policy (seed 002's use
// case, issue 10 item 2). Each epoch every OST reports, per group (a job id
// or a uid) with requests queued there, the bytes and requests waiting and
// how long its oldest request has waited; the reduction sums bytes and
// requests and keeps the longest wait; every OST then derives the same
// chosen group from the reduction and the epoch number
// (ChooseEpochGroup), and serves that group first.
//
// Payload of an EpochKind::kEpochGroups section: u32 reporters (how many
// OSTs' epoch policy reported; sums), then entries of 24 bytes sorted by
// group key, at most kEpochGroupEntries (84, so a section fits
// kMaxEpochPayload): u64 key, u64 waiting bytes (sums, saturating), u32
// waiting requests (sums, saturating), u32 microseconds the oldest request
// has waited (the maximum; saturates at about 71 minutes), little endian.
// When more groups wait than fit, the ones with the smallest keys are kept,
// at each OST and in every reduction (a rule on keys, so the reduction
// stays associative and commutative); a group cut from the data is never
// chosen but is still served whenever the chosen group has nothing queued.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
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
inline constexpr size_t kEpochGroupEntries = (kMaxEpochPayload - 4) / kEpochGroupEntryBytes;

struct EpochGroups {
  uint32_t reporters = 0;
  std::vector<EpochGroupEntry> entries;  // sorted by key, keys unique
};

// Sorts by key, merges equal keys, keeps the kEpochGroupEntries smallest.
std::vector<uint8_t> EncodeEpochGroups(uint32_t reporters, std::vector<EpochGroupEntry> entries);
// Bytes that are not whole entries are ignored; entries out of key order
// end the list.
EpochGroups DecodeEpochGroups(std::span<const uint8_t> payload);
std::vector<uint8_t> CombineEpochGroups(std::span<const uint8_t> a, std::span<const uint8_t> b);

// Every kEpochAgingPeriod-th epoch chooses by wait instead of by bytes, so
// a group with little data is not starved by one that always has more.
inline constexpr int64_t kEpochAgingPeriod = 4;

// The group every OST serves first in `epoch`, or none when no group waits.
// Usually the one with the most waiting bytes, ties by the longest wait,
// then the smallest key; in epochs that are multiples of kEpochAgingPeriod,
// the one that has waited longest, ties by bytes, then key. Bound: a
// request that is the oldest waiting anywhere has its group chosen within
// kEpochAgingPeriod epochs, and the chosen group's oldest request is served
// first on its OST, so a request with k requests older than it waiting
// anywhere is chosen within kEpochAgingPeriod x (k + 1) epochs.
std::optional<uint64_t> ChooseEpochGroup(const EpochGroups& groups, Epoch epoch);

// The group key every OST computes alike (FNV-1a, little endian): by job id
// or by uid; the two never collide by construction (a tag byte first).
uint64_t EpochGroupKeyOfJobid(std::string_view jobid);
uint64_t EpochGroupKeyOfUid(uint32_t uid);

}  // namespace sfs::nrs
