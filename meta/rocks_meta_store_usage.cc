// Quota usage records (meta_store.h, "Quota usage"): soft limits, the
// observer, reads, fsck's repair, and the one-time count of a store made
// before quotas existed.
#include <rocksdb/write_batch.h>
#include <sys/stat.h>

#include "meta/db_reads.h"
#include "meta/db_write.h"
#include "meta/keys.h"
#include "meta/rocks_meta_store.h"
#include "meta/usage_book.h"

namespace sfs::meta {
namespace {

// Before inodes carried a project id, a directory's was this xattr (the
// name fs/ gave it); the upgrade moves it into the inode.
constexpr std::string_view kPreQuotaProjidXattr = "user.stripefs.projid";

}  // namespace

Status RocksMetaStore::LoadUsage(bool count) {
  auto counted = ReadKey(db_.get(), rocksdb::ReadOptions(), kUsageCountedKey, "meta: usage mark");
  if (counted.err() == ENOENT) return count ? CountUsage() : Status::Ok();
  SFS_RETURN_IF_ERROR(counted);
  std::map<QuotaId, QuotaUsage> records;
  Status bad;
  Status s = ScanPrefix(db_.get(), rocksdb::ReadOptions(), std::string(1, kUsagePrefix),
                        [&](std::string_view key, std::string_view value) {
                          auto id = DecodeUsageKey(key);
                          auto usage = DecodeUsage(value);
                          if (!id.ok() || !usage.ok()) {
                            bad = !id.ok() ? id.status() : usage.status();
                            return false;
                          }
                          // All zeros: what a merge leaves of a record
                          // that no longer counts anything.
                          if (!(*usage == QuotaUsage{})) records[*id] = *usage;
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  // A damaged record is counted again from the inodes, which are the
  // truth (grace ends restart).
  if (!bad.ok()) return count ? CountUsage() : Status::Ok();
  usage_.Reset(std::move(records));
  return Status::Ok();
}

// Every inode is counted and the records replaced, in one batch with the
// mark. For a store from before quotas, every directory's project id also
// moves from its xattr into its inode, and every other inode takes the
// project of the (first) directory that names it, as if it had been made
// under quotas. An inode record that does not decode counts for nobody
// (fsck reports it, and recounts once it is repaired).
Status RocksMetaStore::CountUsage() {
  rocksdb::WriteBatch batch;
  Status s = ScanPrefix(db_.get(), rocksdb::ReadOptions(), std::string(1, kUsagePrefix),
                        [&](std::string_view key, std::string_view) {
                          batch.Delete(key);
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  std::map<uint64_t, uint32_t> dir_projids;
  s = ScanPrefix(db_.get(), rocksdb::ReadOptions(), std::string(1, kXattrPrefix),
                        [&](std::string_view key, std::string_view value) {
                          if (key.size() < 9 || key.substr(9) != kPreQuotaProjidXattr) return true;
                          uint32_t projid = 0;
                          for (char c : value) {
                            if (c < '0' || c > '9') return true;  // never stored so
                            projid = projid * 10 + static_cast<uint32_t>(c - '0');
                          }
                          dir_projids[DecodeU64BE(key.substr(1, 8))] = projid;
                          batch.Delete(key);
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  // What the entries of those directories name (not directories: those
  // have their own xattr, copied at mkdir).
  std::map<uint64_t, uint32_t> named_projids;
  for (const auto& [dir, projid] : dir_projids) {
    s = ScanPrefix(db_.get(), rocksdb::ReadOptions(), DirentPrefix(dir),
                   [&, projid = projid](std::string_view, std::string_view value) {
                     auto entry = DecodeDirent(value);
                     if (entry.ok() && entry->type != S_IFDIR) {
                       named_projids.emplace(entry->ino, projid);
                     }
                     return true;
                   });
    SFS_RETURN_IF_ERROR(s);
  }
  std::map<QuotaId, Charge> totals;
  s = ScanPrefix(db_.get(), rocksdb::ReadOptions(), std::string(1, kInodePrefix),
                 [&](std::string_view key, std::string_view value) {
                   auto ino = DecodeInoKey(key);
                   auto inode = ino.ok() ? DecodeInode(*ino, value) : Result<Inode>(ino.status());
                   if (!inode.ok()) return true;
                   uint32_t projid = inode->projid;
                   if (auto it = dir_projids.find(*ino); it != dir_projids.end()) {
                     projid = it->second;
                   } else if (auto named = named_projids.find(*ino); named != named_projids.end()) {
                     projid = named->second;
                   }
                   if (projid != inode->projid) {
                     inode->projid = projid;
                     batch.Put(key, EncodeInode(*inode));
                   }
                   AddCharges(ChargesOf(*inode), +1, &totals);
                   return true;
                 });
  SFS_RETURN_IF_ERROR(s);
  // No grace ends: no soft limits are known before the mount gives them
  // (SetSoftLimits then stamps what is over).
  std::map<QuotaId, QuotaUsage> counted;
  for (const auto& [id, total] : totals) {
    if (total.bytes != 0 || total.inodes != 0) counted[id] = QuotaUsage{total.bytes, total.inodes};
  }
  PutUsageRecords(UsageRecords(counted.begin(), counted.end()), &batch);
  batch.Put(std::string(kUsageCountedKey), "1");
  SFS_RETURN_IF_ERROR(WriteToDb(db_.get(), /*sync=*/true, &batch, "meta: count quota usage"));
  usage_.Reset(std::move(counted));
  return Status::Ok();
}

// In the exclusive mode: a record put whole must not overtake an operand
// of a batch in flight, and the book must hold every landed batch.
Status RocksMetaStore::SetSoftLimits(const std::map<QuotaId, SoftLimit>& soft, QuotaGrace grace) {
  auto held = locks_.LockAll();
  usage_.SetSoftLimits(soft, grace);
  const UsageRecords fixed = usage_.Restamped(Timestamp::Now().sec);
  if (fixed.empty()) return Status::Ok();
  rocksdb::WriteBatch batch;
  PutUsageRecords(fixed, &batch);
  SFS_RETURN_IF_ERROR(WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: quota grace"));
  usage_.Store(fixed);
  return Status::Ok();
}

void RocksMetaStore::SetUsageObserver(UsageObserver observer) {
  usage_.SetObserver(std::move(observer));
}

std::map<QuotaId, QuotaUsage> RocksMetaStore::AllUsage() { return usage_.records(); }

QuotaUsage RocksMetaStore::GetUsage(const QuotaId& id) { return usage_.Get(id); }

Status RocksMetaStore::RepairUsage(const std::map<QuotaId, QuotaUsage>& usage) {
  auto held = locks_.LockAll();  // as SetSoftLimits
  // Every id either side knows whose counts differ: ids no longer used go
  // to zero (deleted); grace ends stay as stored.
  const std::map<QuotaId, QuotaUsage> stored = usage_.records();
  UsageRecords records;
  for (const auto& [id, known] : stored) {
    if (usage.count(id) == 0) records.emplace_back(id, QuotaUsage{});
  }
  for (const auto& [id, counted] : usage) {
    auto it = stored.find(id);
    QuotaUsage next = it == stored.end() ? QuotaUsage{} : it->second;
    if (next.bytes == counted.bytes && next.inodes == counted.inodes) continue;
    next.bytes = counted.bytes;
    next.inodes = counted.inodes;
    if (next.bytes == 0 && next.inodes == 0) next = QuotaUsage{};
    records.emplace_back(id, next);
  }
  rocksdb::WriteBatch batch;
  PutUsageRecords(records, &batch);
  batch.Put(std::string(kUsageCountedKey), "1");
  SFS_RETURN_IF_ERROR(WriteToDb(db_.get(), /*sync=*/true, &batch, "meta: repair quota usage"));
  usage_.Store(records);
  return Status::Ok();
}

}  // namespace sfs::meta
