#include "nrs/epoch_groups.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace sfs::nrs {

std::vector<uint8_t> EncodeEpochGroups(uint32_t reporters, std::vector<EpochGroupEntry> entries) {
  const std::vector<EpochGroupEntry> merged = MergeByKey(
      std::move(entries), kEpochGroupEntries, [](EpochGroupEntry& m, const EpochGroupEntry& e) {
        m.bytes = e.bytes > std::numeric_limits<uint64_t>::max() - m.bytes
                      ? std::numeric_limits<uint64_t>::max()
                      : m.bytes + e.bytes;
        m.requests = SaturatingAdd(m.requests, e.requests);
        m.waited_us = std::max(m.waited_us, e.waited_us);
      });
  std::vector<uint8_t> out;
  out.reserve(4 + merged.size() * kEpochGroupEntryBytes);
  PutLe32(&out, reporters);
  for (const EpochGroupEntry& e : merged) {
    PutLe64(&out, e.key);
    PutLe64(&out, e.bytes);
    PutLe32(&out, e.requests);
    PutLe32(&out, e.waited_us);
  }
  return out;
}

EpochGroups DecodeEpochGroups(std::span<const uint8_t> payload) {
  EpochGroups groups;
  if (payload.size() < 4) return groups;
  groups.reporters = GetLe32(payload.data());
  for (size_t at = 4; at + kEpochGroupEntryBytes <= payload.size() &&
                      groups.entries.size() < kEpochGroupEntries;
       at += kEpochGroupEntryBytes) {
    const uint8_t* p = payload.data() + at;
    EpochGroupEntry e{GetLe64(p), GetLe64(p + 8), GetLe32(p + 16), GetLe32(p + 20)};
    if (!groups.entries.empty() && groups.entries.back().key >= e.key) break;
    groups.entries.push_back(e);
  }
  return groups;
}

std::vector<uint8_t> CombineEpochGroups(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  EpochGroups x = DecodeEpochGroups(a);
  EpochGroups y = DecodeEpochGroups(b);
  x.entries.insert(x.entries.end(), y.entries.begin(), y.entries.end());
  return EncodeEpochGroups(SaturatingAdd(x.reporters, y.reporters), std::move(x.entries));
}

std::optional<uint64_t> ChooseEpochGroup(const EpochGroups& groups, Epoch epoch) {
  const bool aging = epoch > 0 && epoch % kEpochAgingPeriod == 0;
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

}  // namespace sfs::nrs
