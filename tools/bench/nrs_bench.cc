// Scheduler cost: enqueue + dequeue pairs per second on one core for each
// policy, with 1, 100 and 10,000 classes (clients, objects or TBF classes),
// on the policy alone and on a whole NRS head (which adds Complete(): the
// per-class statistics). Time is a fake clock advanced 1 ns per dequeue, and
// TBF runs at 10^9 requests/s per class, so a token is always there when a
// request is asked for: this measures the data structures, not the limits.
//
// Epoch overhead (seed 002, issue 10): BM_Fleet_* run four OSTs' whole NRS
// (nrs::Nrs) with requests spread over them, as a mount does; "Local" never
// coordinates (LocalEpochHub), "Shared" puts the filesystem's
// SharedEpochHub in the path: each OST asks for the next epoch when its
// policy is through (EpochDone, checked after every enqueue and dequeue, as
// ost::Service does, but not before kMinEpochSpan) or its epoch length has
// passed, reporting its policy
// data; the reduction and StartEpoch run when the last OST asks. The clock
// advances 1 us per request (a million requests/s, more than the FUSE path
// carries), so 50 ms epochs end every 50,000 requests, and the epoch
// policy's early ends as often as its chosen group runs out.
//
//   build/tools/bench/nrs_bench [--benchmark_filter=Tbf]
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "nrs/epoch_data.h"
#include "nrs/epoch_hub.h"
#include "nrs/nrs.h"
#include "nrs/policy.h"
#include "nrs/registry.h"
#include "nrs/scheduler.h"
#include "nrs/tbf_rules.h"

namespace sfs::nrs {
namespace {

constexpr size_t kBatch = 256;  // requests queued at once

// kBatch reusable requests; each batch moves them on to the next classes,
// so every one of `classes` uids, job ids and objects is used in turn and
// the policy's tables hold all of them.
struct Workload {
  explicit Workload(size_t classes) : classes(classes) {
    for (size_t c = 0; c < classes; c++) {
      jobids.push_back(std::make_shared<const std::string>("job." + std::to_string(c)));
    }
    for (size_t i = 0; i < kBatch; i++) {
      auto r = std::make_unique<Request>();
      r->info.op = i % 2 == 0 ? Op::kRead : Op::kWrite;
      r->info.gid = 100;
      r->info.offset = (i * 7919 * 4096) % (1 << 20);
      r->info.length = 4096;
      requests.push_back(std::move(r));
    }
  }
  void NextBatch() {
    for (size_t i = 0; i < kBatch; i++) {
      const size_t c = (next + i * 7919) % classes;  // interleaved, not in runs
      RequestInfo& info = requests[i]->info;
      info.uid = static_cast<uint32_t>(1000 + c);
      info.jobid = jobids[c];
      info.object_id = c;
    }
    next = (next + kBatch) % classes;
  }

  const size_t classes;
  size_t next = 0;
  std::vector<std::unique_ptr<Request>> requests;
  std::vector<std::shared_ptr<const std::string>> jobids;
};

Tunables BenchTunables() {
  Tunables t;
  t.tbf_default_rate = 1'000'000'000;  // never the limit here
  t.orr_supported = OrrSupported::kReadsAndWrites;
  t.delay_pct = 0;
  t.tbf_idle_class_limit = 20000;  // keep all 10,000 classes
  return t;
}

std::unique_ptr<Policy> Make(const std::string& spec) {
  auto policy = BuiltinPolicies().Create(spec, BenchTunables());
  if (!policy.ok()) {
    fprintf(stderr, "cannot create %s: %s\n", spec.c_str(), policy.status().ToString().c_str());
    abort();
  }
  return std::move(policy).value();
}

void PolicyAlone(benchmark::State& state, const std::string& spec) {
  Workload w(static_cast<size_t>(state.range(0)));
  auto policy = Make(spec);
  TimePoint now{};
  for (auto _ : state) {
    now += std::chrono::microseconds(1);
    w.NextBatch();
    for (auto& r : w.requests) policy->Enqueue(r.get(), now);
    for (size_t i = 0; i < kBatch; i++) {
      now += std::chrono::nanoseconds(1);
      Pick pick = policy->Dequeue(now);
      if (pick.request == nullptr) {
        state.SkipWithError("policy held a request back");
        return;
      }
      pick.request->policy_data = nullptr;
      policy->Served(pick.request, now);
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void WholeHead(benchmark::State& state, const std::string& spec) {
  Workload w(static_cast<size_t>(state.range(0)));
  Scheduler head;
  if (spec != "fifo") head.StartPrimary(Make(spec));
  TimePoint now{};
  std::vector<Request*> out(kBatch);
  for (auto _ : state) {
    now += std::chrono::microseconds(1);
    w.NextBatch();
    for (auto& r : w.requests) {
      r->info.arrival = now;
      head.Enqueue(r.get(), now);
    }
    for (size_t i = 0; i < kBatch; i++) {
      now += std::chrono::nanoseconds(1);
      out[i] = head.Dequeue(now).request;
      if (out[i] == nullptr) {
        state.SkipWithError("head held a request back");
        return;
      }
    }
    for (Request* r : out) head.Complete(r, now);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

// Four OSTs' NRS and their epochs, driven as ost::Service drives them.
class Fleet {
 public:
  static constexpr size_t kOsts = 4;
  static constexpr auto kEpochLength = std::chrono::milliseconds(50);

  Fleet(const std::string& spec, bool shared) {
    if (shared) {
      hub_ = std::make_shared<SharedEpochHub>(CombineEpochData, std::chrono::seconds(1));
    } else {
      hub_ = std::make_shared<LocalEpochHub>();
    }
    for (size_t i = 0; i < kOsts; i++) {
      osts_.push_back(std::make_unique<Ost>());
      if (spec != "fifo") osts_[i]->nrs.head(Head::kRegular).StartPrimary(Make(spec));
    }
    for (size_t i = 0; i < kOsts; i++) Ask(i);  // join
    // The first OST's epoch 1 started alone; the others' joins complete
    // with its next epoch; after one more all four are in step, as they
    // are on a mount long before the first request.
    now_ += kEpochLength;
    Ask(0);
    now_ += kEpochLength;
    for (size_t i = 0; i < kOsts; i++) Ask(i);
  }
  ~Fleet() {
    for (size_t i = 0; i < kOsts; i++) hub_->LastEpoch(static_cast<ParticipantId>(i), osts_[i]->epoch);
  }

  void Enqueue(size_t ost, Request* r) {
    osts_[ost]->nrs.Enqueue(r, now_);
    AskIfDue(ost);
  }
  Request* Dequeue(size_t ost) {
    now_ += std::chrono::microseconds(1);
    Request* r = osts_[ost]->nrs.Dequeue(now_).request;
    AskIfDue(ost);
    return r;
  }
  void Complete(size_t ost, Request* r) { osts_[ost]->nrs.Complete(r, now_); }
  uint64_t epochs() const { return epochs_; }

 private:
  struct Ost {
    Nrs nrs;
    Epoch epoch = kFirstEpoch;
    bool asked = false;
    TimePoint started{};
  };

  void AskIfDue(size_t i) {
    Ost& ost = *osts_[i];
    if (ost.asked) return;
    const auto ran = now_ - ost.started;
    const bool done_early = ran >= kMinEpochSpan && ost.nrs.EpochDone(now_);
    if (!done_early && ran < ost.nrs.EpochLength(kEpochLength)) return;
    Ask(i);
  }
  void Ask(size_t i) {
    Ost& ost = *osts_[i];
    ost.asked = true;
    hub_->NextEpoch(static_cast<ParticipantId>(i), ost.epoch, ost.nrs.ReportEpoch(now_),
                    [this, i](Epoch next, std::shared_ptr<const EpochData> reduced) {
                      Ost& o = *osts_[i];
                      o.asked = false;
                      if (EpochError(next)) return;
                      o.epoch = next;
                      o.started = now_;
                      o.nrs.StartEpoch(next, *reduced, now_);
                      if (i == 0) epochs_++;
                    });
  }

  std::shared_ptr<EpochHub> hub_;
  std::vector<std::unique_ptr<Ost>> osts_;
  TimePoint now_{};
  uint64_t epochs_ = 0;
};

void FleetBench(benchmark::State& state, const std::string& spec, bool shared) {
  Workload w(static_cast<size_t>(state.range(0)));
  Fleet fleet(spec, shared);
  std::vector<Request*> out(kBatch);
  for (auto _ : state) {
    w.NextBatch();
    // Request i goes to OST i % 4, and each OST serves what it holds.
    for (size_t i = 0; i < kBatch; i++) fleet.Enqueue(i % Fleet::kOsts, w.requests[i].get());
    for (size_t i = 0; i < kBatch; i++) {
      out[i] = fleet.Dequeue(i % Fleet::kOsts);
      if (out[i] == nullptr) {
        state.SkipWithError("an OST held a request back");
        return;
      }
    }
    for (size_t i = 0; i < kBatch; i++) fleet.Complete(i % Fleet::kOsts, out[i]);
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
  state.counters["epochs"] = static_cast<double>(fleet.epochs());
}

#define SFS_FLEET_BENCH(name, spec)                                                  \
  void BM_Fleet_##name##_Local(benchmark::State& s) { FleetBench(s, spec, false); } \
  void BM_Fleet_##name##_Shared(benchmark::State& s) { FleetBench(s, spec, true); } \
  BENCHMARK(BM_Fleet_##name##_Local)->Arg(1)->Arg(100)->Arg(10000);                 \
  BENCHMARK(BM_Fleet_##name##_Shared)->Arg(1)->Arg(100)->Arg(10000)

#define SFS_NRS_BENCH(name, spec)                                        \
  void BM_##name##_Policy(benchmark::State& s) { PolicyAlone(s, spec); } \
  void BM_##name##_Head(benchmark::State& s) { WholeHead(s, spec); }     \
  BENCHMARK(BM_##name##_Policy)->Arg(1)->Arg(100)->Arg(10000);           \
  BENCHMARK(BM_##name##_Head)->Arg(1)->Arg(100)->Arg(10000)

SFS_NRS_BENCH(Fifo, "fifo");
SFS_NRS_BENCH(CrrnJobid, "crrn");
SFS_NRS_BENCH(CrrnUid, "crrn uid");
SFS_NRS_BENCH(Orr, "orr");
SFS_NRS_BENCH(TbfUid, "tbf uid");
SFS_NRS_BENCH(TbfJobid, "tbf jobid");
SFS_NRS_BENCH(TbfAll, "tbf");
SFS_NRS_BENCH(EpochJobid, "epoch");

SFS_FLEET_BENCH(Fifo, "fifo");
SFS_FLEET_BENCH(CrrnJobid, "crrn");
SFS_FLEET_BENCH(TbfUid, "tbf uid");  // nrs_tbf_scope=fs: coordinates
SFS_FLEET_BENCH(EpochJobid, "epoch");

}  // namespace
}  // namespace sfs::nrs

BENCHMARK_MAIN();
