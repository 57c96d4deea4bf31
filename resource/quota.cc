#include "resource/quota.h"

#include <algorithm>
#include <limits>

namespace sfs::resource {
namespace {

// What "no limit" stands for in a pool's total: more than any disk, with
// room to add usage to it without overflow.
constexpr int64_t kUnlimited = std::numeric_limits<int64_t>::max() / 4;

// Usage above the soft limit whose grace ran out: from then on the soft
// limit is enforced as a hard one (nothing more, until usage falls).
bool GraceOver(uint64_t soft, int64_t used, int64_t grace_end, int64_t now_sec) {
  return soft != 0 && used > static_cast<int64_t>(soft) && grace_end != 0 && now_sec >= grace_end;
}

int64_t Limit(uint64_t soft, uint64_t hard, bool grace_over) {
  int64_t limit = hard != 0 ? static_cast<int64_t>(std::min<uint64_t>(hard, kUnlimited)) : kUnlimited;
  if (grace_over) limit = std::min(limit, static_cast<int64_t>(soft));
  return limit;
}

}  // namespace

QuotaEnforcer::Pool::Pool(const QuotaTunables& tunables, uint64_t generation)
    : generation(generation), blocks(0, tunables.blocks), inodes(0, tunables.inodes) {
  inodes.AddOwner("mdt");
}

QuotaEnforcer::QuotaEnforcer(QuotaTunables tunables) : tunables_(tunables) {}

void QuotaEnforcer::SetBlockOwners(size_t count) {
  if (count <= block_owners_) return;
  for (auto& [id, pool] : pools_) {
    for (size_t i = block_owners_; i < count; ++i) pool->blocks.AddOwner("ost" + std::to_string(i));
  }
  block_owners_ = count;
}

void QuotaEnforcer::SetLimits(const QuotaId& id, const QuotaLimits& limits, int64_t now_sec) {
  if (!limits.any()) {
    pools_.erase(id);  // reservations in flight end against nothing
    return;
  }
  auto& pool = pools_[id];
  if (!pool) {
    pool = std::make_unique<Pool>(tunables_, next_generation_++);
    for (size_t i = 0; i < block_owners_; ++i) pool->blocks.AddOwner("ost" + std::to_string(i));
  }
  pool->limits = limits;
  Retotal(id, *pool, now_sec, /*force=*/true);
}

void QuotaEnforcer::Retotal(const QuotaId& id, Pool& pool, int64_t now_sec, bool force) {
  const QuotaUsage usage = usage_.count(id) ? usage_.at(id) : QuotaUsage{};
  const bool block_over =
      GraceOver(pool.limits.block_soft, usage.bytes, usage.block_grace_end, now_sec);
  const bool inode_over =
      GraceOver(pool.limits.inode_soft, usage.inodes, usage.inode_grace_end, now_sec);
  if (force || block_over != pool.block_grace_over) {
    pool.block_grace_over = block_over;
    const int64_t limit = Limit(pool.limits.block_soft, pool.limits.block_hard, block_over);
    pool.blocks.SetTotal(static_cast<uint64_t>(std::max<int64_t>(0, limit - usage.bytes)));
    // A total below zero (usage already above the limit) is a debt the
    // pool pays back from what is released: SetTotal cannot say it.
    if (limit < usage.bytes) pool.blocks.Charge(usage.bytes - limit);
  }
  if (force || inode_over != pool.inode_grace_over) {
    pool.inode_grace_over = inode_over;
    const int64_t limit = Limit(pool.limits.inode_soft, pool.limits.inode_hard, inode_over);
    pool.inodes.SetTotal(static_cast<uint64_t>(std::max<int64_t>(0, limit - usage.inodes)));
    if (limit < usage.inodes) pool.inodes.Charge(usage.inodes - limit);
  }
}

void QuotaEnforcer::Observe(const QuotaId& id, const QuotaUsage& usage, int64_t now_sec) {
  QuotaUsage& known = usage_[id];
  const QuotaUsage before = known;
  known = usage;
  auto it = pools_.find(id);
  if (it == pools_.end()) return;
  Pool& pool = *it->second;
  pool.blocks.Charge(usage.bytes - before.bytes);
  pool.inodes.Charge(usage.inodes - before.inodes);
  Retotal(id, pool, now_sec, /*force=*/false);
}

std::optional<QuotaId> QuotaEnforcer::ReserveBlocks(const std::vector<QuotaId>& ids, size_t ost,
                                                    uint64_t bytes, Clock::time_point now,
                                                    int64_t now_sec, Reservation* out) {
  return Reserve(ids, /*blocks=*/true, static_cast<OwnerId>(ost + 1), bytes, now, now_sec, out);
}

std::optional<QuotaId> QuotaEnforcer::ReserveInodes(const std::vector<QuotaId>& ids,
                                                    uint64_t inodes, Clock::time_point now,
                                                    int64_t now_sec, Reservation* out) {
  return Reserve(ids, /*blocks=*/false, /*owner=*/1, inodes, now, now_sec, out);
}

std::optional<QuotaId> QuotaEnforcer::Reserve(const std::vector<QuotaId>& ids, bool blocks,
                                              OwnerId owner, uint64_t amount,
                                              Clock::time_point now, int64_t now_sec,
                                              Reservation* out) {
  *out = Reservation{{}, owner, amount, blocks};
  // All or none, so nothing waits; still in the total order (user, group,
  // project, by id), which a debug build checks.
  CreditOrder order;
  for (const QuotaId& id : ids) {
    order.Take(Kind::kQuota, (static_cast<uint64_t>(id.type) << 32) | id.id);
    auto it = pools_.find(id);
    if (it == pools_.end()) continue;
    Pool& pool = *it->second;
    Retotal(id, pool, now_sec, /*force=*/false);  // a grace period may have run out
    CountedCredits& credits = blocks ? pool.blocks : pool.inodes;
    credits.Expire(now);
    if (!credits.Get(owner, amount, now)) {
      Settle(*out, 0, now);
      out->parts.clear();
      return id;
    }
    out->parts.push_back({id, pool.generation});
  }
  return std::nullopt;
}

void QuotaEnforcer::Settle(const Reservation& reservation, uint64_t used, Clock::time_point now) {
  for (const auto& part : reservation.parts) {
    auto it = pools_.find(part.id);
    if (it == pools_.end() || it->second->generation != part.generation) continue;
    CountedCredits& credits = reservation.blocks ? it->second->blocks : it->second->inodes;
    credits.Put(reservation.owner, reservation.amount, std::min(used, reservation.amount), now);
  }
}

void QuotaEnforcer::Expire(Clock::time_point now) {
  for (auto& [id, pool] : pools_) {
    pool->blocks.Expire(now);
    pool->inodes.Expire(now);
  }
}

QuotaReport QuotaEnforcer::Report(const QuotaId& id) const {
  QuotaReport report;
  if (auto it = usage_.find(id); it != usage_.end()) report.usage = it->second;
  if (auto it = pools_.find(id); it != pools_.end()) report.limits = it->second->limits;
  return report;
}

std::vector<QuotaId> QuotaEnforcer::LimitedIds() const {
  std::vector<QuotaId> ids;
  for (const auto& [id, pool] : pools_) ids.push_back(id);
  return ids;
}

CountedStats QuotaEnforcer::BlockStats(const QuotaId& id, size_t ost) const {
  auto it = pools_.find(id);
  if (it == pools_.end()) return {};
  return it->second->blocks.Stats(static_cast<OwnerId>(ost + 1));
}

}  // namespace sfs::resource
