// Internal to meta/: one namespace mutation being assembled into a single
// WriteBatch. Inodes are loaded once and edited in place, so an operation that
// reaches the same inode in two roles (a rename within one directory, an
// exchange of two hard links' parents) sees its own edits and writes the
// inode once. Nothing reaches the database until Commit, which also
// writes the quota usage the mutation moved (every inode's charges as
// loaded against its charges as committed), in the same batch, as merge
// operands (meta/keys.h): no lock orders it against other batches.
//
// REQUIRES: the caller holds the stripes (inode_locks.h) of every inode
// whose records it reads or writes, from the first read until Commit has
// returned, so the reads it checks against cannot change underneath it.
// A new inode (Add) needs none: nothing names it before the batch lands.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "meta/keys.h"
#include "meta/meta_store.h"
#include "meta/usage_book.h"

namespace sfs::meta {

class Mutation {
 public:
  Mutation(rocksdb::DB* db, UsageBook* usage) : db_(db), usage_(usage), now_(Timestamp::Now()) {}
  Mutation(const Mutation&) = delete;
  Mutation& operator=(const Mutation&) = delete;

  // The inode as edited so far; the pointer stays valid until Commit. ENOENT
  // if it does not exist or this mutation deleted it.
  Result<Inode*> Load(uint64_t ino);
  // As Load, plus ENOTDIR if the inode is not a directory.
  Result<Inode*> LoadDir(uint64_t ino);
  // Adds a new inode to be written.
  Inode* Add(const Inode& inode);

  Result<std::optional<DirentValue>> FindDirent(uint64_t parent, std::string_view name);
  // As FindDirent, but a missing name is ENOENT.
  Result<DirentValue> FindExisting(uint64_t parent, const std::string& name);
  Result<bool> HasChildren(uint64_t dir);
  void PutDirent(uint64_t parent, std::string_view name, uint64_t ino, uint32_t mode);
  void DeleteDirent(uint64_t parent, std::string_view name);

  // Deletes the inode with its layout, xattrs and orphan mark (unless the
  // caller knows it has none); pointers from Load to it dangle afterwards.
  // Its usage goes with it (it is loaded first if it was not, so its
  // charges are known; one that cannot be read charges nothing).
  Status DeleteInode(uint64_t ino, bool has_orphan_mark = true);
  void MarkOrphan(uint64_t ino);
  // Drops one link of a non-directory whose name is gone, as unlink does
  // (ctime = now): at zero a regular file becomes an orphan, anything else
  // is deleted (and `inode` then dangles).
  Result<Removed> DropLink(Inode* inode);

  // A directory whose entries changed: mtime = ctime = now.
  void TouchDir(Inode* dir) const { dir->mtime = dir->ctime = now_; }

  rocksdb::WriteBatch* batch() { return &batch_; }
  // One clock reading for the whole mutation, so the times it sets agree.
  const Timestamp& now() const { return now_; }

  // The link the operation dropped, for its reply record (DropLink calls
  // it; an unlink that purges at once tells it itself).
  void NoteRemoved(const Removed& removed) { reply_.removed = removed; }

  // Writes every loaded or added inode, the usage they moved and the
  // batch, atomically, unsynced; then tells the usage book. Under a
  // pending ReplyRecordScope of this thread, a mutation that changes
  // something writes the scope's reply record in the same batch.
  Status Commit(std::string_view context);

 private:
  rocksdb::DB* db_;
  UsageBook* usage_;
  const Timestamp now_;
  rocksdb::WriteBatch batch_;
  std::map<uint64_t, Inode> inodes_;
  std::set<uint64_t> deleted_;
  ReplyRecord reply_;  // what a reply record of this mutation keeps
  // What each inode read from the database counted for when it was read.
  std::map<uint64_t, std::vector<Charge>> loaded_charges_;
};

}  // namespace sfs::meta
