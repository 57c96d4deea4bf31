// Internal to nrs/: the round and batch bookkeeping CRR-N and ORR share
// (Lustre nrs_crr.c, nrs_orr.c). Each key (a client, an object) fills
// batches of at most `quantum` requests, and optionally of at most
// `byte_quantum` bytes (ORR's quantum "in either I/O size or number of
// requests", seed 000 section 5.b.a); a request is tagged with its
// batch's round and number, and the policy serves its requests from a heap
// in (round, batch, ...) order, so batches of different keys take turns.
//
// A key joins the round being served only if it has had no batch in it: one
// whose queue ran dry mid-round continues its open batch or waits for the
// next round. So idling banks no credit, and keys that keep re-arriving
// cannot keep a round alive and starve a backlogged one.
//
// Records of keys with nothing queued are kept for reuse (no allocation per
// request when a queue keeps draining) and swept once they outnumber both
// kIdleFloor and the busy ones: memory stays within twice the busy records
// plus the floor.
//
// Thread safety: none, like the policies that own it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace sfs::nrs {

template <class Key, class Hash = std::hash<Key>>
class BatchRounds {
 public:
  struct Record {
    uint64_t round = 0;       // round of the open batch
    uint64_t batch = 0;       // number of the open batch; 0 = never opened
    uint32_t taken = 0;       // requests placed in the open batch
    uint32_t limit = 0;       // the quantum when the batch opened
    uint32_t queued = 0;      // requests held; 0 = idle record
    uint64_t bytes = 0;       // bytes placed in the open batch
    uint64_t byte_limit = 0;  // the byte quantum when the batch opened
  };
  struct Tag {
    uint64_t round;
    uint64_t batch;
    Record* record;  // stable while the record has queued requests
  };
  // When a batch is full: at the quantum it opened with (a new quantum
  // applies to later batches), or at the current one (an increase lets the
  // open batch grow at once, a decrease closes it once it holds that many;
  // seed 000 section 5.b.a).
  enum class Full { kAtOpeningQuantum, kAtCurrentQuantum };

  explicit BatchRounds(Full full) : full_(full) {}

  // Tags the next request of `key`, of `bytes` bytes. A batch is full at
  // `quantum` requests, or when this request would take it past
  // `byte_quantum` bytes (0 = no byte bound); a batch always takes its first
  // request, so one larger than the byte quantum makes a batch of its own.
  // The sum cannot wrap: a batch holds fewer than 2^32 requests, each of at
  // most a FUSE request's size (a few MiB).
  Tag Add(const Key& key, uint32_t quantum, uint64_t bytes = 0, uint64_t byte_quantum = 0) {
    Record& r = records_[key];
    if (r.queued == 0 && r.batch != 0) idle_--;  // a kept idle record
    const bool opening = full_ == Full::kAtOpeningQuantum;
    const uint32_t limit = opening ? r.limit : quantum;
    const uint64_t byte_limit = opening ? r.byte_limit : byte_quantum;
    if (r.batch == 0 || r.round < round_) {
      Open(r, round_, quantum, byte_quantum);
    } else if (r.taken >= limit || (byte_limit != 0 && r.bytes + bytes > byte_limit)) {
      Open(r, r.round + 1, quantum, byte_quantum);
    }
    r.taken++;
    r.bytes += bytes;
    r.queued++;
    return Tag{r.round, r.batch, &r};
  }

  // A request of `record` left the heap, whose next request (if any) is in
  // `next_round`, which becomes the round being served.
  void Remove(Record* record, uint64_t next_round) {
    round_ = next_round;
    if (--record->queued != 0) return;
    idle_++;
    if (idle_ > kIdleFloor && idle_ > records_.size() - idle_) {
      std::erase_if(records_, [](const auto& kv) { return kv.second.queued == 0; });
      idle_ = 0;
    }
  }

  // Keys with requests queued.
  size_t busy() const { return records_.size() - idle_; }

 private:
  static constexpr size_t kIdleFloor = 16384;

  void Open(Record& r, uint64_t round, uint32_t quantum, uint64_t byte_quantum) {
    r.round = round;
    r.batch = ++last_batch_;  // never 0, which marks a fresh record
    r.taken = 0;
    r.limit = quantum;
    r.bytes = 0;
    r.byte_limit = byte_quantum;
  }

  const Full full_;
  uint64_t round_ = 0;  // the round being served
  uint64_t last_batch_ = 0;
  // Element addresses are stable, so queued requests point at their record.
  std::unordered_map<Key, Record, Hash> records_;
  size_t idle_ = 0;  // records with nothing queued
};

}  // namespace sfs::nrs
