// fsck's view of the store: whole-store scans and raw repairs (declared in
// meta/meta_store.h). fsck runs on an unmounted store, so nothing else
// mutates it; the repairs still take the store's exclusive mode (every
// inode stripe) so they stay safe from any thread.
#include <rocksdb/write_batch.h>

#include <algorithm>

#include "meta/db_reads.h"
#include "meta/db_write.h"
#include "meta/keys.h"
#include "meta/mutation.h"
#include "meta/rocks_meta_store.h"
#include "meta/rocks_status.h"

namespace sfs::meta {
namespace {

// The ino of a key made of a one-byte prefix and an 8-byte ino, followed by
// a name for X keys. EIO if the key is too short.
Result<uint64_t> InoOfKey(std::string_view key) {
  if (key.size() < 9) return Status::Error(EIO, "meta: key too short for an inode number");
  return DecodeU64BE(key.substr(1, 8));
}

char PrefixOf(MetaStore::Record kind) {
  switch (kind) {
    case MetaStore::Record::kLayout: return kLayoutPrefix;
    case MetaStore::Record::kXattr: return kXattrPrefix;
    case MetaStore::Record::kOrphanMark: return kOrphanPrefix;
  }
  return kLayoutPrefix;
}

}  // namespace

Status RocksMetaStore::ScanInodes(const std::function<void(uint64_t, const Result<Inode>&)>& fn) {
  ScopedSnapshot snapshot(db_.get());
  Status bad_key;
  Status s = ScanPrefix(db_.get(), snapshot.options(), std::string(1, kInodePrefix),
                        [&](std::string_view key, std::string_view value) {
                          auto ino = DecodeInoKey(key);
                          if (!ino.ok()) {
                            bad_key = ino.status();
                            return false;
                          }
                          fn(*ino, DecodeInode(*ino, value));
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  return bad_key;
}

Status RocksMetaStore::ScanDirents(
    const std::function<void(uint64_t, const std::string&, const Result<DirEntry>&)>& fn) {
  ScopedSnapshot snapshot(db_.get());
  Status bad_key;
  Status s = ScanPrefix(db_.get(), snapshot.options(), std::string(1, kDirentPrefix),
                        [&](std::string_view key, std::string_view value) {
                          auto parent = InoOfKey(key);
                          if (!parent.ok()) {
                            bad_key = parent.status();
                            return false;
                          }
                          std::string name(KeySuffix(key, 9));
                          auto decoded = DecodeDirent(value);
                          if (!decoded.ok()) {
                            fn(*parent, name, decoded.status());
                          } else {
                            fn(*parent, name, DirEntry{name, decoded->ino, decoded->type});
                          }
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  return bad_key;
}

Status RocksMetaStore::ScanRecords(Record kind,
                                   const std::function<void(uint64_t, std::string_view)>& fn) {
  ScopedSnapshot snapshot(db_.get());
  Status bad_key;
  Status s = ScanPrefix(db_.get(), snapshot.options(), std::string(1, PrefixOf(kind)),
                        [&](std::string_view key, std::string_view value) {
                          auto ino = InoOfKey(key);
                          if (!ino.ok()) {
                            bad_key = ino.status();
                            return false;
                          }
                          fn(*ino, value);
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  return bad_key;
}

Result<MetaStore::IdMarks> RocksMetaStore::StoredIdMarks() {
  auto next_ino = ReadCounter(db_.get(), kNextInoKey);
  SFS_RETURN_IF_ERROR(next_ino);
  auto next_obj = ReadCounter(db_.get(), kNextObjKey);
  SFS_RETURN_IF_ERROR(next_obj);
  return IdMarks{*next_ino, *next_obj};
}

// The sub-owners' ranges restart empty at the raised marks, as after a
// mount: nothing below them is handed out again.
Status RocksMetaStore::RaiseIdMarks(const IdMarks& marks) {
  std::scoped_lock lock(inos_mu_, objects_mu_);
  auto stored = StoredIdMarks();
  SFS_RETURN_IF_ERROR(stored);
  SFS_RETURN_IF_ERROR(inos_.Raise(std::max(stored->next_ino, marks.next_ino)));
  return objects_.Raise(std::max(stored->next_obj, marks.next_obj));
}

Status RocksMetaStore::RepairInode(const Inode& inode) {
  auto held = locks_.LockAll();
  rocksdb::WriteBatch batch;
  batch.Put(InodeKey(inode.ino), EncodeInode(inode));
  return WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: repair inode");
}

Status RocksMetaStore::RepairDirent(uint64_t parent, const std::string& name,
                                    const std::optional<DirEntry>& entry) {
  auto held = locks_.LockAll();
  rocksdb::WriteBatch batch;
  if (entry.has_value()) {
    batch.Put(DirentKey(parent, name), EncodeDirent(entry->ino, entry->mode));
  } else {
    batch.Delete(DirentKey(parent, name));
  }
  return WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: repair entry");
}

Status RocksMetaStore::RepairOrphanMark(uint64_t ino, bool marked) {
  auto held = locks_.LockAll();
  rocksdb::WriteBatch batch;
  if (marked) {
    batch.Put(OrphanKey(ino), rocksdb::Slice());
  } else {
    batch.Delete(OrphanKey(ino));
  }
  return WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: repair orphan mark");
}

Status RocksMetaStore::EraseRecords(uint64_t ino) {
  auto held = locks_.LockAll();
  Mutation m(db_.get(), &usage_);
  SFS_RETURN_IF_ERROR(m.DeleteInode(ino));
  return m.Commit("meta: erase records of " + std::to_string(ino));
}

}  // namespace sfs::meta
