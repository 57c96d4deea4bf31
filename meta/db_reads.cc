#include "meta/db_reads.h"

#include <memory>

#include "meta/rocks_status.h"

namespace sfs::meta {

Result<std::string> ReadKey(rocksdb::DB* db, const rocksdb::ReadOptions& ro, std::string_view key,
                            std::string_view context) {
  std::string value;
  rocksdb::Status s = db->Get(ro, rocksdb::Slice(key.data(), key.size()), &value);
  if (!s.ok()) return FromRocks(s, context);
  return value;
}

Result<Inode> ReadInode(rocksdb::DB* db, const rocksdb::ReadOptions& ro, uint64_t ino) {
  auto value = ReadKey(db, ro, InodeKey(ino), "meta: inode " + std::to_string(ino));
  SFS_RETURN_IF_ERROR(value);
  return DecodeInode(ino, *value);
}

Result<std::optional<DirentValue>> ReadDirent(rocksdb::DB* db, const rocksdb::ReadOptions& ro,
                                              uint64_t parent, std::string_view name) {
  auto value = ReadKey(db, ro, DirentKey(parent, name), "meta: dirent");
  if (value.err() == ENOENT) return std::optional<DirentValue>();
  SFS_RETURN_IF_ERROR(value);
  auto d = DecodeDirent(*value);
  SFS_RETURN_IF_ERROR(d);
  return std::optional<DirentValue>(*d);
}

Result<uint64_t> ReadCounter(rocksdb::DB* db, std::string_view key) {
  auto value = ReadKey(db, rocksdb::ReadOptions(), key, "meta: read " + std::string(key));
  // A formatted store always has both counters; a missing one is damage.
  if (value.err() == ENOENT) return Status::Error(EIO, "meta: missing " + std::string(key));
  SFS_RETURN_IF_ERROR(value);
  return DecodeCounter(*value);
}

Status ScanPrefix(rocksdb::DB* db, rocksdb::ReadOptions ro, std::string_view prefix,
                  const ScanFn& fn) {
  std::string upper = PrefixSuccessor(prefix);
  rocksdb::Slice upper_slice(upper);
  if (!upper.empty()) ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro));
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    if (key.substr(0, prefix.size()) != prefix) break;
    if (!fn(key, std::string_view(it->value().data(), it->value().size()))) break;
  }
  return FromRocks(it->status(), "meta: scan");
}

Status NoName(const std::string& name, uint64_t parent) {
  return Status::Error(ENOENT, "meta: no '" + name + "' in " + std::to_string(parent));
}

Status CheckName(std::string_view name) {
  if (name.size() > kMaxNameLen) return Status::Error(ENAMETOOLONG, "meta: name too long");
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos) {
    return Status::Error(EINVAL, "meta: invalid name '" + std::string(name) + "'");
  }
  return Status::Ok();
}

}  // namespace sfs::meta
