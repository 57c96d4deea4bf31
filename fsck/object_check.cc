// fsck's object pass: every layout against what its OSTs hold.
#include <fmt/format.h>
#include <sys/stat.h>

#include <map>
#include <utility>

#include "fsck/checker.h"
#include "layout/layout.h"

namespace sfs::fsck {
namespace {

// Where an object is named: which file, which stripe.
struct Owner {
  uint64_t ino = 0;
  uint32_t stripe = 0;
};

}  // namespace

void Checker::CheckObjects() {
  // (OST, object id) -> the file naming it, from every layout of a live
  // file (an unlinked file not yet reclaimed still owns its objects).
  std::map<std::pair<uint32_t, uint64_t>, Owner> owners;
  std::map<uint64_t, layout::Layout> decoded;
  for (const auto& [ino, blob] : layouts_) {
    auto inode = inodes_.find(ino);
    if (inode == inodes_.end() || reclaimed_.count(ino) != 0 || !S_ISREG(inode->second.mode)) {
      continue;
    }
    auto layout = layout::Decode(blob);
    if (!layout.ok()) {
      Unrepairable(fmt::format("inode {}: layout unreadable", ino),
                   "the file's data cannot be located; its objects are kept");
      continue;
    }
    for (uint32_t stripe = 0; stripe < layout->stripe_count(); ++stripe) {
      const layout::StripeObject& object = layout->objects[stripe];
      SeeObject(object.object_id);
      if (object.ost >= osts_.size()) {
        Unrepairable(fmt::format("inode {} stripe {}: names OST {}, which does not exist", ino,
                                 stripe, object.ost),
                     "the stripe's data cannot be located");
        continue;
      }
      auto [it, fresh] = owners.emplace(std::make_pair(object.ost, object.object_id),
                                        Owner{ino, stripe});
      if (!fresh) {
        Unrepairable(fmt::format("OST {} object {:#x}: named by inode {} stripe {} and inode {} "
                                 "stripe {}",
                                 object.ost, object.object_id, it->second.ino, it->second.stripe,
                                 ino, stripe),
                     "copy one of the files, then delete both originals");
      }
    }
    decoded.emplace(ino, std::move(layout).value());
  }

  // Layout changes are gathered per file and stored once.
  std::set<uint64_t> relayout;
  for (uint32_t ost = 0; ost < osts_.size(); ++ost) {
    ost::Backend* backend = osts_[ost];
    if (backend == nullptr) continue;  // reported where it was opened
    auto listing = backend->ListObjects();
    if (!listing.ok()) {
      Unrepairable(fmt::format("OST {}: cannot list its objects", ost),
                   listing.status().ToString());
      continue;
    }
    report_.objects += listing->objects.size();
    for (const std::string& stranger : listing->strangers) {
      Unrepairable(fmt::format("OST {}: {} is not an object stripefs wrote", ost, stranger),
                   "left alone; remove it by hand if nothing needs it");
    }
    std::map<uint64_t, uint64_t> sizes;  // object id -> bytes
    for (const ost::StoredObject& object : listing->objects) {
      SeeObject(object.id);
      sizes.emplace(object.id, object.size);
      if (owners.count({ost, object.id}) != 0) continue;
      Repairable(fmt::format("OST {} object {:#x} ({} bytes) belongs to no file", ost, object.id,
                             object.size),
                 "remove it", [&] { return backend->Remove(object.id); });
    }
    for (const auto& [key, owner] : owners) {
      if (key.first != ost) continue;
      layout::Layout& layout = decoded[owner.ino];
      layout::StripeObject& object = layout.objects[owner.stripe];
      const std::string where = fmt::format("inode {} stripe {} (OST {} object {:#x})", owner.ino,
                                            owner.stripe, ost, object.object_id);
      auto stored = sizes.find(object.object_id);
      if (stored == sizes.end()) {
        if (object.created) {
          Unrepairable(where + ": written but missing",
                       "its data is lost (reads of it fail with EIO); restore the object or "
                       "delete the file");
        }
        continue;
      }
      if (!object.created) {
        Repairable(where + ": exists but the file never recorded it",
                   "record it (so unlink frees it)", [&] {
                     object.created = true;
                     relayout.insert(owner.ino);
                     return Status::Ok();
                   });
      }
      const uint64_t size = inodes_[owner.ino].size;
      const uint64_t needed = layout::ObjectSizeFor(layout, owner.stripe, size);
      if (stored->second > needed) {
        Repairable(fmt::format("{}: {} bytes, the file's {} bytes need {}", where, stored->second,
                               size, needed),
                   fmt::format("truncate it to {} bytes", needed), [&]() -> Status {
                     auto file = backend->Open(object.object_id, /*create=*/false);
                     SFS_RETURN_IF_ERROR(file);
                     return (*file)->Truncate(needed);
                   });
      }
    }
  }
  for (uint64_t ino : relayout) {
    Status stored = store_.PutLayout(ino, layout::Encode(decoded[ino]), inodes_[ino].allocated);
    if (!stored.ok()) {
      Unrepairable(fmt::format("inode {}: layout not stored", ino), stored.ToString());
    }
  }
}

}  // namespace sfs::fsck
