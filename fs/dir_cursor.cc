#include "fs/dir_cursor.h"

#include <utility>

namespace sfs::fs {

DirCursor::Position DirCursor::Find(uint64_t off) const {
  if (off <= kDotDotOffset) return {};
  if (off >= window_off_ && off - window_off_ < window_.size()) {
    return {window_[off - window_off_], 0};
  }
  // Count forward from the nearest earlier name this handle remembers.
  uint64_t from = kDotDotOffset;
  const std::string* name = nullptr;
  auto it = checkpoints_.upper_bound(off);
  if (it != checkpoints_.begin()) {
    --it;
    from = it->first;
    name = &it->second;
  }
  if (!window_.empty()) {
    const uint64_t window_last = window_off_ + window_.size() - 1;
    if (window_last < off && window_last > from) {
      from = window_last;
      name = &window_.back();
    }
  }
  return {name != nullptr ? *name : std::string(), off - from};
}

void DirCursor::Sent(uint64_t anchor_off, std::string anchor, std::vector<std::string> names) {
  window_off_ = anchor_off;
  window_.clear();
  window_.push_back(std::move(anchor));
  for (std::string& name : names) window_.push_back(std::move(name));
  for (size_t i = 1; i < window_.size(); ++i) Checkpoint(window_off_ + i, window_[i]);
}

void DirCursor::Restart() {
  window_off_ = 0;
  window_.clear();
  stride_ = kFirstStride;
  checkpoints_.clear();
}

void DirCursor::Checkpoint(uint64_t off, const std::string& name) {
  if (off % stride_ != 0) return;
  checkpoints_[off] = name;
  // Too many: keep every other one. The cost of a seek (entries counted
  // from a checkpoint) doubles, the memory stays put.
  while (checkpoints_.size() > kMaxCheckpoints) {
    stride_ *= 2;
    std::erase_if(checkpoints_, [this](const auto& entry) { return entry.first % stride_ != 0; });
  }
}

}  // namespace sfs::fs
