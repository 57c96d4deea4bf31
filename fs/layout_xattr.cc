// user.stripefs.layout and user.stripefs.projid on files and directories
// (issue 4). A directory's layout and project id are stored as its own
// reserved extended attributes and copied to new subdirectories at mkdir
// (fs/ops_common.cc MakeNode); a file's layout is its layout record.
#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <functional>

#include <fmt/format.h>

#include "common/log.h"
#include "fs/filesystem.h"
#include "fs/io.h"
#include "fs/ops_common.h"
#include "layout/placement_config.h"

namespace sfs::fs {
namespace {

// Logs the objects an abandoned layout leaves behind that could not be
// removed; nothing else is waiting for them.
class DropOp final : public MultiPartOp {
 public:
  layout::Layout layout;
  std::vector<std::shared_ptr<ost::ObjectHandle>> objects;

 private:
  void Finish(const Status& status) override {
    if (!status.ok()) {
      Logger("fs")->error("removing the objects of a replaced layout ({}): {}",
                          layout::Describe(layout), status.ToString());
    }
  }
};

}  // namespace

Status Filesystem::CheckOwner(uint32_t uid, uint64_t ino, const char* what) {
  auto inode = meta_->GetInode(ino);
  if (!inode.ok()) return inode.status();
  if (inode->uid != uid && !IsAdmin(uid)) {
    return Status::Error(EPERM, fmt::format("uid {} may not change the {} of inode {} (owner {})",
                                            uid, what, ino, inode->uid));
  }
  return Status::Ok();
}

Result<std::string> Filesystem::GetLayoutXattr(uint64_t ino) {
  auto inode = meta_->GetInode(ino);
  if (!inode.ok()) return inode.status();
  if (S_ISDIR(inode->mode)) return meta_->GetXattr(ino, kLayoutXattrName);  // ENODATA if unset
  if (!S_ISREG(inode->mode))
    return Status::Error(ENODATA, "only files and directories have a layout");
  auto decoded = LoadLayout(ino);
  if (!decoded.ok()) return decoded.status();
  return layout::Describe(*decoded);
}

Status Filesystem::SetLayoutXattr(uint32_t uid, uint64_t ino, const std::string& value) {
  // Placement, pools and the opens of every client are the MDS's.
  if (mds_ != nullptr) return mds_->SetLayoutXattr({uid, 0, 0, ""}, ino, value);
  auto spec = layout::ParseLayoutSpec(value);
  if (!spec.ok()) return spec.status();
  SFS_RETURN_IF_ERROR(CheckOwner(uid, ino, "layout"));
  // Names the configuration must know: refused now rather than at a create.
  const auto config = placement_control_->placement().config();
  if (!spec->pool.empty() && config->pools.count(spec->pool) == 0) {
    return Status::Error(EINVAL, "layout names pool '" + spec->pool + "', which does not exist");
  }
  for (uint32_t ost : spec->osts) {
    if (ost >= osts_.size()) {
      return Status::Error(
          EINVAL, fmt::format("layout names OST {}; this filesystem has {}", ost, osts_.size()));
    }
    if (!spec->pool.empty()) {
      const std::vector<uint32_t>& members = config->pools.at(spec->pool);
      if (std::find(members.begin(), members.end(), ost) == members.end()) {
        return Status::Error(
            EINVAL, fmt::format("layout names OST {}, which is not in pool {}", ost, spec->pool));
      }
    }
  }
  auto inode = meta_->GetInode(ino);
  if (!inode.ok()) return inode.status();
  if (S_ISDIR(inode->mode)) {
    if (spec->empty()) {  // "stripe_count=0" and the like: back to the defaults
      Status removed = meta_->RemoveXattr(ino, kLayoutXattrName);
      return removed.ok() || removed.err() == ENODATA ? Status::Ok() : removed;
    }
    return meta_->SetXattr(ino, kLayoutXattrName, layout::FormatLayoutSpec(*spec), 0);
  }
  if (!S_ISREG(inode->mode)) {
    return Status::Error(EINVAL, "only files and directories have a layout");
  }

  // A file: what the new layout leaves unset it keeps from the current one
  // (which came from the directory's layout or a pool rule when the file
  // was made), so `setstripe -S 2M` on a file in a pool's directory stays
  // in that pool.
  auto current = LoadLayout(ino);
  if (!current.ok()) return current.status();
  layout::LayoutSpec wanted = *spec;
  if (wanted.stripe_count == 0 && wanted.osts.empty()) {
    wanted.stripe_count = current->stripe_count();
  }
  if (wanted.stripe_size == 0) wanted.stripe_size = current->stripe_size;
  if (wanted.pool.empty() && wanted.osts.empty()) wanted.pool = current->pool;

  // Choose the new objects first (no lock held), then swap under the
  // inode's shard of open_, which every open of it takes to load a layout,
  // so no open can run with the old one afterwards.
  layout::PlacementContext context;
  context.uid = inode->uid;
  context.gid = inode->gid;
  context.pool = wanted.pool;
  auto fresh = NewLayout(context, wanted);
  if (!fresh.ok()) return fresh.status();
  layout::Layout old;
  {
    OpenTable::Locked table = open_.Lock(ino);
    if (table.Destroying(ino)) return Status::Error(ENOENT, "file is being deleted");
    auto now = meta_->GetInode(ino);
    if (!now.ok()) return now.status();
    if (now->nlink == 0) return Status::Error(ENOENT, "file was deleted");
    // Data first: a file with data refuses whether or not it is still open
    // (the kernel sends the release of a closed file after close returns,
    // so "open" can outlive the caller's close by a moment).
    if (now->size != 0) {
      return Status::Error(ENOTEMPTY, fmt::format("inode {} holds {} bytes; a layout can only be "
                                                  "set on an empty file",
                                                  ino, now->size));
    }
    // An open handle maps offsets through the layout it was opened with
    // for its whole life, so a change waits for no handle and revokes
    // none: it is refused while the file is open (docs/design.md, "Layouts
    // of open files"). The shard keeps an open from slipping in meanwhile.
    if (table.IsOpen(ino)) {
      return Status::Error(EBUSY, fmt::format("inode {} is open; set its layout before use", ino));
    }
    auto previous = LoadLayout(ino);
    if (!previous.ok()) return previous.status();
    old = std::move(previous).value();
    SFS_RETURN_IF_ERROR(meta_->PutLayout(ino, layout::Encode(*fresh), 0));
  }
  DropObjects(old);
  return Status::Ok();
}

Status Filesystem::RemoveLayoutXattr(uint32_t uid, uint64_t ino) {
  auto inode = meta_->GetInode(ino);
  if (!inode.ok()) return inode.status();
  if (!S_ISDIR(inode->mode)) {
    return Status::Error(EINVAL, "a file's layout cannot be removed, only replaced while empty");
  }
  SFS_RETURN_IF_ERROR(CheckOwner(uid, ino, "layout"));
  return meta_->RemoveXattr(ino, kLayoutXattrName);
}

Result<std::string> Filesystem::GetProjid(uint64_t ino) {
  auto inode = meta_->GetInode(ino);
  if (!inode.ok()) return inode.status();
  if (inode->projid == 0) {
    return Status::Error(ENODATA, fmt::format("inode {} belongs to no project", ino));
  }
  return std::to_string(inode->projid);
}

Status Filesystem::SetProjid(uint32_t uid, uint64_t ino, const std::string& value) {
  std::string_view text = value;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  uint32_t projid = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), projid);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::Error(EINVAL,
                         "projid must be a number from 0 to 4294967295, not '" + value + "'");
  }
  return ChangeProjid(uid, ino, projid);
}

Status Filesystem::RemoveProjid(uint32_t uid, uint64_t ino) {
  auto current = GetProjid(ino);
  if (!current.ok()) return current.status();
  return ChangeProjid(uid, ino, 0);
}

Status Filesystem::ChangeProjid(uint32_t uid, uint64_t ino, uint32_t projid) {
  // Only a directory hands its project id on (at mkdir and to the files
  // created in it); a file's is its directory's, fixed when it is made.
  auto inode = meta_->GetInode(ino);
  if (!inode.ok()) return inode.status();
  if (!S_ISDIR(inode->mode)) {
    return Status::Error(EINVAL, fmt::format("a project id can only be set on a directory, and "
                                             "inode {} is not one",
                                             ino));
  }
  // It decides which project quota the directory's new files count for, so
  // their owner may not move them out of it: admins only, as `lfs project`.
  if (!IsAdmin(uid)) {
    return Status::Error(EPERM, fmt::format("uid {} may not change the project id of inode {} "
                                            "(root or admin_uid only)",
                                            uid, ino));
  }
  meta::AttrChange change;
  change.projid = projid;
  auto changed = meta_->SetAttr(ino, change);
  return changed.ok() ? Status::Ok() : changed.status();
}

void Filesystem::DropObjects(const layout::Layout& old_layout) {
  auto* op = new DropOp();
  op->layout = old_layout;
  op->objects = Handles(op->layout);
  nrs::RequestInfo who;  // the filesystem's own work: uid 0
  who.jobid = std::make_shared<const std::string>("stripefs.destroy");
  auto parts = EveryStripe(Target{&op->layout, &op->objects}, nrs::Op::kDestroy, 0, who, op);
  op->Launch(*this, std::move(parts));
}

}  // namespace sfs::fs
