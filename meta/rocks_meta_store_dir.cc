// Directory listing in batches: the entries of a directory are the key range
// D<ino:8 BE><name>, in name order, so a batch is one short iterator walk from
// a seek position, and a listing needs no state in the store between batches.
#include <sys/stat.h>

#include <memory>

#include <rocksdb/iterator.h>

#include "meta/db_reads.h"
#include "meta/keys.h"
#include "meta/rocks_meta_store.h"
#include "meta/rocks_status.h"

namespace sfs::meta {

Result<std::vector<DirEntry>> RocksMetaStore::ReadDirAfter(uint64_t ino, const std::string& after,
                                                           size_t max_entries) {
  // One snapshot for the inode check and the walk: a batch never mixes
  // entries from before and after a write.
  ScopedSnapshot snap(db_.get());
  auto dir = ReadInode(db_.get(), snap.options(), ino);
  SFS_RETURN_IF_ERROR(dir);
  if (!S_ISDIR(dir->mode)) {
    return Status::Error(ENOTDIR, "meta: readdir of non-directory " + std::to_string(ino));
  }
  std::vector<DirEntry> out;
  if (max_entries == 0) return out;

  const std::string prefix = DirentPrefix(ino);
  const std::string upper = PrefixSuccessor(prefix);
  const rocksdb::Slice upper_slice(upper);
  rocksdb::ReadOptions ro = snap.options();
  if (!upper.empty()) ro.iterate_upper_bound = &upper_slice;
  // The iterator lives for this call only: an open iterator pins memtables
  // and SST files, and a directory handle may stay open for hours.
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro));
  // Under bytewise order, key + '\0' is the smallest key greater than key, so
  // this seek lands on the first name strictly after `after` (and, for "",
  // on the first name: no name is empty).
  std::string start = DirentKey(ino, after);
  start.push_back('\0');
  for (it->Seek(start); it->Valid() && out.size() < max_entries; it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    if (key.substr(0, prefix.size()) != prefix) break;
    auto d = DecodeDirent(std::string_view(it->value().data(), it->value().size()));
    SFS_RETURN_IF_ERROR(d);
    out.push_back(DirEntry{std::string(KeySuffix(key, prefix.size())), d->ino, d->type});
  }
  SFS_RETURN_IF_ERROR(FromRocks(it->status(), "meta: readdir " + std::to_string(ino)));
  return out;
}

}  // namespace sfs::meta
