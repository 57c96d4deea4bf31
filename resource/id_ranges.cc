#include "resource/id_ranges.h"

#include <algorithm>

namespace sfs::resource {

IdRanges::IdRanges(uint64_t mark, uint64_t range_size, Persist persist)
    : mark_(mark), range_size_(std::max<uint64_t>(1, range_size)), persist_(std::move(persist)) {
  owners_.push_back(Owner{"master", true, mark, mark});
}

OwnerId IdRanges::AddOwner(std::string name) {
  owners_.push_back(Owner{std::move(name), true, mark_, mark_});
  return static_cast<OwnerId>(owners_.size() - 1);
}

void IdRanges::RemoveOwner(OwnerId id) {
  if (id == kRootOwner || id >= owners_.size()) return;
  owners_[id].alive = false;
  owners_[id].next = owners_[id].limit;
}

Result<uint64_t> IdRanges::Take(OwnerId id, uint64_t count) {
  if (id == kRootOwner || id >= owners_.size() || !owners_[id].alive) {
    return Status::Error(EINVAL, "identifiers asked through an unknown owner");
  }
  if (count == 0) return Status::Error(EINVAL, "zero identifiers asked");
  Owner& owner = owners_[id];
  if (owner.limit - owner.next < count) {
    // Growing in place keeps [next, next + count) contiguous; otherwise the
    // rest of the old range is skipped.
    const bool at_mark = owner.limit == mark_;
    const uint64_t start = at_mark ? owner.next : mark_;
    if (UINT64_MAX - start < count) return Status::Error(ENOSPC, "identifiers exhausted");
    const uint64_t wanted = std::max(range_size_, count - (at_mark ? owner.limit - owner.next : 0));
    const uint64_t new_mark = (UINT64_MAX - mark_ < wanted) ? UINT64_MAX : mark_ + wanted;
    if (new_mark < start + count) return Status::Error(ENOSPC, "identifiers exhausted");
    Status persisted = persist_(new_mark);
    if (!persisted.ok()) return persisted;
    owner.next = start;
    owner.limit = new_mark;
    mark_ = new_mark;
  }
  const uint64_t first = owner.next;
  owner.next += count;
  return first;
}

Status IdRanges::Raise(uint64_t mark) {
  const uint64_t raised = std::max(mark_, mark);
  Status persisted = persist_(raised);
  if (!persisted.ok()) return persisted;
  mark_ = raised;
  for (Owner& owner : owners_) owner.next = owner.limit = mark_;
  return Status::Ok();
}

uint64_t IdRanges::left(OwnerId id) const {
  return id < owners_.size() ? owners_[id].limit - owners_[id].next : 0;
}

}  // namespace sfs::resource
