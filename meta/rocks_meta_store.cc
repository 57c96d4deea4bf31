#include "meta/rocks_meta_store.h"

#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "meta/db_reads.h"
#include "meta/db_write.h"
#include "meta/keys.h"
#include "meta/rocks_logger.h"
#include "meta/rocks_status.h"
#include "meta/usage_merge.h"

namespace sfs::meta {
namespace {

bool HasStore(const std::string& dir) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec);
}

Result<std::unique_ptr<rocksdb::DB>> OpenDb(const std::string& dir, bool create,
                                            const StoreOptions& store) {
  rocksdb::Options options;
  options.create_if_missing = create;
  options.error_if_exists = create;
  options.info_log = NewRocksLogger();
  // Its own share of the daemon's descriptors: without a bound RocksDB keeps
  // every table file open, and a daemon out of descriptors fails everyone.
  options.max_open_files = store.max_open_files;
  // RocksDB only clears a full-disk error by itself once this much is free
  // (it must be able to flush a memtable), so the default 64 MiB would keep
  // a small metadata disk stopped even after space came back.
  options.write_buffer_size = kWriteBufferBytes;
  // Usage records change by merges (meta/keys.h), so that batches charging
  // one id need not land in an order the store enforces.
  options.merge_operator = NewUsageMergeOperator();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  if (s.IsIOError() && (s.ToString().find("While lock file") != std::string::npos ||
                        s.ToString().find("lock hold by current process") != std::string::npos)) {
    // RocksDB holds an flock on LOCK while a database is open: another
    // process (a mount, an fsck) has this store.
    return Status::Error(EBUSY, "meta: " + dir + " is in use by another process (is the "
                                "filesystem mounted?): " + s.ToString());
  }
  if (!s.ok()) return FromRocks(s, "meta: open " + dir);
  return std::unique_ptr<rocksdb::DB>(raw);
}

}  // namespace

Result<std::unique_ptr<MetaStore>> MetaStore::Format(
    const std::string& dir, const std::map<std::string, std::string>& settings) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoStatus(ec.value(), "meta: mkdir " + dir);
  if (HasStore(dir)) return Status::Error(EEXIST, "meta: " + dir + " already holds a store");
  auto db = OpenDb(dir, /*create=*/true, StoreOptions{});
  SFS_RETURN_IF_ERROR(db);

  Timestamp now = Timestamp::Now();
  Inode root;
  root.ino = kRootIno;
  root.mode = S_IFDIR | 0755;
  root.nlink = 2;
  root.parent = kRootIno;
  root.atime = root.mtime = root.ctime = now;
  rocksdb::WriteBatch batch;
  batch.Put(InodeKey(kRootIno), EncodeInode(root));
  for (const auto& [name, value] : settings) batch.Put(SettingKey(name), value);
  batch.Put(std::string(kNextInoKey), EncodeU64BE(kFirstIno));
  batch.Put(std::string(kNextObjKey), EncodeU64BE(kFirstObjectId));
  batch.Put(std::string(kUsageCountedKey), "1");  // nothing to count yet
  SFS_RETURN_IF_ERROR(WriteToDb(db->get(), /*sync=*/true, &batch, "meta: format " + dir));
  return std::unique_ptr<MetaStore>(new RocksMetaStore(std::move(*db), kFirstIno, kFirstObjectId));
}

Result<std::unique_ptr<MetaStore>> MetaStore::Open(const std::string& dir,
                                                   const StoreOptions& options) {
  if (!HasStore(dir)) return Status::Error(ENOENT, "meta: no store in " + dir);
  auto db = OpenDb(dir, /*create=*/false, options);
  SFS_RETURN_IF_ERROR(db);
  auto next_ino = ReadCounter(db->get(), kNextInoKey);
  SFS_RETURN_IF_ERROR(next_ino);
  auto next_obj = ReadCounter(db->get(), kNextObjKey);
  SFS_RETURN_IF_ERROR(next_obj);
  auto store = std::make_unique<RocksMetaStore>(std::move(*db), *next_ino, *next_obj);
  SFS_RETURN_IF_ERROR(store->LoadUsage(options.count_usage));
  return std::unique_ptr<MetaStore>(std::move(store));
}

Status MetaStore::Destroy(const std::string& dir) {
  return FromRocks(rocksdb::DestroyDB(dir, rocksdb::Options()), "meta: destroy " + dir);
}

// Both masters start at the persisted mark with their sub-owners' ranges
// empty: ids between the last one used before a crash and the old mark
// are skipped, never reused.
RocksMetaStore::RocksMetaStore(std::unique_ptr<rocksdb::DB> db, uint64_t next_ino,
                               uint64_t next_obj)
    : db_(std::move(db)),
      inos_(next_ino, kIdRangeSize,
            [this](uint64_t mark) { return PersistMark(kNextInoKey, mark); }),
      objects_(next_obj, kIdRangeSize,
               [this](uint64_t mark) { return PersistMark(kNextObjKey, mark); }),
      ino_owner_(inos_.AddOwner("namespace")),
      object_owner_(objects_.AddOwner("placement")) {}

// --- settings ---

Result<std::string> RocksMetaStore::GetSetting(const std::string& name) {
  return ReadKey(db_.get(), rocksdb::ReadOptions(), SettingKey(name), "meta: setting " + name);
}

Result<std::map<std::string, std::string>> RocksMetaStore::AllSettings() {
  std::map<std::string, std::string> out;
  Status s = ScanPrefix(db_.get(), rocksdb::ReadOptions(), std::string(1, kSettingPrefix),
                        [&](std::string_view key, std::string_view value) {
                          out.emplace(KeySuffix(key, 1), value);
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  return out;
}

// A blind put checks nothing, so it takes no lock.
Status RocksMetaStore::PutSetting(const std::string& name, const std::string& value) {
  rocksdb::WriteBatch batch;
  batch.Put(SettingKey(name), value);
  return WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: put setting " + name);
}

Status RocksMetaStore::PutSettings(const std::map<std::string, std::string>& values,
                                   const std::vector<std::string>& erase) {
  rocksdb::WriteBatch batch;
  for (const std::string& name : erase) batch.Delete(SettingKey(name));
  for (const auto& [name, value] : values) batch.Put(SettingKey(name), value);
  return WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: put settings");
}

// --- reads ---

Result<Inode> RocksMetaStore::GetInode(uint64_t ino) {
  return ReadInode(db_.get(), rocksdb::ReadOptions(), ino);
}

Result<Inode> RocksMetaStore::Lookup(uint64_t parent, const std::string& name) {
  if (name.size() > kMaxNameLen) return Status::Error(ENAMETOOLONG, "meta: name too long");
  // One snapshot so the dirent and the inode it names are from one state.
  ScopedSnapshot snap(db_.get());
  auto d = ReadDirent(db_.get(), snap.options(), parent, name);
  SFS_RETURN_IF_ERROR(d);
  if (!d->has_value()) {
    return Status::Error(ENOENT, "meta: no '" + name + "' in " + std::to_string(parent));
  }
  return ReadInode(db_.get(), snap.options(), (*d)->ino);
}

// --- identifiers ---

Status RocksMetaStore::PersistMark(std::string_view key, uint64_t mark) {
  rocksdb::WriteBatch batch;
  batch.Put(rocksdb::Slice(key.data(), key.size()), EncodeU64BE(mark));
  return WriteToDb(db_.get(), /*sync=*/true, &batch, "meta: raise " + std::string(key));
}

Result<uint64_t> RocksMetaStore::AllocateObjectIds(uint32_t count) {
  if (count == 0) return Status::Error(EINVAL, "meta: allocate zero object ids");
  std::lock_guard<std::mutex> lock(objects_mu_);
  return objects_.Take(object_owner_, count);
}

Result<std::optional<ReplyRecord>> RocksMetaStore::GetReplyRecord(uint64_t client,
                                                                  uint64_t request) {
  auto value = ReadKey(db_.get(), rocksdb::ReadOptions(), ReplyKey(client, request),
                       "meta: reply record");
  if (!value.ok()) {
    if (value.err() == ENOENT) return std::optional<ReplyRecord>();
    return value.status();
  }
  auto record = DecodeReplyRecord(*value);
  if (!record.ok()) return record.status();
  return std::optional<ReplyRecord>(*record);
}

Status RocksMetaStore::DropReplyRecords(uint64_t client, uint64_t below) {
  // One range tombstone: a client drops its records a few hundred at a
  // time (mds/), so tombstones stay few.
  rocksdb::WriteBatch batch;
  // (Request ids start at 1 and never reach UINT64_MAX.)
  auto deleted = batch.DeleteRange(ReplyKey(client, 0), ReplyKey(client, below));
  if (!deleted.ok()) return Status::Error(EIO, "meta: drop reply records: " + deleted.ToString());
  return WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: drop reply records");
}

Result<std::vector<uint64_t>> RocksMetaStore::ReplyRecordClients() {
  std::vector<uint64_t> clients;
  const std::string prefix(1, kReplyPrefix);
  rocksdb::ReadOptions ro;
  const std::string upper = PrefixSuccessor(prefix);
  rocksdb::Slice upper_slice(upper);
  ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  // One seek per client: past its records to the next one's.
  for (it->Seek(prefix); it->Valid(); ) {
    const rocksdb::Slice key = it->key();
    if (key.size() != 17) return Status::Error(EIO, "meta: a reply record key of a wrong size");
    const uint64_t client = DecodeU64BE(std::string_view(key.data() + 1, 8));
    clients.push_back(client);
    if (client == UINT64_MAX) break;
    it->Seek(ReplyKey(client + 1, 0));
  }
  if (!it->status().ok()) return Status::Error(EIO, "meta: reply records: " + it->status().ToString());
  return clients;
}

Status RocksMetaStore::Sync() { return SyncDb(db_.get()); }

}  // namespace sfs::meta
