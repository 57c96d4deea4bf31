// What the metadata service's NRS head adds to one metadata operation: a
// request with an empty body submitted to mdt::Service under fifo (the
// default) and under TBF (one class, a rate out of the way), against the
// same request served directly (mdt_nrs=off). One thread, so the head is
// never contended: this is the head's own cost, which a FUSE metadata
// operation (tens of microseconds) pays once.
//
//   build/tools/bench/mdt_service_bench
#include <memory>
#include <string>

#include <benchmark/benchmark.h>

#include "mdt/service.h"
#include "nrs/policy.h"
#include "nrs/registry.h"

namespace sfs::mdt {
namespace {

class EmptyRequest final : public MdRequest {
 public:
  explicit EmptyRequest(uint64_t* served) : served_(served) {
    info.op = nrs::Op::kGetattr;
    info.uid = 1000;
    info.jobid = std::make_shared<const std::string>("bench");
  }
  EmptyRequest(EmptyRequest&& unscheduled) : served_(unscheduled.served_) {
    info = std::move(unscheduled.info);
  }
  void Serve() override { ++*served_; }

 private:
  uint64_t* served_;
};

void BM_Direct(benchmark::State& state) {
  uint64_t served = 0;
  for (auto _ : state) {
    EmptyRequest request(&served);
    request.info.arrival = nrs::Clock::now();
    request.Serve();
  }
  benchmark::DoNotOptimize(served);
}
BENCHMARK(BM_Direct);

void Run(benchmark::State& state, const char* spec) {
  Service service(ServiceOptions{});
  nrs::Tunables tunables;
  tunables.tbf_default_rate = 1'000'000'000;
  auto policy = nrs::BuiltinPolicies().Create(spec, tunables);
  if (!policy.ok()) {
    state.SkipWithError("policy");
    return;
  }
  service.StartPolicy(nrs::Head::kRegular, std::move(*policy));
  uint64_t served = 0;
  // As fs's ThroughMdt: on the stack, to the heap only when not admitted
  // at once (never under fifo; always under TBF, which may hold any
  // request).
  for (auto _ : state) {
    EmptyRequest request(&served);
    if (!service.ServeIfAdmitted(request)) {
      service.Submit(std::make_unique<EmptyRequest>(std::move(request)));
    }
  }
  benchmark::DoNotOptimize(served);
}
void BM_Fifo(benchmark::State& state) { Run(state, "fifo"); }
void BM_TbfJobid(benchmark::State& state) { Run(state, "tbf jobid"); }
BENCHMARK(BM_Fifo);
BENCHMARK(BM_TbfJobid);

}  // namespace
}  // namespace sfs::mdt

BENCHMARK_MAIN();
