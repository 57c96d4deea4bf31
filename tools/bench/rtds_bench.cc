// RTDS placement micro-benchmarks (issue 4), all in one run:
//   Pick/<osts>                   one-stripe creates through RtdsPlacement
//   PickUpdating/<osts>           the same beside a thread that changes an
//                                 OST's automatic factor as fast as it can
//   File4/<osts>                  four-stripe creates (relative weights path)
//   {Tree,Linear}RwLock[Updating]/<osts>
//                                 the index alone (no pools, no result
//                                 vector): the RTDS tree against the linear-
//                                 scan baseline, same reader/writer lock,
//                                 randomness and fixed-point weights
//   Tree{Mutex,Snapshot}[Updating]/<osts>
//                                 the tree under the other designs: one
//                                 plain mutex, or an immutable copy swapped
//                                 on each update (O(n) updates)
//   Balance/<stripes>             10,000 creates over 16 OSTs of weights
//                                 1,2,3,4,1,2,3,4,...: the largest deviation of
//                                 any OST's share of the objects from its
//                                 expected share, as counters
// items_per_second is picks (creates) per second.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <type_traits>

#include <benchmark/benchmark.h>

#include "layout/rtds_placement.h"
#include "layout/rtds_tree.h"

namespace sfs::layout {
namespace {

std::vector<double> CyclicWeights(size_t osts) {
  std::vector<double> weights(osts);
  for (size_t i = 0; i < osts; ++i) weights[i] = 1 + i % 4;
  return weights;
}

std::unique_ptr<RtdsPlacement> MakePlacement(size_t osts, uint64_t seed = 1) {
  PlacementConfig config;
  config.weights = CyclicWeights(osts);
  return std::move(NewRtdsPlacement(std::move(config), seed)).value();
}

// The index of a picker: the RTDS tree, or the linear-scan baseline over the
// same fixed-point weights.
class TreeIndex {
 public:
  explicit TreeIndex(std::vector<uint64_t> units) : tree_(std::move(units)) {}
  uint64_t total() const { return tree_.total(); }
  uint32_t Find(uint64_t point) const { return static_cast<uint32_t>(tree_.Find(point)); }
  void Set(uint32_t i, uint64_t units) { tree_.Set(i, units); }

 private:
  RtdsTree tree_;
};

class LinearIndex {
 public:
  explicit LinearIndex(std::vector<uint64_t> units) : units_(std::move(units)) {
    for (uint64_t u : units_) total_ += u;
  }
  uint64_t total() const { return total_; }
  uint32_t Find(uint64_t point) const {
    uint32_t i = 0;
    while (point >= units_[i]) point -= units_[i++];
    return i;
  }
  void Set(uint32_t i, uint64_t units) {
    total_ = total_ - units_[i] + units;
    units_[i] = units;
  }

 private:
  std::vector<uint64_t> units_;
  uint64_t total_ = 0;
};

std::vector<uint64_t> Units(const std::vector<double>& weights) {
  std::vector<uint64_t> units;
  for (double w : weights) units.push_back(WeightToUnits(w));
  return units;
}

// An index shared by threads under a lock: std::shared_mutex (readers share)
// or std::mutex (every pick exclusive).
template <class Index, class Lock>
class LockedPicker {
 public:
  explicit LockedPicker(const std::vector<double>& weights) : index_(Units(weights)) {}
  uint32_t Pick() {
    if constexpr (std::is_same_v<Lock, std::shared_mutex>) {
      std::shared_lock lock(mu_);
      return index_.Find(random_.Below(index_.total()));
    } else {
      std::lock_guard lock(mu_);
      return index_.Find(random_.Below(index_.total()));
    }
  }
  void Set(uint32_t i, double weight) {
    std::lock_guard lock(mu_);
    index_.Set(i, WeightToUnits(weight));
  }

 private:
  Lock mu_;  // guards index_
  Index index_;
  SharedRandom random_{0};
};

// The other design: an immutable index swapped whole. Picks take no lock;
// every update copies the index, O(n).
template <class Index>
class SnapshotPicker {
 public:
  explicit SnapshotPicker(const std::vector<double>& weights)
      : index_(std::make_shared<const Index>(Units(weights))) {}
  uint32_t Pick() {
    const std::shared_ptr<const Index> index = index_.load();
    return index->Find(random_.Below(index->total()));
  }
  void Set(uint32_t i, double weight) {
    std::lock_guard lock(writer_mu_);
    auto next = std::make_shared<Index>(*index_.load());
    next->Set(i, WeightToUnits(weight));
    index_.store(std::move(next));
  }

 private:
  std::mutex writer_mu_;  // serialises Set
  std::atomic<std::shared_ptr<const Index>> index_;
  SharedRandom random_{0};
};

// Runs `update(ost, factor)` on its own thread until destroyed, cycling
// every OST through factors 0.5 .. 1.5 (never 0, so the picks never fail).
class Updater {
 public:
  Updater(size_t osts, std::function<void(uint32_t, double)> update)
      : thread_([this, osts, update = std::move(update)] {
          for (uint64_t n = 0; !stop_.load(std::memory_order_relaxed); ++n) {
            update(static_cast<uint32_t>(n % osts), 0.5 + static_cast<double>(n % 11) / 10);
            updates_.fetch_add(1, std::memory_order_relaxed);
          }
        }) {}
  ~Updater() {
    stop_ = true;
    thread_.join();
  }
  uint64_t updates() const { return updates_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> updates_{0};
  std::thread thread_;
};

void Pick(benchmark::State& state) {
  auto placement = MakePlacement(state.range(0));
  const PlacementContext context;
  for (auto _ : state) benchmark::DoNotOptimize(placement->Choose(1, context));
  state.SetItemsProcessed(state.iterations());
}

void PickUpdating(benchmark::State& state) {
  auto placement = MakePlacement(state.range(0));
  const PlacementContext context;
  const auto start = std::chrono::steady_clock::now();
  Updater updater(state.range(0),
                  [&](uint32_t ost, double f) { (void)placement->SetAutoFactor(ost, f); });
  for (auto _ : state) benchmark::DoNotOptimize(placement->Choose(1, context));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.SetItemsProcessed(state.iterations());
  state.counters["updates/s"] = static_cast<double>(updater.updates()) / seconds;
}

template <class Picker>
void Raw(benchmark::State& state) {
  Picker picker(CyclicWeights(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(picker.Pick());
  state.SetItemsProcessed(state.iterations());
}

template <class Picker>
void RawUpdating(benchmark::State& state) {
  const auto weights = CyclicWeights(state.range(0));
  Picker picker(weights);
  const auto start = std::chrono::steady_clock::now();
  Updater updater(weights.size(),
                  [&](uint32_t ost, double f) { picker.Set(ost, weights[ost] * f); });
  for (auto _ : state) benchmark::DoNotOptimize(picker.Pick());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.SetItemsProcessed(state.iterations());
  state.counters["updates/s"] = static_cast<double>(updater.updates()) / seconds;
}

void File4(benchmark::State& state) {
  auto placement = MakePlacement(state.range(0));
  const PlacementContext context;
  for (auto _ : state) benchmark::DoNotOptimize(placement->Choose(4, context));
  state.SetItemsProcessed(state.iterations());
}

// P(OST i holds one of the file's `stripes` objects) when each stripe is
// drawn proportionally to weight among the OSTs not yet used (the default
// relative weights), by enumerating every ordered draw.
void Inclusion(const std::vector<double>& w, int stripes, std::vector<bool>& used, double p,
               std::vector<double>& inclusion) {
  if (stripes == 0) return;
  double free = 0;
  for (size_t i = 0; i < w.size(); ++i) free += used[i] ? 0 : w[i];
  for (size_t i = 0; i < w.size(); ++i) {
    if (used[i] || w[i] == 0) continue;
    const double q = p * w[i] / free;
    inclusion[i] += q;
    used[i] = true;
    Inclusion(w, stripes - 1, used, q, inclusion);
    used[i] = false;
  }
}

void Balance(benchmark::State& state) {
  constexpr int kFiles = 10000;
  constexpr size_t kOsts = 16;
  const int stripes = static_cast<int>(state.range(0));
  const auto weights = CyclicWeights(kOsts);
  std::vector<double> exact(kOsts, 0);
  std::vector<bool> used(kOsts, false);
  Inclusion(weights, stripes, used, 1.0, exact);
  double weight_sum = 0;
  for (double w : weights) weight_sum += w;

  std::vector<uint64_t> objects(kOsts, 0);
  for (auto _ : state) {
    auto placement = MakePlacement(kOsts, 42);
    std::fill(objects.begin(), objects.end(), 0);
    for (int f = 0; f < kFiles; ++f) {
      const auto choice = placement->Choose(stripes, {});
      for (uint32_t ost : choice->osts) objects[ost]++;
    }
  }
  double dev_exact = 0, rel_exact = 0, dev_weight = 0;
  for (size_t i = 0; i < kOsts; ++i) {
    const double share = static_cast<double>(objects[i]) / (static_cast<double>(kFiles) * stripes);
    const double expected = exact[i] / stripes;  // inclusion probabilities sum to `stripes`
    dev_exact = std::max(dev_exact, std::fabs(share - expected));
    rel_exact = std::max(rel_exact, std::fabs(share - expected) / expected);
    dev_weight = std::max(dev_weight, std::fabs(share - weights[i] / weight_sum));
  }
  state.counters["max_dev_pp"] = 100 * dev_exact;     // share points, vs expected share
  state.counters["max_rel_dev_%"] = 100 * rel_exact;  // relative to the expected share
  state.counters["vs_weight_pp"] = 100 * dev_weight;  // vs plain weight / sum of weights
}

void Osts(benchmark::internal::Benchmark* b) {
  for (int osts : {4, 64, 1024, 10000}) b->Arg(osts);
}

BENCHMARK(Pick)->Apply(Osts);
BENCHMARK(PickUpdating)->Apply(Osts)->UseRealTime();
BENCHMARK(File4)->Apply(Osts);
// The data structures alone, with the same randomness, under each design.
BENCHMARK(Raw<LockedPicker<TreeIndex, std::shared_mutex>>)->Name("TreeRwLock")->Apply(Osts);
BENCHMARK(Raw<LockedPicker<LinearIndex, std::shared_mutex>>)->Name("LinearRwLock")->Apply(Osts);
BENCHMARK(Raw<LockedPicker<TreeIndex, std::mutex>>)->Name("TreeMutex")->Apply(Osts);
BENCHMARK(Raw<SnapshotPicker<TreeIndex>>)->Name("TreeSnapshot")->Apply(Osts);
BENCHMARK(RawUpdating<LockedPicker<TreeIndex, std::shared_mutex>>)
    ->Name("TreeRwLockUpdating")
    ->Apply(Osts)
    ->UseRealTime();
BENCHMARK(RawUpdating<LockedPicker<LinearIndex, std::shared_mutex>>)
    ->Name("LinearRwLockUpdating")
    ->Apply(Osts)
    ->UseRealTime();
BENCHMARK(RawUpdating<LockedPicker<TreeIndex, std::mutex>>)
    ->Name("TreeMutexUpdating")
    ->Apply(Osts)
    ->UseRealTime();
BENCHMARK(RawUpdating<SnapshotPicker<TreeIndex>>)
    ->Name("TreeSnapshotUpdating")
    ->Apply(Osts)
    ->UseRealTime();
BENCHMARK(Balance)->Arg(1)->Arg(4)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sfs::layout

BENCHMARK_MAIN();
