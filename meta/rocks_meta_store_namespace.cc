// Create, Link, Unlink, Rmdir: each checks under the stripes of the inodes
// it reads and writes (inode_locks.h) and lands as one batch. A child
// known only from its parent's entry is added to the stripes once read;
// when that cannot be done in order, the operation starts again holding
// all of them.
#include <sys/stat.h>

#include "meta/db_reads.h"
#include "meta/keys.h"
#include "meta/mutation.h"
#include "meta/rocks_meta_store.h"

namespace sfs::meta {
namespace {

bool IsKnownType(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
    case S_IFDIR:
    case S_IFLNK:
    case S_IFIFO:
    case S_IFSOCK:
    case S_IFCHR:
    case S_IFBLK:
      return true;
    default:
      return false;
  }
}

Status NameExists(const std::string& name, uint64_t parent) {
  return Status::Error(EEXIST, "meta: '" + name + "' exists in " + std::to_string(parent));
}

}  // namespace

Result<Inode> RocksMetaStore::Create(uint64_t parent, const std::string& name,
                                     const NewNode& node) {
  SFS_RETURN_IF_ERROR(CheckName(name));
  if (!IsKnownType(node.mode)) {
    return Status::Error(EINVAL, "meta: create '" + name + "' with unknown file type");
  }
  // The new inode needs no stripe: nothing names it before the batch lands.
  auto held = locks_.Lock({parent});
  Mutation m(db_.get(), &usage_);
  auto dir = m.LoadDir(parent);
  SFS_RETURN_IF_ERROR(dir);
  auto existing = m.FindDirent(parent, name);
  SFS_RETURN_IF_ERROR(existing);
  if (existing->has_value()) return NameExists(name, parent);
  // Allocated only once the create is known to succeed, so failed creates do
  // not burn numbers; a refill is its own synced write ahead of the batch.
  auto ino = [&] {
    std::lock_guard<std::mutex> ids_lock(inos_mu_);
    return inos_.Take(ino_owner_, 1);
  }();
  SFS_RETURN_IF_ERROR(ino);

  const bool is_dir = S_ISDIR(node.mode);
  Inode inode;
  inode.ino = *ino;
  inode.mode = node.mode;
  inode.uid = node.uid;
  inode.gid = node.gid;
  inode.rdev = node.rdev;
  inode.nlink = is_dir ? 2 : 1;
  inode.parent = is_dir ? parent : 0;
  inode.projid = (*dir)->projid;  // inherited, as under ext4's PROJINHERIT
  inode.may_have_xattrs = !node.xattrs.empty();
  inode.atime = inode.mtime = inode.ctime = m.now();
  if (S_ISLNK(node.mode)) {
    inode.symlink = node.symlink;
    inode.size = node.symlink.size();
  }
  m.Add(inode);
  m.PutDirent(parent, name, inode.ino, inode.mode);
  if (!node.layout.empty()) m.batch()->Put(LayoutKey(inode.ino), node.layout);
  for (const auto& [xattr, value] : node.xattrs) m.batch()->Put(XattrKey(inode.ino, xattr), value);
  m.TouchDir(*dir);
  if (is_dir) ++(*dir)->nlink;  // the child's ".."
  SFS_RETURN_IF_ERROR(m.Commit("meta: create '" + name + "'"));
  return inode;
}

Result<Inode> RocksMetaStore::Link(uint64_t ino, uint64_t new_parent, const std::string& new_name) {
  SFS_RETURN_IF_ERROR(CheckName(new_name));
  auto held = locks_.Lock({ino, new_parent});
  Mutation m(db_.get(), &usage_);
  auto inode = m.Load(ino);
  SFS_RETURN_IF_ERROR(inode);
  if (S_ISDIR((*inode)->mode)) {
    return Status::Error(EPERM, "meta: hard link to directory " + std::to_string(ino));
  }
  // An unlinked (orphaned) file must not come back to life: its objects are
  // about to be freed. linkat(2) says ENOENT here too.
  if ((*inode)->nlink == 0) {
    return Status::Error(ENOENT, "meta: link to unlinked inode " + std::to_string(ino));
  }
  auto dir = m.LoadDir(new_parent);
  SFS_RETURN_IF_ERROR(dir);
  // ln and rm would otherwise do the rename across projects that rename
  // refuses (ext4 and XFS refuse the link too).
  SFS_RETURN_IF_ERROR(CheckProjectMove(**inode, **dir));
  auto existing = m.FindDirent(new_parent, new_name);
  SFS_RETURN_IF_ERROR(existing);
  if (existing->has_value()) return NameExists(new_name, new_parent);

  ++(*inode)->nlink;
  (*inode)->ctime = m.now();
  m.TouchDir(*dir);
  m.PutDirent(new_parent, new_name, ino, (*inode)->mode);
  Inode result = **inode;
  SFS_RETURN_IF_ERROR(m.Commit("meta: link '" + new_name + "'"));
  return result;
}

Result<Removed> RocksMetaStore::Unlink(uint64_t parent, const std::string& name,
                                       const PurgeNow& purge_now) {
  SFS_RETURN_IF_ERROR(CheckName(name));
  std::vector<uint64_t> inos = {parent};
  for (;;) {
    auto held = locks_.Lock(inos);
    Mutation m(db_.get(), &usage_);
    auto dir = m.LoadDir(parent);
    SFS_RETURN_IF_ERROR(dir);
    auto d = m.FindExisting(parent, name);
    SFS_RETURN_IF_ERROR(d);
    if (S_ISDIR(d->type)) return Status::Error(EISDIR, "meta: unlink of directory '" + name + "'");
    if (!held.Add(d->ino)) {
      inos = held.wanted();
      continue;
    }
    auto child = m.Load(d->ino);
    SFS_RETURN_IF_ERROR(child);

    m.DeleteDirent(parent, name);
    m.TouchDir(*dir);
    if (purge_now && S_ISREG((*child)->mode) && (*child)->nlink <= 1) {
      // The last link: ask before marking an orphan, so a purge writes
      // neither the mark nor its deletion.
      const uint64_t ino = (*child)->ino;
      auto layout = ReadKey(db_.get(), rocksdb::ReadOptions(), LayoutKey(ino),
                            "meta: layout of " + std::to_string(ino));
      if (!layout.ok() && layout.err() != ENOENT) return layout.status();
      if (purge_now(ino, layout.ok() ? *layout : std::string())) {
        Removed removed;
        removed.ino = ino;
        removed.mode = (*child)->mode;
        removed.purged = true;
        m.NoteRemoved(removed);
        // A linked file has no mark; nlink 0 under a live name is damage,
        // so any mark goes too.
        SFS_RETURN_IF_ERROR(m.DeleteInode(ino, /*has_orphan_mark=*/(*child)->nlink == 0));
        SFS_RETURN_IF_ERROR(m.Commit("meta: unlink '" + name + "'"));
        return removed;
      }
    }
    auto removed = m.DropLink(*child);
    SFS_RETURN_IF_ERROR(removed);
    SFS_RETURN_IF_ERROR(m.Commit("meta: unlink '" + name + "'"));
    return *removed;
  }
}

Status RocksMetaStore::Rmdir(uint64_t parent, const std::string& name) {
  SFS_RETURN_IF_ERROR(CheckName(name));
  std::vector<uint64_t> inos = {parent};
  for (;;) {
    auto held = locks_.Lock(inos);
    Mutation m(db_.get(), &usage_);
    auto dir = m.LoadDir(parent);
    SFS_RETURN_IF_ERROR(dir);
    auto d = m.FindExisting(parent, name);
    SFS_RETURN_IF_ERROR(d);
    if (!S_ISDIR(d->type)) {
      return Status::Error(ENOTDIR, "meta: rmdir of non-directory '" + name + "'");
    }
    // The child's stripe keeps creates out of it between the check and
    // the batch.
    if (!held.Add(d->ino)) {
      inos = held.wanted();
      continue;
    }
    auto children = m.HasChildren(d->ino);
    SFS_RETURN_IF_ERROR(children);
    if (*children) return Status::Error(ENOTEMPTY, "meta: rmdir of non-empty '" + name + "'");

    m.DeleteDirent(parent, name);
    SFS_RETURN_IF_ERROR(m.DeleteInode(d->ino));
    --(*dir)->nlink;  // the child's ".." is gone
    m.TouchDir(*dir);
    return m.Commit("meta: rmdir '" + name + "'");
  }
}

}  // namespace sfs::meta
