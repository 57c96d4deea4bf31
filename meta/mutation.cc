#include "meta/mutation.h"

#include "meta/db_write.h"

#include <sys/stat.h>

#include <vector>

#include "meta/db_reads.h"
#include "meta/rocks_status.h"

namespace sfs::meta {

Result<Inode*> Mutation::Load(uint64_t ino) {
  if (deleted_.count(ino)) {
    return Status::Error(ENOENT, "meta: inode " + std::to_string(ino) + " deleted");
  }
  auto it = inodes_.find(ino);
  if (it != inodes_.end()) return &it->second;
  auto inode = ReadInode(db_, rocksdb::ReadOptions(), ino);
  SFS_RETURN_IF_ERROR(inode);
  loaded_charges_.emplace(ino, ChargesOf(*inode));
  return &inodes_.emplace(ino, std::move(*inode)).first->second;
}

Result<Inode*> Mutation::LoadDir(uint64_t ino) {
  auto inode = Load(ino);
  SFS_RETURN_IF_ERROR(inode);
  if (!S_ISDIR((*inode)->mode)) {
    return Status::Error(ENOTDIR, "meta: inode " + std::to_string(ino) + " is not a directory");
  }
  return inode;
}

Inode* Mutation::Add(const Inode& inode) {
  deleted_.erase(inode.ino);
  if (reply_.created_ino == 0) reply_.created_ino = inode.ino;
  Inode* slot = &inodes_[inode.ino];
  *slot = inode;
  return slot;
}

Result<std::optional<DirentValue>> Mutation::FindDirent(uint64_t parent, std::string_view name) {
  return ReadDirent(db_, rocksdb::ReadOptions(), parent, name);
}

Result<DirentValue> Mutation::FindExisting(uint64_t parent, const std::string& name) {
  auto found = FindDirent(parent, name);
  if (!found.ok()) return found.status();
  if (!found->has_value()) return NoName(name, parent);
  return **found;
}

Result<bool> Mutation::HasChildren(uint64_t dir) {
  bool any = false;
  Status s = ScanPrefix(db_, rocksdb::ReadOptions(), DirentPrefix(dir),
                        [&](std::string_view, std::string_view) {
                          any = true;
                          return false;
                        });
  SFS_RETURN_IF_ERROR(s);
  return any;
}

void Mutation::PutDirent(uint64_t parent, std::string_view name, uint64_t ino, uint32_t mode) {
  batch_.Put(DirentKey(parent, name), EncodeDirent(ino, mode));
}

void Mutation::DeleteDirent(uint64_t parent, std::string_view name) {
  batch_.Delete(DirentKey(parent, name));
}

Status Mutation::DeleteInode(uint64_t ino, bool has_orphan_mark) {
  if (!inodes_.count(ino) && !deleted_.count(ino)) (void)Load(ino);
  // Scanned for unless the record says none were ever set (an unreadable
  // or missing record: scanned for, so none is left behind).
  const auto loaded = inodes_.find(ino);
  std::vector<std::string> xattr_keys;
  if (loaded == inodes_.end() || loaded->second.may_have_xattrs) {
    Status s = ScanPrefix(db_, rocksdb::ReadOptions(), XattrPrefix(ino),
                          [&](std::string_view key, std::string_view) {
                            xattr_keys.emplace_back(key);
                            return true;
                          });
    SFS_RETURN_IF_ERROR(s);
  }
  for (const auto& key : xattr_keys) batch_.Delete(key);
  batch_.Delete(InodeKey(ino));
  batch_.Delete(LayoutKey(ino));
  if (has_orphan_mark) batch_.Delete(OrphanKey(ino));
  inodes_.erase(ino);
  deleted_.insert(ino);
  return Status::Ok();
}

void Mutation::MarkOrphan(uint64_t ino) { batch_.Put(OrphanKey(ino), rocksdb::Slice()); }

Result<Removed> Mutation::DropLink(Inode* inode) {
  Removed removed;
  removed.ino = inode->ino;
  removed.mode = inode->mode;
  // A dirent without a link count would be damage; never wrap below zero.
  if (inode->nlink > 0) --inode->nlink;
  inode->ctime = now_;
  removed.nlink_left = inode->nlink;
  if (inode->nlink == 0) {
    if (S_ISREG(inode->mode)) {
      // The file's objects outlive the name: the caller frees them and Purges.
      MarkOrphan(inode->ino);
      removed.orphaned = true;
    } else {
      SFS_RETURN_IF_ERROR(DeleteInode(inode->ino));
    }
  }
  NoteRemoved(removed);
  return removed;
}

namespace {
thread_local ReplyRecordScope* tls_reply_scope = nullptr;
}  // namespace

ReplyRecordScope::ReplyRecordScope(uint64_t client, uint64_t request)
    : client_(client), request_(request) {
  tls_reply_scope = this;
}

ReplyRecordScope::~ReplyRecordScope() {
  if (tls_reply_scope == this) tls_reply_scope = nullptr;
}

ReplyRecordScope* ReplyRecordScope::Pending() {
  return tls_reply_scope != nullptr && !tls_reply_scope->written() ? tls_reply_scope : nullptr;
}

Status Mutation::Commit(std::string_view context) {
  std::map<QuotaId, Charge> deltas;
  for (const auto& [ino, charges] : loaded_charges_) AddCharges(charges, -1, &deltas);
  for (const auto& [ino, inode] : inodes_) {
    batch_.Put(InodeKey(ino), EncodeInode(inode));
    AddCharges(ChargesOf(inode), +1, &deltas);
  }
  if (ReplyRecordScope* scope = ReplyRecordScope::Pending();
      scope != nullptr && (!inodes_.empty() || !deleted_.empty())) {
    batch_.Put(ReplyKey(scope->client(), scope->request()), EncodeReplyRecord(reply_));
  }
  const UsageDeltas usage = usage_->Deltas(deltas, now_.sec);
  MergeUsageDeltas(usage, &batch_);
  SFS_RETURN_IF_ERROR(WriteToDb(db_, /*sync=*/false, &batch_, context));
  if (ReplyRecordScope* scope = ReplyRecordScope::Pending();
      scope != nullptr && (!inodes_.empty() || !deleted_.empty())) {
    scope->MarkWritten();
  }
  usage_->Add(usage);
  return Status::Ok();
}

}  // namespace sfs::meta
