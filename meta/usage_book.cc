#include "meta/usage_book.h"

#include <sys/stat.h>

#include "meta/keys.h"

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

QuotaUsage UsageBook::Get(const QuotaId& id) const {
  auto it = records_.find(id);
  return it == records_.end() ? QuotaUsage{} : it->second;
}

QuotaUsage UsageBook::Stamped(const QuotaId& id, QuotaUsage usage, int64_t now_sec) const {
  SoftLimit soft;
  if (auto it = soft_.find(id); it != soft_.end()) soft = it->second;
  // A grace end starts when usage first goes above the soft limit and is
  // kept while it stays there; going back to or below it clears it.
  const bool bytes_over = soft.bytes != 0 && usage.bytes > static_cast<int64_t>(soft.bytes);
  if (!bytes_over) {
    usage.block_grace_end = 0;
  } else if (usage.block_grace_end == 0) {
    usage.block_grace_end = now_sec + grace_.block_seconds;
  }
  const bool inodes_over = soft.inodes != 0 && usage.inodes > static_cast<int64_t>(soft.inodes);
  if (!inodes_over) {
    usage.inode_grace_end = 0;
  } else if (usage.inode_grace_end == 0) {
    usage.inode_grace_end = now_sec + grace_.inode_seconds;
  }
  return usage;
}

UsageRecords UsageBook::Next(const std::map<QuotaId, Charge>& deltas, int64_t now_sec) const {
  UsageRecords next;
  for (const auto& [id, delta] : deltas) {
    if (delta.bytes == 0 && delta.inodes == 0) continue;
    QuotaUsage usage = Get(id);
    usage.bytes += delta.bytes;
    usage.inodes += delta.inodes;
    next.emplace_back(id, Stamped(id, usage, now_sec));
  }
  return next;
}

UsageRecords UsageBook::Restamped(int64_t now_sec) const {
  UsageRecords fixed;
  for (const auto& [id, usage] : records_) {
    QuotaUsage stamped = Stamped(id, usage, now_sec);
    if (!(stamped == usage)) fixed.emplace_back(id, stamped);
  }
  return fixed;
}

void UsageBook::Apply(const UsageRecords& records) {
  for (const auto& [id, usage] : records) {
    if (usage == QuotaUsage{}) {
      records_.erase(id);
    } else {
      records_[id] = usage;
    }
    if (observer_) observer_(id, usage);
  }
}

void UsageBook::SetSoftLimits(std::map<QuotaId, SoftLimit> soft, QuotaGrace grace) {
  soft_ = std::move(soft);
  grace_ = grace;
}

void UsageBook::SetObserver(UsageObserver observer) {
  observer_ = std::move(observer);
  if (!observer_) return;
  for (const auto& [id, usage] : records_) observer_(id, usage);
}

}  // namespace sfs::meta
