// Rename in its three modes. POSIX rules are checked in the order Linux
// checks them, all under the stripes of both directories and of the inodes
// the two names give (and, between two directories, rename_mu_ first), and
// the result lands as one batch, so no reader ever sees a name in both
// places or in neither.
#include <sys/stat.h>

#include "meta/db_reads.h"
#include "meta/keys.h"
#include "meta/mutation.h"
#include "meta/rocks_meta_store.h"

namespace sfs::meta {
namespace {

// Deeper than any real tree; only a damaged parent chain gets here.
constexpr int kMaxDepth = 1 << 20;

// A directory moved from `from` to `to` (different parents): its ".." moves.
void MoveDir(Inode* moved, Inode* from, Inode* to) {
  moved->parent = to->ino;
  --from->nlink;
  ++to->nlink;
}

}  // namespace

// A directory with a project id hands it to everything in it; what comes
// from elsewhere with another one would escape its project's quota, so it
// is refused with EXDEV, as ext4, XFS and Lustre do: mv then copies (and
// the copy counts for the project) and removes the original. (A rename
// within one directory moves nothing and is not checked.)
Status CheckProjectMove(const Inode& moved, const Inode& to_dir) {
  if (to_dir.projid == 0 || moved.projid == to_dir.projid) return Status::Ok();
  return Status::Error(EXDEV, "meta: inode " + std::to_string(moved.ino) + " of project " +
                                  std::to_string(moved.projid) + " cannot move into directory " +
                                  std::to_string(to_dir.ino) + " of project " +
                                  std::to_string(to_dir.projid));
}

Status RocksMetaStore::CheckNotBelow(uint64_t dir, uint64_t ancestor) {
  uint64_t cur = dir;
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    if (cur == ancestor) {
      return Status::Error(
          EINVAL, "meta: cannot move directory " + std::to_string(ancestor) + " below itself");
    }
    if (cur == kRootIno) return Status::Ok();
    auto inode = ReadInode(db_.get(), rocksdb::ReadOptions(), cur);
    SFS_RETURN_IF_ERROR(inode);
    if (!S_ISDIR(inode->mode) || inode->parent == 0) {
      return Status::Error(EIO, "meta: broken parent chain at " + std::to_string(cur));
    }
    cur = inode->parent;
  }
  return Status::Error(EIO, "meta: parent chain loops above " + std::to_string(dir));
}

Result<std::optional<Removed>> RocksMetaStore::Rename(uint64_t parent, const std::string& name,
                                                      uint64_t new_parent,
                                                      const std::string& new_name,
                                                      RenameMode mode) {
  SFS_RETURN_IF_ERROR(CheckName(name));
  SFS_RETURN_IF_ERROR(CheckName(new_name));
  if (mode == RenameMode::kExchange) return Exchange(parent, name, new_parent, new_name);

  std::unique_lock<std::mutex> rename_lock(rename_mu_, std::defer_lock);
  if (parent != new_parent) rename_lock.lock();
  std::vector<uint64_t> inos = {parent, new_parent};
  for (;;) {
    auto held = locks_.Lock(inos);
    Mutation m(db_.get(), &usage_);
    auto src_dir = m.LoadDir(parent);
    SFS_RETURN_IF_ERROR(src_dir);
    auto dst_dir = m.LoadDir(new_parent);
    SFS_RETURN_IF_ERROR(dst_dir);
    auto src = m.FindExisting(parent, name);
    SFS_RETURN_IF_ERROR(src);
    auto dst = m.FindDirent(new_parent, new_name);
    SFS_RETURN_IF_ERROR(dst);
    if (dst->has_value() && mode == RenameMode::kNoReplace) {
      return Status::Error(EEXIST, "meta: rename target '" + new_name + "' exists");
    }
    // Two names of one inode (or one name onto itself): POSIX says do nothing.
    if (dst->has_value() && (*dst)->ino == src->ino) return std::optional<Removed>();
    if (!held.Add(src->ino) || (dst->has_value() && !held.Add((*dst)->ino))) {
      inos = held.wanted();
      continue;
    }

    const bool src_is_dir = S_ISDIR(src->type);
    if (src_is_dir && parent != new_parent) {
      SFS_RETURN_IF_ERROR(CheckNotBelow(new_parent, src->ino));
    }
    auto moved = m.Load(src->ino);
    SFS_RETURN_IF_ERROR(moved);
    if (parent != new_parent) SFS_RETURN_IF_ERROR(CheckProjectMove(**moved, **dst_dir));

    std::optional<Removed> replaced;
    if (dst->has_value()) {
      const bool dst_is_dir = S_ISDIR((*dst)->type);
      if (src_is_dir && !dst_is_dir) {
        return Status::Error(ENOTDIR,
                             "meta: rename directory over non-directory '" + new_name + "'");
      }
      if (!src_is_dir && dst_is_dir) {
        return Status::Error(EISDIR,
                             "meta: rename non-directory over directory '" + new_name + "'");
      }
      auto victim = m.Load((*dst)->ino);
      SFS_RETURN_IF_ERROR(victim);
      if (dst_is_dir) {
        auto children = m.HasChildren((*dst)->ino);
        SFS_RETURN_IF_ERROR(children);
        if (*children) {
          return Status::Error(ENOTEMPTY, "meta: rename over non-empty '" + new_name + "'");
        }
        replaced = Removed{(*victim)->ino, (*victim)->mode, 0, false};
        m.NoteRemoved(*replaced);
        SFS_RETURN_IF_ERROR(m.DeleteInode((*dst)->ino));
        --(*dst_dir)->nlink;  // the victim's ".." is gone
      } else {
        auto dropped = m.DropLink(*victim);
        SFS_RETURN_IF_ERROR(dropped);
        replaced = *dropped;
      }
    }

    m.DeleteDirent(parent, name);
    m.PutDirent(new_parent, new_name, src->ino, src->type);
    if (src_is_dir && parent != new_parent) MoveDir(*moved, *src_dir, *dst_dir);
    (*moved)->ctime = m.now();
    m.TouchDir(*src_dir);
    m.TouchDir(*dst_dir);
    SFS_RETURN_IF_ERROR(m.Commit("meta: rename '" + name + "' to '" + new_name + "'"));
    return replaced;
  }
}

Result<std::optional<Removed>> RocksMetaStore::Exchange(uint64_t parent, const std::string& name,
                                                        uint64_t new_parent,
                                                        const std::string& new_name) {
  const bool cross = parent != new_parent;
  std::unique_lock<std::mutex> rename_lock(rename_mu_, std::defer_lock);
  if (cross) rename_lock.lock();
  std::vector<uint64_t> inos = {parent, new_parent};
  for (;;) {
    auto held = locks_.Lock(inos);
    Mutation m(db_.get(), &usage_);
    auto a_dir = m.LoadDir(parent);
    SFS_RETURN_IF_ERROR(a_dir);
    auto b_dir = m.LoadDir(new_parent);
    SFS_RETURN_IF_ERROR(b_dir);
    auto a = m.FindExisting(parent, name);
    SFS_RETURN_IF_ERROR(a);
    auto b = m.FindExisting(new_parent, new_name);
    SFS_RETURN_IF_ERROR(b);
    if (a->ino == b->ino) return std::optional<Removed>();
    if (!held.Add(a->ino) || !held.Add(b->ino)) {
      inos = held.wanted();
      continue;
    }

    const bool a_is_dir = S_ISDIR(a->type);
    const bool b_is_dir = S_ISDIR(b->type);
    // Each directory lands in the other's parent; neither may land below itself.
    if (cross && a_is_dir) SFS_RETURN_IF_ERROR(CheckNotBelow(new_parent, a->ino));
    if (cross && b_is_dir) SFS_RETURN_IF_ERROR(CheckNotBelow(parent, b->ino));
    auto a_inode = m.Load(a->ino);
    SFS_RETURN_IF_ERROR(a_inode);
    auto b_inode = m.Load(b->ino);
    SFS_RETURN_IF_ERROR(b_inode);
    if (cross) {
      SFS_RETURN_IF_ERROR(CheckProjectMove(**a_inode, **b_dir));
      SFS_RETURN_IF_ERROR(CheckProjectMove(**b_inode, **a_dir));
    }

    m.PutDirent(parent, name, b->ino, b->type);
    m.PutDirent(new_parent, new_name, a->ino, a->type);
    if (cross && a_is_dir) MoveDir(*a_inode, *a_dir, *b_dir);
    if (cross && b_is_dir) MoveDir(*b_inode, *b_dir, *a_dir);
    (*a_inode)->ctime = m.now();
    (*b_inode)->ctime = m.now();
    m.TouchDir(*a_dir);
    m.TouchDir(*b_dir);
    SFS_RETURN_IF_ERROR(m.Commit("meta: exchange '" + name + "' and '" + new_name + "'"));
    return std::optional<Removed>();
  }
}

}  // namespace sfs::meta
