// Internal to meta/: the quota usage records as the store last wrote them,
// kept in memory so a batch that changes usage needs no read, and the rule
// that sets their grace ends (meta_store.h, "Quota usage").
//
// Thread safety: none of its own. REQUIRES for every call: the store's
// mutation lock (RocksMetaStore::mu_) held, which also orders the
// observer's calls as the batches landed.
#pragma once

#include <rocksdb/write_batch.h>

#include <map>
#include <utility>
#include <vector>

#include "common/quota_id.h"
#include "meta/meta_store.h"

namespace sfs::meta {

using UsageRecords = std::vector<std::pair<QuotaId, QuotaUsage>>;

class UsageBook {
 public:
  // The records as stored (at open).
  void Reset(std::map<QuotaId, QuotaUsage> records) { records_ = std::move(records); }

  // The records `deltas` change, as they are to be stored: current usage
  // plus the delta, grace ends set by the soft limits at `now_sec`. A
  // record that comes to all zeros is to be deleted.
  UsageRecords Next(const std::map<QuotaId, Charge>& deltas, int64_t now_sec) const;
  // The records whose grace end the soft limits contradict at `now_sec`.
  UsageRecords Restamped(int64_t now_sec) const;
  // After the batch holding `records` landed: remembers them and tells
  // the observer.
  void Apply(const UsageRecords& records);

  void SetSoftLimits(std::map<QuotaId, SoftLimit> soft, QuotaGrace grace);
  // Replaces the observer and calls it with every record.
  void SetObserver(UsageObserver observer);

  const std::map<QuotaId, QuotaUsage>& records() const { return records_; }
  QuotaUsage Get(const QuotaId& id) const;

 private:
  // `usage` with grace ends as the soft limit of `id` says at `now_sec`.
  QuotaUsage Stamped(const QuotaId& id, QuotaUsage usage, int64_t now_sec) const;

  std::map<QuotaId, QuotaUsage> records_;  // zero records are absent
  std::map<QuotaId, SoftLimit> soft_;
  QuotaGrace grace_;
  UsageObserver observer_;
};

// Puts `records` into `batch` (a zero record as a deletion).
void PutUsageRecords(const UsageRecords& records, rocksdb::WriteBatch* batch);

// Adds `charges` (times `sign`) to `deltas`.
void AddCharges(const std::vector<Charge>& charges, int sign, std::map<QuotaId, Charge>* deltas);

}  // namespace sfs::meta
