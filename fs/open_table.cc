#include "fs/open_table.h"

#include <cassert>

namespace sfs::fs {

OpenTable::Locked OpenTable::Lock(uint64_t ino) {
  const size_t index = ShardOf(ino);
  return Locked(&shards_[index], index, &removed_, std::unique_lock<std::mutex>(shards_[index].mu));
}

std::optional<OpenTable::Locked> OpenTable::TryLock(uint64_t ino) {
  const size_t index = ShardOf(ino);
  std::unique_lock<std::mutex> lock(shards_[index].mu, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;
  return Locked(&shards_[index], index, &removed_, std::move(lock));
}

std::shared_ptr<OpenFile> OpenTable::Find(uint64_t ino) {
  return Lock(ino).Find(ino);
}

std::vector<std::shared_ptr<OpenFile>> OpenTable::All() {
  std::vector<std::shared_ptr<OpenFile>> files;
  for (Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const auto& [ino, file] : shard.open) files.push_back(file);
  }
  return files;
}

OpenTable::Shard& OpenTable::Locked::For(uint64_t ino) const {
  assert(ShardOf(ino) == index_);
  (void)ino;
  return *shard_;
}

std::shared_ptr<OpenFile> OpenTable::Locked::Find(uint64_t ino) const {
  Shard& shard = For(ino);
  auto it = shard.open.find(ino);
  return it == shard.open.end() ? nullptr : it->second;
}

bool OpenTable::Locked::IsOpen(uint64_t ino) const { return For(ino).open.count(ino) != 0; }

void OpenTable::Locked::Insert(uint64_t ino, std::shared_ptr<OpenFile> file) {
  For(ino).open.emplace(ino, std::move(file));
}

void OpenTable::Locked::Erase(uint64_t ino) { For(ino).open.erase(ino); }

bool OpenTable::Locked::Destroying(uint64_t ino) const {
  return For(ino).destroying.count(ino) != 0;
}

bool OpenTable::Locked::BeginDestroy(uint64_t ino) { return For(ino).destroying.insert(ino).second; }

void OpenTable::Locked::EndDestroy(uint64_t ino) { For(ino).destroying.erase(ino); }

void OpenTable::Locked::MarkRemoved(uint64_t ino) {
  if (For(ino).removed.insert(ino).second) removed_->fetch_add(1, std::memory_order_relaxed);
}

bool OpenTable::Locked::Removed(uint64_t ino) const { return For(ino).removed.count(ino) != 0; }

void OpenTable::Locked::UnmarkRemoved(uint64_t ino) {
  if (For(ino).removed.erase(ino) != 0) removed_->fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace sfs::fs
