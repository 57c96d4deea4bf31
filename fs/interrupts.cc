#include "fs/interrupts.h"

namespace sfs::fs {
namespace {

// libfuse's interrupt callback; `data` is the table, which outlives the
// session (the Filesystem owns it).
void OnInterrupt(fuse_req_t req, void* data) { static_cast<InterruptTable*>(data)->Interrupt(req); }

}  // namespace

InterruptTable::InterruptTable()
    : InterruptTable([](fuse_req_t req, InterruptTable* table) {
        fuse_req_interrupt_func(req, OnInterrupt, table);
      }) {}

InterruptTable::InterruptTable(Arm arm) : arm_(std::move(arm)) {}

InterruptTable::Shard& InterruptTable::ShardOf(fuse_req_t req) {
  // Requests are heap blocks: the low bits say little.
  const auto bits = reinterpret_cast<uintptr_t>(req);
  return shards_[(bits >> 6 ^ bits >> 12) % kShards];
}

void InterruptTable::Watch(fuse_req_t req, Interruptible* op) {
  {
    Shard& shard = ShardOf(req);
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.ops[req] = op;
  }
  // Unlocked: it may call Interrupt at once.
  arm_(req, this);
}

void InterruptTable::Forget(fuse_req_t req) {
  Shard& shard = ShardOf(req);
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.ops.erase(req);
}

void InterruptTable::Interrupt(fuse_req_t req) {
  Interruptible* op = nullptr;
  size_t taken = 0;
  {
    Shard& shard = ShardOf(req);
    std::lock_guard<std::mutex> lock(shard.mu);
    auto it = shard.ops.find(req);
    if (it == shard.ops.end()) return;
    op = it->second;
    // The op cannot answer (and go) meanwhile: it must Forget first.
    taken = op->TakeBack();
    if (taken == 0) return;  // started: it answers when done
    shard.ops.erase(it);
  }
  ended_.fetch_add(1, std::memory_order_relaxed);
  // Out of the table, it answers (EINTR) on its own.
  op->EndTakenBack(taken);
}

size_t InterruptTable::watched() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    n += shard.ops.size();
  }
  return n;
}

}  // namespace sfs::fs
