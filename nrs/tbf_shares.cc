#include "nrs/tbf_shares.h"

#include <algorithm>

namespace sfs::nrs {

std::vector<uint8_t> EncodeTbfShares(uint32_t reporters, std::vector<TbfShareEntry> entries) {
  const std::vector<TbfShareEntry> merged =
      MergeByKey(std::move(entries), kTbfShareEntries, [](TbfShareEntry& m, const TbfShareEntry& e) {
        m.demand = SaturatingAdd(m.demand, e.demand);
        m.demand_kib = SaturatingAdd(m.demand_kib, e.demand_kib);
        m.served = SaturatingAdd(m.served, e.served);
        m.served_kib = SaturatingAdd(m.served_kib, e.served_kib);
        m.lost_milli = SaturatingAdd(m.lost_milli, e.lost_milli);
        m.lost_kib = SaturatingAdd(m.lost_kib, e.lost_kib);
      });
  std::vector<uint8_t> out;
  out.reserve(4 + merged.size() * kTbfShareEntryBytes);
  PutLe32(&out, reporters);
  for (const TbfShareEntry& e : merged) {
    PutLe64(&out, e.key);
    PutLe32(&out, e.demand);
    PutLe32(&out, e.demand_kib);
    PutLe32(&out, e.served);
    PutLe32(&out, e.served_kib);
    PutLe32(&out, e.lost_milli);
    PutLe32(&out, e.lost_kib);
  }
  return out;
}

TbfShares DecodeTbfShares(std::span<const uint8_t> payload) {
  TbfShares shares;
  if (payload.size() < 4) return shares;
  shares.reporters = GetLe32(payload.data());
  for (size_t at = 4; at + kTbfShareEntryBytes <= payload.size() &&
                      shares.entries.size() < kTbfShareEntries;
       at += kTbfShareEntryBytes) {
    const uint8_t* p = payload.data() + at;
    TbfShareEntry e{GetLe64(p),      GetLe32(p + 8),  GetLe32(p + 12), GetLe32(p + 16),
                    GetLe32(p + 20), GetLe32(p + 24), GetLe32(p + 28)};
    if (!shares.entries.empty() && shares.entries.back().key >= e.key) break;
    shares.entries.push_back(e);
  }
  return shares;
}

std::vector<uint8_t> CombineTbfShares(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  TbfShares x = DecodeTbfShares(a);
  TbfShares y = DecodeTbfShares(b);
  x.entries.insert(x.entries.end(), y.entries.begin(), y.entries.end());
  return EncodeTbfShares(SaturatingAdd(x.reporters, y.reporters), std::move(x.entries));
}

const TbfShareEntry* FindTbfShare(const std::vector<TbfShareEntry>& entries, uint64_t key) {
  auto it = std::lower_bound(entries.begin(), entries.end(), key,
                             [](const TbfShareEntry& e, uint64_t k) { return e.key < k; });
  return it != entries.end() && it->key == key ? &*it : nullptr;
}

uint32_t TbfShareOf(uint64_t mine, uint64_t total, uint32_t reporters) {
  if (total == 0) return kShareOne / std::max<uint32_t>(reporters, 1);
  if (mine == 0) return 0;
  mine = std::min(mine, total);
  const uint64_t share = (mine * kShareOne + total / 2) / total;
  return static_cast<uint32_t>(std::clamp<uint64_t>(share, 1, kShareOne));
}

uint64_t TbfClassKeyHash(uint32_t uid, uint32_t gid, uint8_t op, std::string_view jobid) {
  Fnv1a64 hash;
  hash.MixLe32(uid);
  hash.MixLe32(gid);
  hash.Mix(op);
  hash.Mix(jobid);
  return hash.value();
}

}  // namespace sfs::nrs
