// Settling the writes an unclean stop left in flight (docs/design.md,
// "Writes in flight"): at mount, before anything is served, each file with
// a writing mark gets its objects made what its inode and layout say, as a
// Lustre OST destroys the orphan objects past its last id at start.
#include "common/log.h"
#include "fs/filesystem.h"

namespace sfs::fs {
namespace {

// What settling one file found.
struct Settled {
  bool changed = false;  // the layout (created marks, allocation) moved on
  bool cut = false;      // an object was cut or removed
  bool done = true;      // false: an OST could not be asked; the mark stays
};

// Makes stripe `stripe`'s object of `layout` fit a file of `size` bytes:
// cut to what the size needs, recorded as created if it exists (a never
// recorded one that the size does not reach is removed instead, as if the
// write that made it had never started). The allocation is updated.
Status SettleObject(ost::Backend& backend, uint64_t size, uint32_t stripe,
                    layout::Layout& layout, Settled& settled) {
  layout::StripeObject& object = layout.objects[stripe];
  auto file = backend.Open(object.object_id, /*create=*/false);
  if (file.err() == ENOENT) {
    // Never made (or lost, if recorded as created: that is for fsck).
    settled.changed |= object.allocated != 0;
    object.allocated = 0;
    return Status::Ok();
  }
  SFS_RETURN_IF_ERROR(file);
  auto length = (*file)->Size();
  SFS_RETURN_IF_ERROR(length);
  const uint64_t needed = layout::ObjectSizeFor(layout, stripe, size);
  if (!object.created && needed == 0) {
    SFS_RETURN_IF_ERROR(backend.Remove(object.object_id));
    settled.changed |= object.allocated != 0;
    settled.cut = true;
    object.allocated = 0;
    return Status::Ok();
  }
  if (*length > needed) {
    SFS_RETURN_IF_ERROR((*file)->Truncate(needed));
    settled.cut = true;
  }
  auto allocated = (*file)->Allocated();
  SFS_RETURN_IF_ERROR(allocated);
  settled.changed |= !object.created || object.allocated != *allocated;
  object.created = true;
  object.allocated = *allocated;
  return Status::Ok();
}

}  // namespace

Status Filesystem::SettleWrites() {
  auto marked = meta_->Writing();
  SFS_RETURN_IF_ERROR(marked);
  if (marked->empty()) return Status::Ok();
  Logger("fs")->info("settling {} files with writes in flight at an unclean stop", marked->size());
  for (uint64_t ino : *marked) {
    auto inode = meta_->GetInode(ino);
    auto layout = inode.ok() ? LoadLayout(ino) : Result<layout::Layout>(inode.status());
    if (layout.err() == ENOENT) {  // the file is gone, and its objects were freed
      SFS_RETURN_IF_ERROR(meta_->MarkWriting(ino, false));
      continue;
    }
    if (!layout.ok()) {
      Logger("fs")->error("inode {}: writes in flight not settled: {}", ino,
                          layout.status().ToString());
      continue;
    }
    Settled settled;
    for (uint32_t stripe = 0; stripe < layout->stripe_count() && settled.done; ++stripe) {
      ost::Backend& backend = osts_.at(layout->objects[stripe].ost).backend();
      Status s = backend.Available()
                     ? SettleObject(backend, inode->size, stripe, *layout, settled)
                     : Status::Error(EAGAIN, "its OST has not answered");
      if (!s.ok()) {
        Logger("fs")->warn("inode {} stripe {}: writes in flight not settled, kept for the next "
                           "mount: {}",
                           ino, stripe, s.ToString());
        settled.done = false;
      }
    }
    if (settled.changed) {
      uint64_t allocated = 0;
      for (const auto& object : layout->objects) allocated += object.allocated;
      SFS_RETURN_IF_ERROR(meta_->PutLayout(ino, layout::Encode(*layout), allocated));
    }
    if (settled.done) SFS_RETURN_IF_ERROR(meta_->MarkWriting(ino, false));
    if (settled.cut || settled.changed) {
      Logger("fs")->info("inode {}: objects settled to its {} bytes", ino, inode->size);
    }
  }
  return Status::Ok();
}

}  // namespace sfs::fs
