// A new node: Filesystem::MakeNode, where a client mount hands the whole
// operation to its MDS.
#include <sys/stat.h>

#include "fs/filesystem.h"
#include "fs/ops_common.h"
#include "layout/layout_spec.h"

namespace sfs::fs {

Result<meta::Inode> Filesystem::MakeNode(const Creator& who, uint64_t parent,
                                         const std::string& name, uint32_t mode, uint64_t rdev,
                                         const std::string& symlink,
                                         client::MdsClient::Opened* opened) {
  if (mds_ != nullptr) {
    client::MdsCaller caller{who.uid, who.gid, who.pid, who.jobid ? *who.jobid : ""};
    return mds_->MakeNode(caller, parent, name, mode, rdev, symlink, opened);
  }
  auto dir = meta().GetInode(parent);
  if (!dir.ok()) return dir.status();
  meta::NewNode node;
  node.mode = mode;
  node.uid = who.uid;
  node.gid = who.gid;
  node.rdev = rdev;
  // BSD group semantics under a set-group-ID directory, as on ext4.
  if (dir->mode & S_ISGID) {
    node.gid = dir->gid;
    if (S_ISDIR(mode)) node.mode |= S_ISGID;
  }
  // Checked before anything is allotted to it: the new inode counts for
  // its user, group and (inherited) project.
  auto reserved = quota().ReserveInodes(control::QuotaOwner{node.uid, node.gid, dir->projid}, who.uid, 1);
  if (!reserved.ok()) {
    return Status::Error(reserved.err(), "create of '" + name + "' in inode " +
                                          std::to_string(parent) + ": " + reserved.status().message());
  }
  node.symlink = symlink;
  // The directory's default layout: copied to a new subdirectory (in the
  // same write), used by a new file. Its project id the store hands on.
  auto dir_layout = meta().GetXattr(parent, kLayoutXattrName);
  if (S_ISDIR(mode) && dir_layout.ok()) node.xattrs[kLayoutXattrName] = *dir_layout;
  if (S_ISREG(mode)) {
    layout::LayoutSpec spec;
    if (dir_layout.ok()) {
      auto parsed = layout::ParseLayoutSpec(*dir_layout);
      if (!parsed.ok()) {
        return Status::Error(EIO, "directory " + std::to_string(parent) +
                                      " has a corrupt default layout: " + parsed.status().message());
      }
      spec = std::move(parsed).value();
    }
    layout::PlacementContext where;
    where.uid = who.uid;
    where.gid = who.gid;
    where.jobid = who.jobid ? *who.jobid : std::string();
    where.fallback_pool = spec.pool;
    where.projid = dir->projid;
    auto layout = NewLayout(where, spec);
    if (!layout.ok()) return layout.status();
    node.layout = layout::Encode(*layout);
  }
  auto created = meta().Create(parent, name, node);
  if (created.ok() && *reserved) (*reserved)->Use(1);
  return created;
}

}  // namespace sfs::fs
