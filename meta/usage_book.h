// Internal to meta/: the quota usage records in memory, so a batch that
// changes usage needs no read, and the rule that sets their grace ends
// (meta_store.h, "Quota usage"; the operands in meta/keys.h).
//
// A batch carries one merge operand (UsageDelta) per id it charges; once
// it has landed, the mutation hands the same operands to Add. The book is
// thus the sum of the batches that landed and were added, in the order
// they were added, which may differ from the order they landed: the
// counters agree with the store's whatever the order (sums), and so does
// whether a grace end is set (it follows the final counters); a grace end
// itself may differ by the time between two batches that raced to cross
// the soft limit (each starts its own at its own clock reading; the store
// keeps the first to land, the book the first added).
//
// Thread safety: every method is safe from any thread; one mutex of its
// own (mu_), a leaf but for the observer, which is called under it so that
// its calls for one id come in the book's order.
#pragma once

#include <rocksdb/write_batch.h>

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "common/quota_id.h"
#include "meta/keys.h"
#include "meta/meta_store.h"

namespace sfs::meta {

using UsageRecords = std::vector<std::pair<QuotaId, QuotaUsage>>;
using UsageDeltas = std::vector<std::pair<QuotaId, UsageDelta>>;

// `usage` after `delta`: the counters moved, then the grace ends as the
// delta's soft limits say. What the merge operator does to a stored record.
QuotaUsage WithDelta(QuotaUsage usage, const UsageDelta& delta);

class UsageBook {
 public:
  // The records as stored (at open, or in exclusive mode).
  void Reset(std::map<QuotaId, QuotaUsage> records);

  // The operands of a batch that moves usage by `charges` (zero ones are
  // left out), with the soft limits as they are now and grace ends
  // starting at `now_sec`.
  UsageDeltas Deltas(const std::map<QuotaId, Charge>& charges, int64_t now_sec) const;
  // After the batch holding `deltas` landed: adds them and tells the
  // observer each changed record.
  void Add(const UsageDeltas& deltas);

  // The records whose grace end the soft limits contradict at `now_sec`.
  UsageRecords Restamped(int64_t now_sec) const;
  // After a batch putting `records` whole landed: remembers them and tells
  // the observer. REQUIRES: no batch with operands in flight (the store's
  // exclusive mode), or a record put whole would lose them.
  void Store(const UsageRecords& records);

  void SetSoftLimits(std::map<QuotaId, SoftLimit> soft, QuotaGrace grace);
  // Replaces the observer and calls it with every record.
  void SetObserver(UsageObserver observer);

  std::map<QuotaId, QuotaUsage> records() const;
  QuotaUsage Get(const QuotaId& id) const;

 private:
  // Remembers `usage` as the record of `id` and tells the observer.
  // REQUIRES: mu_ held.
  void Remember(const QuotaId& id, const QuotaUsage& usage);

  // Guards everything below and orders the observer's calls.
  mutable std::mutex mu_;
  std::map<QuotaId, QuotaUsage> records_;  // zero records are absent
  std::map<QuotaId, SoftLimit> soft_;
  QuotaGrace grace_;
  UsageObserver observer_;
};

// Puts `records` whole into `batch` (a zero record as a deletion).
void PutUsageRecords(const UsageRecords& records, rocksdb::WriteBatch* batch);
// Puts one merge operand per delta into `batch`.
void MergeUsageDeltas(const UsageDeltas& deltas, rocksdb::WriteBatch* batch);

// Adds `charges` (times `sign`) to `deltas`.
void AddCharges(const std::vector<Charge>& charges, int sign, std::map<QuotaId, Charge>* deltas);

}  // namespace sfs::meta
