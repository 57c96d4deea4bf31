// Internal to meta/: typed reads of the schema in keys.h, each against an
// optional snapshot so that a caller reading several keys sees one state.
#pragma once

#include <rocksdb/db.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "meta/keys.h"
#include "meta/meta_store.h"

namespace sfs::meta {

// Holds a RocksDB snapshot for its lifetime; options() reads from it.
class ScopedSnapshot {
 public:
  explicit ScopedSnapshot(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {
    options_.snapshot = snapshot_;
  }
  ~ScopedSnapshot() { db_->ReleaseSnapshot(snapshot_); }
  ScopedSnapshot(const ScopedSnapshot&) = delete;
  ScopedSnapshot& operator=(const ScopedSnapshot&) = delete;
  const rocksdb::ReadOptions& options() const { return options_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
  rocksdb::ReadOptions options_;
};

// ENOENT if the key is absent.
Result<std::string> ReadKey(rocksdb::DB* db, const rocksdb::ReadOptions& ro, std::string_view key,
                            std::string_view context);
Result<Inode> ReadInode(rocksdb::DB* db, const rocksdb::ReadOptions& ro, uint64_t ino);
// nullopt if the name is absent.
Result<std::optional<DirentValue>> ReadDirent(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
                                              uint64_t parent, std::string_view name);
Result<uint64_t> ReadCounter(rocksdb::DB* db, std::string_view key);

// Calls `fn(key, value)` for every key starting with `prefix`, in key order,
// until it returns false. `ro` is copied so its upper bound can be set.
using ScanFn = std::function<bool(std::string_view key, std::string_view value)>;
Status ScanPrefix(rocksdb::DB* db, rocksdb::ReadOptions ro, std::string_view prefix,
                  const ScanFn& fn);

// ENOENT for a name missing from directory `parent`.
Status NoName(const std::string& name, uint64_t parent);

// ENAMETOOLONG over kMaxNameLen; EINVAL for "", ".", "..", a '/' or a NUL.
Status CheckName(std::string_view name);

}  // namespace sfs::meta
