// ORR (seed 000 section 5.b.a, OBRR with a limit in "either I/O size or
// number of requests"; Lustre nrs_orr.c): reads and writes are gathered in
// per-object batches of at most `quantum` requests and, when
// nrs_orr_quantum_bytes is set, at most that many bytes (a batch closes at
// whichever comes first; a lone larger request is a batch of its own); each
// batch is served in ascending offset order, batches of different objects
// round robin. The byte bound keeps a round fair between objects read in
// requests of different sizes (with only a count, 256 requests of 1 MiB
// hold the OST 256 times as long as 256 of 4 KiB), and bounds how long one
// reader's ever lower requests can keep joining the open batch
// (docs/design.md). Each request is tagged on arrival with its round and
// batch and kept in one heap ordered by (round, batch, offset, length,
// arrival).
//
// Fairness comes from the bound, not from deadlines: a request is sorted only
// against the other members of its batch, so later arrivals with lower
// offsets can pass it only until its batch is full; after that they open the
// object's batch in the next round, and nothing waits more than one round. An
// object with nothing queued joins the end of the round being served, like a
// new object, so idling banks no credit.
//
// Offsets are logical object offsets. Lustre can sort reads by physical
// block (FIEMAP), but here an object is a file on a local filesystem whose
// allocator keeps it mostly contiguous, so logical order is close to
// physical order; a FIEMAP per request would cost a system call on the
// enqueue path; and the kernel's own elevator sees the physical blocks and
// sorts them anyway.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>

#include "nrs/batch_rounds.h"
#include "nrs/heap_remove.h"
#include "nrs/policy.h"

namespace sfs::nrs {
namespace {

struct ObjectKey {
  uint32_t ost;
  uint64_t id;
  bool operator==(const ObjectKey&) const = default;
};

struct ObjectKeyHash {
  size_t operator()(const ObjectKey& k) const {
    // splitmix64 finalizer: object ids are often sequential, and the same
    // id on two OSTs must not collide.
    uint64_t x = k.id + uint64_t{k.ost} * 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<size_t>(x ^ (x >> 31));
  }
};

struct Entry {
  uint64_t round;
  uint64_t batch;
  uint64_t offset;
  uint64_t length;
  uint64_t serial;  // arrival order, for equal extents
  Request* request;

  // priority_queue is a max-heap: "less" means "served later".
  bool operator<(const Entry& o) const {
    if (round != o.round) return round > o.round;
    if (batch != o.batch) return batch > o.batch;
    if (offset != o.offset) return offset > o.offset;
    if (length != o.length) return length > o.length;  // shorter extent first
    return serial > o.serial;
  }
};

ObjectKey KeyOf(const Request& r) { return ObjectKey{r.info.ost, r.info.object_id}; }

bool Supports(OrrSupported supported, Op op) {
  switch (op) {
    case Op::kRead:
      return supported != OrrSupported::kWrites;
    case Op::kWrite:
      return supported != OrrSupported::kReads;
    default:
      return false;  // no extent worth sorting
  }
}

class OrrPolicy final : public Policy {
 public:
  explicit OrrPolicy(const Tunables& tunables)
      : quantum_(tunables.orr_quantum),
        quantum_bytes_(tunables.orr_quantum_bytes),
        supported_(tunables.orr_supported) {}

  std::string_view Name() const override { return "orr"; }

  bool Enqueue(Request* request, TimePoint now) override {
    if (!Supports(supported_, request->info.op)) return false;
    // The quanta of now, so a raised quantum lets the open batch grow at
    // once and a lowered one closes it (batch_rounds.h).
    const auto tag = rounds_.Add(KeyOf(*request), quantum_, request->info.length, quantum_bytes_);
    request->policy_data = tag.record;
    heap_.push(Entry{tag.round, tag.batch, request->info.offset, request->info.length,
                     next_serial_++, request});
    return true;
  }

  Pick Dequeue(TimePoint now) override {
    if (heap_.empty()) return Pick::Empty();
    const Entry top = heap_.top();
    heap_.pop();
    // As in Lustre, the round being served is that of the next request.
    rounds_.Remove(static_cast<Rounds::Record*>(top.request->policy_data),
                   heap_.empty() ? top.round : heap_.top().round);
    return Pick::Of(top.request);
  }

  // Its place in its object's batch stays counted, as if served.
  bool Remove(Request* request, TimePoint now) override {
    auto removed = RemoveFromHeap(heap_, [request](const Entry& e) { return e.request == request; });
    if (!removed) return false;
    rounds_.Remove(static_cast<Rounds::Record*>(request->policy_data),
                   heap_.empty() ? removed->round : heap_.top().round);
    return true;
  }

  size_t Queued() const override { return heap_.size(); }

  // Quantum: see Enqueue. Supported ops: requests already queued stay and
  // are served in their batches; the new set applies to later arrivals.
  void Retune(const Tunables& tunables, TimePoint now) override {
    quantum_ = tunables.orr_quantum;
    quantum_bytes_ = tunables.orr_quantum_bytes;
    supported_ = tunables.orr_supported;
  }

  std::string ClassOf(const Request& request) const override {
    char label[48];
    std::snprintf(label, sizeof(label), "object=%u:0x%llx", request.info.ost,
                  static_cast<unsigned long long>(request.info.object_id));
    return label;
  }

  std::string Describe() const override {
    // quantum_bytes only when set, so the common description stays short.
    const std::string bytes =
        quantum_bytes_ == 0 ? "" : " quantum_bytes=" + std::to_string(quantum_bytes_);
    return "quantum=" + std::to_string(quantum_) + bytes +
           " supported=" + OrrSupportedName(supported_) +
           " objects=" + std::to_string(rounds_.busy());
  }

 private:
  using Rounds = BatchRounds<ObjectKey, ObjectKeyHash>;

  uint32_t quantum_;
  uint64_t quantum_bytes_;  // 0 = batches bounded by quantum_ alone
  OrrSupported supported_;
  uint64_t next_serial_ = 0;
  Rounds rounds_{Rounds::Full::kAtCurrentQuantum};
  std::priority_queue<Entry> heap_;
};

}  // namespace

Result<std::unique_ptr<Policy>> NewOrrPolicy(std::string_view args, const Tunables& tunables) {
  if (!args.empty()) {
    return Status::Error(EINVAL,
                         "NRS policy 'orr' takes no arguments, got '" + std::string(args) + "'");
  }
  if (tunables.orr_quantum == 0) {
    return Status::Error(EINVAL, "NRS policy 'orr': quantum must be at least 1");
  }
  switch (tunables.orr_supported) {
    case OrrSupported::kReads:
    case OrrSupported::kWrites:
    case OrrSupported::kReadsAndWrites:
      break;
    default:
      return Status::Error(EINVAL, "NRS policy 'orr': unknown set of supported operations");
  }
  return std::unique_ptr<Policy>(std::make_unique<OrrPolicy>(tunables));
}

}  // namespace sfs::nrs
