#include <mutex>
#include <random>

#include "layout/placement.h"

namespace sfs::layout {
namespace {

class RandomPlacement final : public Placement {
 public:
  RandomPlacement(std::vector<uint32_t> osts, uint64_t seed)
      : osts_(std::move(osts)), rng_(seed) {}
  const char* Name() const override { return "random"; }

  Result<std::vector<uint32_t>> ChooseOsts(uint32_t count,
                                           const PlacementContext&) override {
    if (osts_.empty()) return Status::Error(ENOSPC, "no OST to place stripes on");
    std::vector<uint32_t> pool = osts_;
    const size_t take = std::min<size_t>(count, pool.size());
    std::lock_guard<std::mutex> lock(mu_);
    // Partial Fisher-Yates: the first `take` slots become a uniform sample
    // without repetition, in random order.
    for (size_t i = 0; i < take; ++i) {
      std::uniform_int_distribution<size_t> pick(i, pool.size() - 1);
      std::swap(pool[i], pool[pick(rng_)]);
    }
    pool.resize(take);
    return pool;
  }

 private:
  const std::vector<uint32_t> osts_;
  std::mutex mu_;          // guards rng_
  std::mt19937_64 rng_;    // GUARDED_BY(mu_)
};

}  // namespace

std::unique_ptr<Placement> NewRandomPlacement(std::vector<uint32_t> osts, uint64_t seed) {
  return std::make_unique<RandomPlacement>(std::move(osts), seed);
}

}  // namespace sfs::layout
