#include "nrs/epoch_groups.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace sfs::nrs {

namespace {

// Where `key` falls in the window that starts at `window` (wrapping).
uint64_t RankOf(uint64_t key, uint64_t window) { return key - window; }

}  // namespace

std::vector<uint8_t> EncodeEpochGroups(EpochGroups groups) {
  // MergeByKey keeps the smallest keys: hand it ranks, then restore keys.
  for (EpochGroupEntry& e : groups.entries) e.key = RankOf(e.key, groups.window);
  std::vector<EpochGroupEntry> merged = MergeByKey(
      std::move(groups.entries), kEpochGroupEntries, [](EpochGroupEntry& m, const EpochGroupEntry& e) {
        m.bytes = e.bytes > std::numeric_limits<uint64_t>::max() - m.bytes
                      ? std::numeric_limits<uint64_t>::max()
                      : m.bytes + e.bytes;
        m.requests = SaturatingAdd(m.requests, e.requests);
        m.waited_us = std::max(m.waited_us, e.waited_us);
      });
  std::vector<uint8_t> out;
  out.reserve(kEpochGroupsHeaderBytes + merged.size() * kEpochGroupEntryBytes);
  PutLe32(&out, groups.reporters);
  PutLe64(&out, static_cast<uint64_t>(groups.epoch));
  PutLe64(&out, groups.window);
  for (const EpochGroupEntry& e : merged) {
    PutLe64(&out, e.key + groups.window);
    PutLe64(&out, e.bytes);
    PutLe32(&out, e.requests);
    PutLe32(&out, e.waited_us);
  }
  return out;
}

EpochGroups DecodeEpochGroups(std::span<const uint8_t> payload) {
  EpochGroups groups;
  if (payload.size() < kEpochGroupsHeaderBytes) return groups;
  groups.reporters = GetLe32(payload.data());
  groups.epoch = static_cast<Epoch>(GetLe64(payload.data() + 4));
  groups.window = GetLe64(payload.data() + 12);
  for (size_t at = kEpochGroupsHeaderBytes; at + kEpochGroupEntryBytes <= payload.size() &&
                                            groups.entries.size() < kEpochGroupEntries;
       at += kEpochGroupEntryBytes) {
    const uint8_t* p = payload.data() + at;
    EpochGroupEntry e{GetLe64(p), GetLe64(p + 8), GetLe32(p + 16), GetLe32(p + 20)};
    if (!groups.entries.empty() &&
        RankOf(groups.entries.back().key, groups.window) >= RankOf(e.key, groups.window)) {
      break;
    }
    groups.entries.push_back(e);
  }
  return groups;
}

std::vector<uint8_t> CombineEpochGroups(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return EncodeEpochGroups(CombineLatestWindow(DecodeEpochGroups(a), DecodeEpochGroups(b)));
}

bool IsAgingEpoch(Epoch epoch) { return epoch > 0 && epoch % kEpochAgingPeriod == 0; }

uint64_t NextEpochGroupWindow(const EpochGroups& reduced, Epoch epoch) {
  if (!IsAgingEpoch(epoch) || reduced.entries.size() < kEpochGroupEntries) return reduced.window;
  return reduced.entries.back().key + 1;
}

std::optional<uint64_t> ChooseEpochGroup(const EpochGroups& groups, Epoch epoch) {
  const bool aging = IsAgingEpoch(epoch);
  // "Better" sorts later; the key is negated so the smaller key wins ties.
  auto rank = [aging](const EpochGroupEntry& e) {
    const uint64_t inverse_key = std::numeric_limits<uint64_t>::max() - e.key;
    return aging ? std::make_tuple(uint64_t{e.waited_us}, e.bytes, inverse_key)
                 : std::make_tuple(e.bytes, uint64_t{e.waited_us}, inverse_key);
  };
  const EpochGroupEntry* best = nullptr;
  for (const EpochGroupEntry& e : groups.entries) {
    if (e.requests == 0) continue;
    if (best == nullptr || rank(*best) < rank(e)) best = &e;
  }
  if (best == nullptr) return std::nullopt;
  return best->key;
}

uint64_t EpochGroupKeyOfJobid(std::string_view jobid) {
  Fnv1a64 hash;
  hash.Mix('j');
  hash.Mix(jobid);
  return hash.value();
}

uint64_t EpochGroupKeyOfUid(uint32_t uid) {
  Fnv1a64 hash;
  hash.Mix('u');
  hash.MixLe32(uid);
  return hash.value();
}

void EpochServeOrder::Served(bool of_chosen, bool chosen_queued) {
  if (of_chosen) {
    served_chosen_++;
  } else if (chosen_queued) {
    violations_++;
  }
  if (first_pending_ && of_chosen) epochs_chosen_first_++;
  first_pending_ = false;
}

std::string EpochServeOrder::Describe() const {
  return "served_chosen=" + std::to_string(served_chosen_) +
         " order_violations=" + std::to_string(violations_) +
         " epochs_chosen_first=" + std::to_string(epochs_chosen_first_);
}

}  // namespace sfs::nrs
