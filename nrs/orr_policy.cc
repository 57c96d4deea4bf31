// ORR (seed 000 section 5.b.a, OBRR with a request number limit; Lustre
// nrs_orr.c): reads and writes are gathered in per-object batches of at most
// `quantum` requests, each batch served in ascending offset order, batches of
// different objects served round robin. Each request is tagged on arrival with
// its round and batch and kept in one heap ordered by (round, batch, offset,
// length, arrival).
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

#include "nrs/policy.h"

namespace sfs::nrs {
namespace {

// Idle object records are kept for reuse and swept as in CRR-N: once they
// outnumber both this floor and the busy objects.
constexpr size_t kIdleObjectFloor = 16384;

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

struct Object {
  uint64_t round = 0;   // round of the open batch
  uint64_t batch = 0;   // number of the open batch; 0 = never opened
  uint32_t sorted = 0;  // requests placed in the open batch
  uint32_t queued = 0;  // requests held; 0 = idle record
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
      : quantum_(tunables.orr_quantum), supported_(tunables.orr_supported) {}

  std::string_view Name() const override { return "orr"; }

  bool Enqueue(Request* request, TimePoint now) override {
    if (!Supports(supported_, request->info.op)) return false;
    Object& object = objects_[KeyOf(*request)];
    if (object.queued == 0 && object.batch != 0) idle_--;  // a kept idle record
    // As in CRR-N: an object whose queue ran dry mid-round continues its
    // batch or waits for the next round, so a stream of re-arriving objects
    // cannot keep a round alive and starve a backlogged one.
    if (object.batch == 0 || object.round < round_) {
      OpenBatch(object, round_);
    } else if (object.sorted >= quantum_) {
      // Compared with the quantum of now, so a raised quantum lets the open
      // batch grow at once, and a lowered one closes it only when it already
      // holds that many (seed 000 section 5.b.a).
      OpenBatch(object, object.round + 1);
    }
    object.sorted++;
    object.queued++;
    request->policy_data = &object;
    heap_.push(Entry{object.round, object.batch, request->info.offset, request->info.length,
                     next_serial_++, request});
    return true;
  }

  Pick Dequeue(TimePoint now) override {
    if (heap_.empty()) return Pick::Empty();
    const Entry top = heap_.top();
    heap_.pop();
    // As in Lustre, the round being served is that of the next request.
    round_ = heap_.empty() ? top.round : heap_.top().round;

    auto* object = static_cast<Object*>(top.request->policy_data);
    if (--object->queued == 0) {
      idle_++;
      if (idle_ > kIdleObjectFloor && idle_ > objects_.size() - idle_) SweepIdle();
    }
    return Pick::Of(top.request);
  }

  size_t Queued() const override { return heap_.size(); }

  // Quantum: see Enqueue. Supported ops: requests already queued stay and
  // are served in their batches; the new set applies to later arrivals.
  void Retune(const Tunables& tunables, TimePoint now) override {
    quantum_ = tunables.orr_quantum;
    supported_ = tunables.orr_supported;
  }

  std::string ClassOf(const Request& request) const override {
    char label[48];
    std::snprintf(label, sizeof(label), "object=%u:0x%llx", request.info.ost,
                  static_cast<unsigned long long>(request.info.object_id));
    return label;
  }

  std::string Describe() const override {
    return "quantum=" + std::to_string(quantum_) + " supported=" + OrrSupportedName(supported_) +
           " objects=" + std::to_string(objects_.size() - idle_);
  }

 private:
  void OpenBatch(Object& object, uint64_t round) {
    object.round = round;
    object.batch = ++last_batch_;
    object.sorted = 0;
  }

  void SweepIdle() {
    std::erase_if(objects_, [](const auto& kv) { return kv.second.queued == 0; });
    idle_ = 0;
  }

  uint32_t quantum_;
  OrrSupported supported_;
  uint64_t round_ = 0;  // the round being served
  uint64_t last_batch_ = 0;
  uint64_t next_serial_ = 0;
  // Element addresses are stable, so queued requests point at their object.
  std::unordered_map<ObjectKey, Object, ObjectKeyHash> objects_;
  size_t idle_ = 0;  // records in objects_ with nothing queued
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
