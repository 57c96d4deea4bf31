#include "meta/usage_book.h"

#include <sys/stat.h>

#include <algorithm>

namespace sfs::meta {

std::vector<Charge> ChargesOf(const Inode& inode) {
  std::vector<Charge> charges;
  // The root directory exists from mkfs on and is never created or
  // removed: it counts for nobody.
  if (inode.ino == kRootIno) return charges;
  const int64_t bytes = S_ISREG(inode.mode) ? static_cast<int64_t>(inode.size) : 0;
  charges.push_back(Charge{QuotaId{QuotaType::kUser, inode.uid}, bytes, 1});
  charges.push_back(Charge{QuotaId{QuotaType::kGroup, inode.gid}, bytes, 1});
  if (inode.projid != 0) charges.push_back(Charge{QuotaId{QuotaType::kProject, inode.projid}, bytes, 1});
  return charges;
}

void AddCharges(const std::vector<Charge>& charges, int sign, std::map<QuotaId, Charge>* deltas) {
  for (const Charge& charge : charges) {
    Charge& delta = (*deltas)[charge.id];
    delta.id = charge.id;
    delta.bytes += sign * charge.bytes;
    delta.inodes += sign * charge.inodes;
  }
}

void PutUsageRecords(const UsageRecords& records, rocksdb::WriteBatch* batch) {
  for (const auto& [id, usage] : records) {
    if (usage == QuotaUsage{}) {
      batch->Delete(UsageKey(id));
    } else {
      batch->Put(UsageKey(id), EncodeUsage(usage));
    }
  }
}

void MergeUsageDeltas(const UsageDeltas& deltas, rocksdb::WriteBatch* batch) {
  for (const auto& [id, delta] : deltas) batch->Merge(UsageKey(id), EncodeUsageDelta(delta));
}

// A grace end starts when usage first goes above the soft limit and is
// kept while it stays there; going back to or below it clears it.
QuotaUsage WithDelta(QuotaUsage usage, const UsageDelta& delta) {
  usage.bytes += delta.bytes;
  usage.inodes += delta.inodes;
  const SoftLimit& soft = delta.soft;
  const bool bytes_over = soft.bytes != 0 && usage.bytes > static_cast<int64_t>(soft.bytes);
  if (!bytes_over) {
    usage.block_grace_end = 0;
  } else if (usage.block_grace_end == 0) {
    usage.block_grace_end = delta.block_grace_end;
  }
  const bool inodes_over = soft.inodes != 0 && usage.inodes > static_cast<int64_t>(soft.inodes);
  if (!inodes_over) {
    usage.inode_grace_end = 0;
  } else if (usage.inode_grace_end == 0) {
    usage.inode_grace_end = delta.inode_grace_end;
  }
  return usage;
}

void UsageBook::Reset(std::map<QuotaId, QuotaUsage> records) {
  std::lock_guard<std::mutex> lock(mu_);
  records_ = std::move(records);
}

QuotaUsage UsageBook::Get(const QuotaId& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = records_.find(id);
  return it == records_.end() ? QuotaUsage{} : it->second;
}

std::map<QuotaId, QuotaUsage> UsageBook::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

UsageDeltas UsageBook::Deltas(const std::map<QuotaId, Charge>& charges, int64_t now_sec) const {
  UsageDeltas deltas;
  // Most renames, xattr and time changes move nothing: they skip the lock.
  const bool any = std::any_of(charges.begin(), charges.end(), [](const auto& kv) {
    return kv.second.bytes != 0 || kv.second.inodes != 0;
  });
  if (!any) return deltas;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, charge] : charges) {
    if (charge.bytes == 0 && charge.inodes == 0) continue;
    UsageDelta delta;
    delta.bytes = charge.bytes;
    delta.inodes = charge.inodes;
    if (auto it = soft_.find(id); it != soft_.end()) delta.soft = it->second;
    delta.block_grace_end = now_sec + grace_.block_seconds;
    delta.inode_grace_end = now_sec + grace_.inode_seconds;
    deltas.emplace_back(id, delta);
  }
  return deltas;
}

void UsageBook::Add(const UsageDeltas& deltas) {
  if (deltas.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, delta] : deltas) {
    auto it = records_.find(id);
    Remember(id, WithDelta(it == records_.end() ? QuotaUsage{} : it->second, delta));
  }
}

UsageRecords UsageBook::Restamped(int64_t now_sec) const {
  UsageRecords fixed;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, usage] : records_) {
    UsageDelta nothing;  // no counter moves: only the stamps are checked
    if (auto it = soft_.find(id); it != soft_.end()) nothing.soft = it->second;
    nothing.block_grace_end = now_sec + grace_.block_seconds;
    nothing.inode_grace_end = now_sec + grace_.inode_seconds;
    QuotaUsage stamped = WithDelta(usage, nothing);
    if (!(stamped == usage)) fixed.emplace_back(id, stamped);
  }
  return fixed;
}

void UsageBook::Store(const UsageRecords& records) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, usage] : records) Remember(id, usage);
}

void UsageBook::Remember(const QuotaId& id, const QuotaUsage& usage) {
  if (usage == QuotaUsage{}) {
    records_.erase(id);
  } else {
    records_[id] = usage;
  }
  if (observer_) observer_(id, usage);
}

void UsageBook::SetSoftLimits(std::map<QuotaId, SoftLimit> soft, QuotaGrace grace) {
  std::lock_guard<std::mutex> lock(mu_);
  soft_ = std::move(soft);
  grace_ = grace;
}

void UsageBook::SetObserver(UsageObserver observer) {
  std::lock_guard<std::mutex> lock(mu_);
  observer_ = std::move(observer);
  if (!observer_) return;
  for (const auto& [id, usage] : records_) observer_(id, usage);
}

}  // namespace sfs::meta
