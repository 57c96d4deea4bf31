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

void InterruptTable::Watch(fuse_req_t req, Interruptible* op) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ops_[req] = op;
  }
  // Unlocked: it may call Interrupt at once.
  arm_(req, this);
}

void InterruptTable::Forget(fuse_req_t req) {
  std::lock_guard<std::mutex> lock(mu_);
  ops_.erase(req);
}

void InterruptTable::Interrupt(fuse_req_t req) {
  Interruptible* op = nullptr;
  size_t taken = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ops_.find(req);
    if (it == ops_.end()) return;
    op = it->second;
    // The op cannot answer (and go) meanwhile: it must Forget first.
    taken = op->TakeBack();
    if (taken == 0) return;  // started: it answers when done
    ops_.erase(it);
    ended_++;
  }
  // Out of the table, it answers (EINTR) on its own.
  op->EndTakenBack(taken);
}

size_t InterruptTable::watched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ops_.size();
}

uint64_t InterruptTable::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

}  // namespace sfs::fs
