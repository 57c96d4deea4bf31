#include "fs/interrupts.h"

#include <fstream>
#include <string>

namespace sfs::fs {
namespace {

// libfuse's interrupt callback; `data` is the table, which outlives the
// session (the Filesystem owns it).
void OnInterrupt(fuse_req_t req, void* data) { static_cast<InterruptTable*>(data)->Interrupt(req); }

}  // namespace

InterruptTable::InterruptTable()
    : InterruptTable([](fuse_req_t req, InterruptTable* table) {
        fuse_req_interrupt_func(req, OnInterrupt, table);
      },
      [](fuse_req_t req) {
        const fuse_ctx* ctx = fuse_req_ctx(req);
        return ctx != nullptr ? ctx->pid : pid_t{0};
      }) {}

InterruptTable::InterruptTable(Arm arm, CallerOf caller_of)
    : arm_(std::move(arm)), caller_of_(std::move(caller_of)) {}

InterruptTable::Shard& InterruptTable::ShardOf(fuse_req_t req) {
  // Requests are heap blocks: the low bits say little.
  const auto bits = reinterpret_cast<uintptr_t>(req);
  return shards_[(bits >> 6 ^ bits >> 12) % kShards];
}

void InterruptTable::Watch(fuse_req_t req, Interruptible* op) {
  {
    Shard& shard = ShardOf(req);
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.ops[req] = Watched{op, caller_of_ != nullptr ? caller_of_(req) : 0,
                             std::chrono::steady_clock::now()};
  }
  // Unlocked: it may call Interrupt at once.
  arm_(req, this);
}

void InterruptTable::Forget(fuse_req_t req) {
  Shard& shard = ShardOf(req);
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.ops.erase(req);
}

void InterruptTable::Interrupt(fuse_req_t req) { InterruptWatched(req, nullptr); }

void InterruptTable::InterruptIfStill(const Waiting& waiting) {
  InterruptWatched(waiting.req, &waiting.since);
}

void InterruptTable::InterruptWatched(fuse_req_t req,
                                      const std::chrono::steady_clock::time_point* since) {
  Interruptible* op = nullptr;
  size_t taken = 0;
  {
    Shard& shard = ShardOf(req);
    std::lock_guard<std::mutex> lock(shard.mu);
    auto it = shard.ops.find(req);
    if (it == shard.ops.end()) return;
    if (since != nullptr && it->second.since != *since) return;
    op = it->second.op;
    // The op cannot answer (and go) meanwhile: it must Forget first.
    taken = op->TakeBack();
    if (taken == 0) return;  // started: it answers when done
    shard.ops.erase(it);
  }
  ended_.fetch_add(1, std::memory_order_relaxed);
  // Out of the table, it answers (EINTR) on its own.
  op->EndTakenBack(taken);
}

std::vector<InterruptTable::Waiting> InterruptTable::Signalled(
    std::chrono::steady_clock::time_point before,
    const std::function<bool(pid_t)>& signalled) const {
  std::vector<std::pair<Waiting, pid_t>> old;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    for (const auto& [req, watched] : shard.ops) {
      if (watched.caller > 0 && watched.since < before) {
        old.push_back({Waiting{req, watched.since}, watched.caller});
      }
    }
  }
  // Unlocked: /proc reads.
  std::vector<Waiting> found;
  for (const auto& [waiting, caller] : old) {
    if (signalled(caller)) found.push_back(waiting);
  }
  return found;
}

size_t InterruptTable::watched() const {
  size_t n = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mu);
    n += shard.ops.size();
  }
  return n;
}

bool SignalPending(pid_t tid) {
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  uint64_t pending = 0, blocked = 0;
  bool read = false;
  std::string line;
  while (std::getline(status, line)) {
    const auto hex = [&](size_t at) { return std::stoull(line.substr(at), nullptr, 16); };
    try {
      if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
        pending |= hex(7);
        read = true;
      } else if (line.rfind("SigBlk:", 0) == 0) {
        blocked = hex(7);
      }
    } catch (const std::exception&) {
      return false;
    }
  }
  return read && (pending & ~blocked) != 0;
}

SignalSweep::SignalSweep(InterruptTable& table, std::chrono::milliseconds interval)
    : table_(table), interval_(interval), thread_([this] { Run(); }) {}

SignalSweep::~SignalSweep() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SignalSweep::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stop_; })) {
    lock.unlock();
    const auto before = std::chrono::steady_clock::now() - interval_;
    for (const InterruptTable::Waiting& waiting : table_.Signalled(before, SignalPending)) {
      // Answered meanwhile: nothing to do.
      table_.InterruptIfStill(waiting);
      interrupted_.fetch_add(1, std::memory_order_relaxed);
    }
    lock.lock();
  }
}

}  // namespace sfs::fs
