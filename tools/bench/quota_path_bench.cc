// What quota enforcement and space grants cost a growing 4 KiB write, the
// way the data path takes them (control/quota_control.h, control/space_grants.h):
// a reservation over the file's user, group and project through one OST's
// chunk, the store's usage observed for the three ids, the reservation
// settled; and a free-space grant taken and returned. A lock around each,
// as on the mount. (quota_bench.sh measures the same on a mount.)
#include <benchmark/benchmark.h>

#include <mutex>

#include "resource/free_space.h"
#include "resource/quota.h"

namespace sfs::resource {
namespace {

const std::vector<QuotaId> kIds{{QuotaType::kUser, 1000}, {QuotaType::kGroup, 100},
                                {QuotaType::kProject, 42}};

void BM_QuotaReserveObserveSettle(benchmark::State& state) {
  std::mutex mu;
  QuotaEnforcer quota;
  quota.SetBlockOwners(4);
  const int64_t now_sec = 1'000'000;
  for (const QuotaId& id : kIds) quota.SetLimits(id, QuotaLimits{1ULL << 40, 2ULL << 40, 0, 0}, now_sec);
  std::map<QuotaId, QuotaUsage> usage;
  size_t ost = 0;
  for (auto _ : state) {
    QuotaEnforcer::Reservation reservation;
    const auto now = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mu);
      benchmark::DoNotOptimize(quota.ReserveBlocks(kIds, ost, 4096, now, now_sec, &reservation));
    }
    {
      std::lock_guard<std::mutex> lock(mu);  // the store's observer, per id
      for (const QuotaId& id : kIds) {
        usage[id].bytes += 4096;
        quota.Observe(id, usage[id], now_sec);
      }
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      quota.Settle(reservation, 4096, now);
    }
    ost = (ost + 1) % 4;
  }
}
BENCHMARK(BM_QuotaReserveObserveSettle);

void BM_SpaceGrantGetPut(benchmark::State& state) {
  std::mutex mu;
  FreeSpace space(64 << 20);
  space.Sample(1ULL << 40, FreeSpace::Clock::now());
  for (auto _ : state) {
    {
      std::lock_guard<std::mutex> lock(mu);
      benchmark::DoNotOptimize(space.Get(8192));
    }
    std::lock_guard<std::mutex> lock(mu);
    space.Put(8192, FreeSpace::Clock::now());
  }
}
BENCHMARK(BM_SpaceGrantGetPut);

}  // namespace
}  // namespace sfs::resource

BENCHMARK_MAIN();
