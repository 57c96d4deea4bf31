#include "nrs/tbf_shares.h"

#include <algorithm>

namespace sfs::nrs {

namespace {

// Where `key` falls in the window that starts at `window` (wrapping).
uint64_t RankOf(uint64_t key, uint64_t window) { return key - window; }

}  // namespace

std::vector<uint8_t> EncodeTbfShares(TbfShares shares) {
  // MergeByKey keeps the smallest keys: hand it ranks, then restore keys.
  for (TbfShareEntry& e : shares.entries) e.key = RankOf(e.key, shares.window);
  const std::vector<TbfShareEntry> merged = MergeByKey(
      std::move(shares.entries), kTbfShareEntries, [](TbfShareEntry& m, const TbfShareEntry& e) {
        m.demand = SaturatingAdd(m.demand, e.demand);
        m.demand_kib = SaturatingAdd(m.demand_kib, e.demand_kib);
        m.served = SaturatingAdd(m.served, e.served);
        m.served_kib = SaturatingAdd(m.served_kib, e.served_kib);
        m.lost_milli = SaturatingAdd(m.lost_milli, e.lost_milli);
        m.lost_kib = SaturatingAdd(m.lost_kib, e.lost_kib);
      });
  std::vector<uint8_t> out;
  out.reserve(kTbfSharesHeaderBytes + merged.size() * kTbfShareEntryBytes);
  PutLe32(&out, shares.reporters);
  PutLe64(&out, static_cast<uint64_t>(shares.epoch));
  PutLe64(&out, shares.window);
  for (const TbfShareEntry& e : merged) {
    PutLe64(&out, e.key + shares.window);
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
  if (payload.size() < kTbfSharesHeaderBytes) return shares;
  shares.reporters = GetLe32(payload.data());
  shares.epoch = static_cast<Epoch>(GetLe64(payload.data() + 4));
  shares.window = GetLe64(payload.data() + 12);
  for (size_t at = kTbfSharesHeaderBytes; at + kTbfShareEntryBytes <= payload.size() &&
                                          shares.entries.size() < kTbfShareEntries;
       at += kTbfShareEntryBytes) {
    const uint8_t* p = payload.data() + at;
    TbfShareEntry e{GetLe64(p),      GetLe32(p + 8),  GetLe32(p + 12), GetLe32(p + 16),
                    GetLe32(p + 20), GetLe32(p + 24), GetLe32(p + 28)};
    if (!shares.entries.empty() &&
        RankOf(shares.entries.back().key, shares.window) >= RankOf(e.key, shares.window)) {
      break;
    }
    shares.entries.push_back(e);
  }
  return shares;
}

std::vector<uint8_t> CombineTbfShares(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return EncodeTbfShares(CombineLatestWindow(DecodeTbfShares(a), DecodeTbfShares(b)));
}

const TbfShareEntry* FindTbfShare(const TbfShares& shares, uint64_t key) {
  const uint64_t rank = RankOf(key, shares.window);
  auto it = std::lower_bound(shares.entries.begin(), shares.entries.end(), rank,
                             [&](const TbfShareEntry& e, uint64_t r) {
                               return RankOf(e.key, shares.window) < r;
                             });
  return it != shares.entries.end() && it->key == key ? &*it : nullptr;
}

bool TbfSharesCover(const TbfShares& reduced, uint64_t key) {
  if (reduced.entries.size() < kTbfShareEntries) return true;
  return RankOf(key, reduced.window) <= RankOf(reduced.entries.back().key, reduced.window);
}

uint64_t NextTbfShareWindow(const TbfShares& reduced) {
  if (reduced.entries.size() < kTbfShareEntries) return reduced.window;
  return reduced.entries.back().key + 1;
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
