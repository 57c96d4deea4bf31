// Per-inode state: attributes, layout blobs, xattrs, and orphan cleanup.
#include <sys/stat.h>
#include <sys/xattr.h>

#include "meta/db_reads.h"
#include "meta/db_write.h"
#include "meta/keys.h"
#include "meta/mutation.h"
#include "meta/rocks_meta_store.h"
#include "meta/rocks_status.h"

namespace sfs::meta {
namespace {

// The errors getxattr(2) and friends give for a bad attribute name.
Status CheckXattrName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLen) {
    return Status::Error(ERANGE, "meta: bad xattr name length " + std::to_string(name.size()));
  }
  return Status::Ok();
}

Status NoXattr(uint64_t ino, const std::string& name) {
  return Status::Error(ENODATA, "meta: no xattr '" + name + "' on " + std::to_string(ino));
}

}  // namespace

Result<Inode> RocksMetaStore::SetAttr(uint64_t ino, const AttrChange& change) {
  auto held = locks_.Lock({ino});
  Mutation m(db_.get(), &usage_);
  auto loaded = m.Load(ino);
  SFS_RETURN_IF_ERROR(loaded);
  Inode* inode = *loaded;
  if (change.size) {
    if (S_ISDIR(inode->mode)) return Status::Error(EISDIR, "meta: truncate of a directory");
    if (!S_ISREG(inode->mode)) return Status::Error(EINVAL, "meta: truncate of a special file");
  }
  if (change.projid && !S_ISDIR(inode->mode)) {
    return Status::Error(EINVAL, "meta: a project id is set on directories only, not on inode " +
                                     std::to_string(ino));
  }
  if (change.projid) inode->projid = *change.projid;
  if (change.mode) inode->mode = (inode->mode & S_IFMT) | (*change.mode & 07777);
  if (change.kill_setid) inode->mode = WithoutSetId(inode->mode);
  if (change.uid) inode->uid = *change.uid;
  if (change.gid) inode->gid = *change.gid;
  if (change.atime) inode->atime = *change.atime;
  if (change.mtime) inode->mtime = *change.mtime;
  if (change.size) {
    inode->size = *change.size;
    // truncate(2) updates mtime even when the size does not change.
    if (!change.mtime) inode->mtime = m.now();
  }
  inode->ctime = m.now();
  Inode result = *inode;
  SFS_RETURN_IF_ERROR(m.Commit("meta: setattr " + std::to_string(ino)));
  return result;
}

Result<Inode> RocksMetaStore::NoteWrite(uint64_t ino, uint64_t end, bool kill_suid,
                                        bool touch_times) {
  auto held = locks_.Lock({ino});
  Mutation m(db_.get(), &usage_);
  auto loaded = m.Load(ino);
  SFS_RETURN_IF_ERROR(loaded);
  Inode* inode = *loaded;
  if (end > inode->size) inode->size = end;
  if (touch_times) inode->mtime = inode->ctime = m.now();
  if (kill_suid) inode->mode = WithoutSetId(inode->mode);
  Inode result = *inode;
  SFS_RETURN_IF_ERROR(m.Commit("meta: note write " + std::to_string(ino)));
  return result;
}

// --- layouts ---

Result<std::string> RocksMetaStore::GetLayout(uint64_t ino) {
  return ReadKey(db_.get(), rocksdb::ReadOptions(), LayoutKey(ino),
                 "meta: layout of " + std::to_string(ino));
}

Status RocksMetaStore::PutLayout(uint64_t ino, const std::string& blob, uint64_t allocated) {
  auto held = locks_.Lock({ino});  // so the inode cannot vanish under the check
  Mutation m(db_.get(), &usage_);
  auto loaded = m.Load(ino);
  SFS_RETURN_IF_ERROR(loaded);
  (*loaded)->allocated = allocated;
  m.batch()->Put(LayoutKey(ino), blob);
  return m.Commit("meta: put layout of " + std::to_string(ino));
}

// --- xattrs ---

Result<std::string> RocksMetaStore::GetXattr(uint64_t ino, const std::string& name) {
  SFS_RETURN_IF_ERROR(CheckXattrName(name));
  ScopedSnapshot snap(db_.get());
  auto value = ReadKey(db_.get(), snap.options(), XattrKey(ino, name), "meta: getxattr");
  if (value.err() != ENOENT) return value;
  SFS_RETURN_IF_ERROR(ReadInode(db_.get(), snap.options(), ino));
  return NoXattr(ino, name);
}

Result<std::vector<std::string>> RocksMetaStore::ListXattr(uint64_t ino) {
  ScopedSnapshot snap(db_.get());
  auto inode = ReadInode(db_.get(), snap.options(), ino);
  SFS_RETURN_IF_ERROR(inode);
  std::vector<std::string> names;
  if (!inode->may_have_xattrs) return names;
  const std::string prefix = XattrPrefix(ino);
  Status s =
      ScanPrefix(db_.get(), snap.options(), prefix, [&](std::string_view key, std::string_view) {
        names.emplace_back(KeySuffix(key, prefix.size()));
        return true;
      });
  SFS_RETURN_IF_ERROR(s);
  return names;
}

Status RocksMetaStore::SetXattr(uint64_t ino, const std::string& name, const std::string& value,
                                int flags) {
  SFS_RETURN_IF_ERROR(CheckXattrName(name));
  if (value.size() > kMaxXattrValue) {
    return Status::Error(E2BIG, "meta: xattr value of " + std::to_string(value.size()) + " bytes");
  }
  if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) {
    return Status::Error(EINVAL, "meta: bad setxattr flags " + std::to_string(flags));
  }
  auto held = locks_.Lock({ino});
  Mutation m(db_.get(), &usage_);
  auto inode = m.Load(ino);
  SFS_RETURN_IF_ERROR(inode);
  auto old = ReadKey(db_.get(), rocksdb::ReadOptions(), XattrKey(ino, name), "meta: setxattr");
  if (!old.ok() && old.err() != ENOENT) return old.status();
  if (old.ok() && (flags & XATTR_CREATE)) {
    return Status::Error(EEXIST, "meta: xattr '" + name + "' exists");
  }
  if (!old.ok() && (flags & XATTR_REPLACE)) return NoXattr(ino, name);
  m.batch()->Put(XattrKey(ino, name), value);
  (*inode)->may_have_xattrs = true;
  (*inode)->ctime = m.now();
  return m.Commit("meta: setxattr '" + name + "'");
}

Status RocksMetaStore::RemoveXattr(uint64_t ino, const std::string& name) {
  SFS_RETURN_IF_ERROR(CheckXattrName(name));
  auto held = locks_.Lock({ino});
  Mutation m(db_.get(), &usage_);
  auto inode = m.Load(ino);
  SFS_RETURN_IF_ERROR(inode);
  auto old = ReadKey(db_.get(), rocksdb::ReadOptions(), XattrKey(ino, name), "meta: removexattr");
  if (old.err() == ENOENT) return NoXattr(ino, name);
  SFS_RETURN_IF_ERROR(old);
  m.batch()->Delete(XattrKey(ino, name));
  (*inode)->ctime = m.now();
  return m.Commit("meta: removexattr '" + name + "'");
}

// --- orphans ---

namespace {

// The inode numbers of every O<ino> or W<ino> mark, in order.
Result<std::vector<uint64_t>> MarkedInos(rocksdb::DB* db, char prefix) {
  std::vector<uint64_t> out;
  Status bad;
  Status s = ScanPrefix(db, rocksdb::ReadOptions(), std::string(1, prefix),
                        [&](std::string_view key, std::string_view) {
                          auto ino = DecodeInoKey(key);
                          if (!ino.ok()) {
                            bad = ino.status();
                            return false;
                          }
                          out.push_back(*ino);
                          return true;
                        });
  SFS_RETURN_IF_ERROR(s);
  SFS_RETURN_IF_ERROR(bad);
  return out;
}

}  // namespace

Result<std::vector<uint64_t>> RocksMetaStore::Orphans() {
  return MarkedInos(db_.get(), kOrphanPrefix);
}

// Purging twice (a crash between freeing objects and the purge, then the
// mount-time sweep) must be harmless, so a missing inode is not an error.
// A still-linked inode is refused: deleting it would leave dangling dirents.
Status RocksMetaStore::Purge(uint64_t ino) {
  auto held = locks_.Lock({ino});
  Mutation m(db_.get(), &usage_);
  auto inode = m.Load(ino);
  if (!inode.ok() && inode.err() != ENOENT) return inode.status();
  if (inode.ok() && (*inode)->nlink > 0) {
    return Status::Error(EBUSY, "meta: purge of linked inode " + std::to_string(ino));
  }
  SFS_RETURN_IF_ERROR(m.DeleteInode(ino));
  return m.Commit("meta: purge " + std::to_string(ino));
}

}  // namespace sfs::meta

namespace sfs::meta {

// --- writing marks ---

// A plain put or delete outside the mutation locks: the mark is one key of
// its own that no read-check-write of another mutation looks at. The
// erase skips the WAL (a memtable insert, no system call): a kill may lose
// it, which leaves a mark whose settling at the next mount finds nothing
// to do. A later put of the same key is logged, so an erase lost in a
// crash can never hide it.
Status RocksMetaStore::MarkWriting(uint64_t ino, bool writing) {
  rocksdb::WriteBatch batch;
  if (writing) {
    batch.Put(WritingKey(ino), rocksdb::Slice());
  } else {
    batch.Delete(WritingKey(ino));
  }
  return WriteToDb(db_.get(), /*sync=*/false, &batch, "meta: writing mark", /*logged=*/writing);
}

Result<std::vector<uint64_t>> RocksMetaStore::Writing() {
  return MarkedInos(db_.get(), kWritingPrefix);
}

}  // namespace sfs::meta
