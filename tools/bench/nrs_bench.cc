// Scheduler cost: enqueue + dequeue pairs per second on one core for each
// policy, with 1, 100 and 10,000 classes (clients, objects or TBF classes),
// on the policy alone and on a whole NRS head (which adds Complete(): the
// per-class statistics). Time is a fake clock advanced 1 ns per dequeue, and
// TBF runs at 10^9 requests/s per class, so a token is always there when a
// request is asked for: this measures the data structures, not the limits.
//
//   build/tools/bench/nrs_bench [--benchmark_filter=Tbf]
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

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

}  // namespace
}  // namespace sfs::nrs

BENCHMARK_MAIN();
