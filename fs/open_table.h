// The table of open files, sharded by inode (issue 33): every lookup and
// getattr asks it whether the inode is open (Filesystem::OverlayOpen), so one
// mutex for the whole table was taken by every metadata operation and held
// across the store calls of opens, closes and unlinks; with 8 processes
// creating and removing files it was held 56 % of the wall time. An inode's
// state lives in one shard, under that shard's mutex only, so operations on
// different inodes meet only when their inodes share a shard.
//
// What a shard holds for an inode: its OpenFile while open (and the
// OpenFile's `opens`), whether its objects are being destroyed, and whether
// it lost its last link while open (removed, destroyed at its last close).
// A caller that must check and change these atomically with a store call
// (an open loading the inode, an unlink deciding to purge at once, a layout
// change refused while open) holds the inode's shard across the store call:
// that blocks only the inodes of that shard.
//
// Thread safety: every method is safe from any thread. A Locked holds one
// shard's mutex for its life; no thread holds two shards at once (lock
// order: a shard, then OpenFile::times_mu, then the store's inode locks;
// under those a shard is only tried, never waited for).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sfs::fs {

struct OpenFile;

class OpenTable {
 public:
  // Far more than the threads that can ask at once (FUSE workers, OST
  // service threads), so two inodes rarely share one; a shard costs a mutex
  // and three empty hash tables.
  static constexpr size_t kShards = 64;

  OpenTable() = default;
  OpenTable(const OpenTable&) = delete;
  OpenTable& operator=(const OpenTable&) = delete;

  class Locked;
  // Holds the shard of `ino` until the returned object dies.
  Locked Lock(uint64_t ino);
  // The same if the shard is free this moment, else nothing: for a caller
  // that already holds a lock ordered after the shards (the store's).
  std::optional<Locked> TryLock(uint64_t ino);
  // The open file of `ino`, or null; holds its shard for the lookup only.
  std::shared_ptr<OpenFile> Find(uint64_t ino);
  // Every open file, one shard at a time (not one instant).
  std::vector<std::shared_ptr<OpenFile>> All();
  // Inodes marked removed and not unmarked yet, over all shards.
  size_t removed() const { return removed_.load(std::memory_order_relaxed); }

  static size_t ShardOf(uint64_t ino) {
    // Inode numbers are handed out in runs: a multiplicative hash spreads
    // neighbours over the shards.
    return static_cast<size_t>((ino * 0x9E3779B97F4A7C15ull) >> 32) % kShards;
  }

 private:
  struct Shard {
    std::mutex mu;  // guards the members below and OpenFile::opens of `open`'s files
    std::unordered_map<uint64_t, std::shared_ptr<OpenFile>> open;
    std::unordered_set<uint64_t> destroying;
    std::unordered_set<uint64_t> removed;
  };
  Shard shards_[kShards];
  std::atomic<size_t> removed_{0};  // sum of shards' removed sizes
};

// One inode's shard, held. Every method takes an inode of that shard
// (asserted in debug builds).
class OpenTable::Locked {
 public:
  std::shared_ptr<OpenFile> Find(uint64_t ino) const;
  bool IsOpen(uint64_t ino) const;
  // REQUIRES: not open.
  void Insert(uint64_t ino, std::shared_ptr<OpenFile> file);
  void Erase(uint64_t ino);

  bool Destroying(uint64_t ino) const;
  // False if the destroy had already begun.
  bool BeginDestroy(uint64_t ino);
  void EndDestroy(uint64_t ino);

  void MarkRemoved(uint64_t ino);
  void UnmarkRemoved(uint64_t ino);
  // Marked: its last name went while it was open.
  bool Removed(uint64_t ino) const;

 private:
  friend class OpenTable;
  Locked(Shard* shard, size_t index, std::atomic<size_t>* removed,
         std::unique_lock<std::mutex> lock)
      : shard_(shard), index_(index), removed_(removed), lock_(std::move(lock)) {}
  Shard& For(uint64_t ino) const;
  Shard* shard_;
  size_t index_;
  std::atomic<size_t>* removed_;
  std::unique_lock<std::mutex> lock_;
};

}  // namespace sfs::fs
