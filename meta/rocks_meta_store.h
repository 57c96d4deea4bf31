// Internal to meta/: the RocksDB MetaStore behind MetaStore::Format/Open.
// Method bodies are split by theme: rocks_meta_store.cc (open, settings,
// reads, identifiers), rocks_meta_store_namespace.cc (create, link, unlink,
// rmdir), rocks_meta_store_rename.cc, rocks_meta_store_attr.cc (attributes,
// layouts, xattrs, orphans), rocks_meta_store_dir.cc (directory batches),
// rocks_meta_store_check.cc (fsck's scans and repairs).
#pragma once

#include <rocksdb/db.h>

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "meta/inode_locks.h"
#include "meta/meta_store.h"
#include "meta/usage_book.h"
#include "resource/id_ranges.h"

namespace sfs::meta {

// Identifiers are handed out in ranges of this many (resource/id_ranges.h);
// one synced write per range keeps allocation off the sync path almost
// always.
inline constexpr uint64_t kIdRangeSize = 1024;
inline constexpr uint64_t kFirstIno = kRootIno + 1;
inline constexpr uint64_t kFirstObjectId = 1;
// The memtable size, and so the free space RocksDB waits for before it
// resumes by itself after a full disk (rocks_meta_store.cc OpenDb).
inline constexpr size_t kWriteBufferBytes = 8 << 20;

// EXDEV unless `moved` may get a name in `to_dir`: a directory with a
// project id takes in only what belongs to it (rocks_meta_store_rename.cc).
Status CheckProjectMove(const Inode& moved, const Inode& to_dir);

class RocksMetaStore final : public MetaStore {
 public:
  // Takes over an open database whose counters are `next_ino`/`next_obj`.
  RocksMetaStore(std::unique_ptr<rocksdb::DB> db, uint64_t next_ino, uint64_t next_obj);

  Result<std::string> GetSetting(const std::string& name) override;
  Result<std::map<std::string, std::string>> AllSettings() override;
  Status PutSetting(const std::string& name, const std::string& value) override;
  Status PutSettings(const std::map<std::string, std::string>& values,
                     const std::vector<std::string>& erase) override;

  Result<Inode> GetInode(uint64_t ino) override;
  Result<Inode> Lookup(uint64_t parent, const std::string& name) override;
  Result<Inode> Create(uint64_t parent, const std::string& name, const NewNode& node) override;
  Result<Inode> Link(uint64_t ino, uint64_t new_parent, const std::string& new_name) override;
  Result<Removed> Unlink(uint64_t parent, const std::string& name,
                         const PurgeNow& purge_now) override;
  Status Rmdir(uint64_t parent, const std::string& name) override;
  Result<std::optional<Removed>> Rename(uint64_t parent, const std::string& name,
                                        uint64_t new_parent, const std::string& new_name,
                                        RenameMode mode) override;
  Result<Inode> SetAttr(uint64_t ino, const AttrChange& change) override;
  Result<Inode> NoteWrite(uint64_t ino, uint64_t end, bool kill_suid,
                          bool touch_times = true) override;
  Result<std::vector<DirEntry>> ReadDirAfter(uint64_t ino, const std::string& after,
                                             size_t max_entries) override;

  Result<std::string> GetLayout(uint64_t ino) override;
  Status PutLayout(uint64_t ino, const std::string& blob, uint64_t allocated) override;

  Result<std::string> GetXattr(uint64_t ino, const std::string& name) override;
  Result<std::vector<std::string>> ListXattr(uint64_t ino) override;
  Status SetXattr(uint64_t ino, const std::string& name, const std::string& value,
                  int flags) override;
  Status RemoveXattr(uint64_t ino, const std::string& name) override;

  Result<std::vector<uint64_t>> Orphans() override;
  Status Purge(uint64_t ino) override;
  Status MarkWriting(uint64_t ino, bool writing) override;
  Result<std::vector<uint64_t>> Writing() override;

  Result<uint64_t> AllocateObjectIds(uint32_t count) override;

  Status ScanInodes(const std::function<void(uint64_t, const Result<Inode>&)>& fn) override;
  Status ScanDirents(const std::function<void(uint64_t, const std::string&,
                                              const Result<DirEntry>&)>& fn) override;
  Status ScanRecords(Record kind,
                     const std::function<void(uint64_t, std::string_view)>& fn) override;
  Result<IdMarks> StoredIdMarks() override;
  Status RaiseIdMarks(const IdMarks& marks) override;
  Status RepairInode(const Inode& inode) override;
  Status RepairDirent(uint64_t parent, const std::string& name,
                      const std::optional<DirEntry>& entry) override;
  Status RepairOrphanMark(uint64_t ino, bool marked) override;
  Status EraseRecords(uint64_t ino) override;
  Status RepairUsage(const std::map<QuotaId, QuotaUsage>& usage) override;

  Status SetSoftLimits(const std::map<QuotaId, SoftLimit>& soft, QuotaGrace grace) override;
  void SetUsageObserver(UsageObserver observer) override;
  std::map<QuotaId, QuotaUsage> AllUsage() override;
  QuotaUsage GetUsage(const QuotaId& id) override;

  // At open: the usage records into memory, counted from the inodes if the
  // store has none yet or one is damaged and `count` allows (else none:
  // rocks_meta_store_usage.cc).
  Status LoadUsage(bool count);

  Result<std::optional<ReplyRecord>> GetReplyRecord(uint64_t client, uint64_t request) override;
  Status DropReplyRecords(uint64_t client, uint64_t below) override;
  Result<std::vector<uint64_t>> ReplyRecordClients() override;

  Status Sync() override;

 private:
  // Makes `mark` the durable high-water mark under `key` (a synced write).
  Status PersistMark(std::string_view key, uint64_t mark);
  // EINVAL if `dir` is `ancestor` or lies below it. REQUIRES: rename_mu_
  // and the stripe of `dir` held.
  Status CheckNotBelow(uint64_t dir, uint64_t ancestor);
  Status CountUsage();
  Result<std::optional<Removed>> Exchange(uint64_t parent, const std::string& name,
                                          uint64_t new_parent, const std::string& new_name);

  // Declared first so it is destroyed last: the DB closes after nothing else
  // can use it.
  std::unique_ptr<rocksdb::DB> db_;
  // Lock order (each taken only after the ones before it): rename_mu_,
  // the inode stripes (locks_, ascending), inos_mu_, objects_mu_, the usage
  // book's own mutex (usage_book.h). The caller's PurgeNow runs under the stripes
  // and may only try locks; the usage observer runs under the book's.
  //
  // Guards the parent chain of directories (Inode::parent) while a rename
  // between two directories checks that it moves no directory below
  // itself (CheckNotBelow reads ancestors it holds no stripe of): every
  // rename between two directories takes it first, as Linux's
  // s_vfs_rename_mutex; renames within one directory and everything else
  // do not.
  std::mutex rename_mu_;
  // The read-check-write of every mutation (inode_locks.h); LockAll is the
  // exclusive mode of repairs and soft-limit changes. Reads take nothing.
  InodeLocks locks_;
  // Guard the id ranges, one each: a new layout's object ids need no
  // namespace check, and a range's refill is a synced write (one per
  // kIdRangeSize ids) that held every create and unlink behind it while
  // it was the store's one mutation lock (issue 33: 10 % of the wall time
  // at 8 processes creating files); one mutex for both was still held
  // 6 % of the wall time there (a create takes an inode number and its
  // layout's object ids), and an object-id refill held inode numbers
  // back. inos_mu_ is taken under a create's stripe; objects_mu_ alone by
  // AllocateObjectIds; both at once (std::scoped_lock) by RaiseIdMarks.
  std::mutex inos_mu_;
  std::mutex objects_mu_;
  // Inode numbers and object ids: the store is the master of each (its
  // marks on disk); the namespace (creates) and the placement (new
  // layouts) are their sub-owners.
  resource::IdRanges inos_;     // guarded by inos_mu_
  resource::IdRanges objects_;  // guarded by objects_mu_
  resource::OwnerId ino_owner_;
  resource::OwnerId object_owner_;
  UsageBook usage_;  // its own lock
};

}  // namespace sfs::meta
