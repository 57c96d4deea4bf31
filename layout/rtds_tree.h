// The RTDS tree (seed 004, LU-9809): weighted random choice over n items.
// A pick draws a point uniformly in [0, total) and returns the item i whose
// interval [S[i-1], S[i]) holds it, where S[i] = W[0] + ... + W[i]; the
// prefix sums live in a Fenwick tree, so a pick and a weight change each cost
// O(log n).
//
// Weights are fixed-point integers ("units", kUnitsPerWeight to a weight of
// 1.0), not doubles, so prefix sums are exact: a pick always lands on an item
// of positive weight and never past the end, whatever the order of updates.
// With doubles, rounding could pick an item whose weight was just set to 0.
//
// Thread safety: RtdsTree and WeightOverlay are plain values; their owner
// serialises writes against reads (RtdsPlacement holds a mutex). An overlay
// borrows its tree, which must not change while it lives. SharedRandom may
// be used from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sfs::layout {

inline constexpr uint64_t kUnitsPerWeight = uint64_t{1} << 20;
// Weights above this count as this much. kMaxUnits * kMaxTreeItems < 2^61,
// so no sum overflows, even with an overlay on top.
inline constexpr double kMaxWeight = 1e6;
inline constexpr uint64_t kMaxUnits = static_cast<uint64_t>(kMaxWeight) * kUnitsPerWeight;
inline constexpr size_t kMaxTreeItems = size_t{1} << 20;

// 0 for 0 or NaN; otherwise round(weight * kUnitsPerWeight) clamped to
// [1, kMaxUnits], so a positive weight, however small, stays choosable and
// +inf means "as heavy as possible".
uint64_t WeightToUnits(double weight);
double UnitsToWeight(uint64_t units);

// `units` * `factor` (a relative weight, possibly +inf) with the same rules:
// zero stays zero (a factor never revives an unusable OST), a positive
// result is at least 1 unit and at most kMaxUnits.
uint64_t ScaleUnits(uint64_t units, double factor);

class RtdsTree {
 public:
  RtdsTree() = default;
  // O(n). REQUIRES: units.size() <= kMaxTreeItems, every entry <= kMaxUnits.
  explicit RtdsTree(std::vector<uint64_t> units);

  size_t size() const { return weights_.size(); }
  uint64_t total() const { return total_; }
  uint64_t weight(size_t i) const { return weights_[i]; }

  // O(log n). REQUIRES: i < size(), units <= kMaxUnits.
  void Set(size_t i, uint64_t units);

  // The item whose interval holds `point`; it has positive weight.
  // REQUIRES: point < total(). O(log n).
  size_t Find(uint64_t point) const;

 private:
  friend class WeightOverlay;
  // Fenwick descent; `extra(begin, end)` adds to the sum of items
  // [begin, end) (the overlay's corrections; zero for the tree itself).
  template <class Extra>
  size_t Descend(uint64_t point, const Extra& extra) const;

  std::vector<uint64_t> weights_;
  std::vector<uint64_t> fenwick_;  // 1-based: fenwick_[k] sums items [k - lowbit(k), k)
  uint64_t total_ = 0;
  size_t top_step_ = 0;  // the largest power of two <= size()
};

// One file's private copy of the weights (seed 004: "copy the weight array
// from the public weight array ... all allocation processes share the same
// RTDS tree"). It stores only the items whose weight differs from the shared
// tree, so copying costs nothing and a pick over it costs
// O(log n * log m) for m changed items; with the default relative weights
// (RW(i,i) = 0 only) m is the number of stripes chosen so far.
class WeightOverlay {
 public:
  explicit WeightOverlay(const RtdsTree* tree) : tree_(tree), total_(tree->total()) {}

  uint64_t weight(size_t i) const;
  uint64_t total() const { return total_; }
  // O(m). REQUIRES: i < tree size, units <= kMaxUnits.
  void Set(size_t i, uint64_t units);
  // As RtdsTree::Find over the private weights. REQUIRES: point < total().
  size_t Find(uint64_t point) const;

 private:
  const RtdsTree* tree_;  // not owned
  // (item, private weight - shared weight), sorted by item; prefix_[k] is
  // the sum of the first k differences.
  std::vector<std::pair<size_t, int64_t>> deltas_;
  std::vector<int64_t> prefix_{0};
  uint64_t total_;
};

// The random numbers a pick draws: splitmix64 over an atomic counter, one
// relaxed fetch_add per number, so concurrent creates never queue for
// randomness, and a single thread's sequence is fixed by the seed.
// Thread-safe, unlike the tree.
class SharedRandom {
 public:
  explicit SharedRandom(uint64_t seed) : seed_(seed) {}

  uint64_t Next() {
    const uint64_t n = counter_.fetch_add(1, std::memory_order_relaxed) + 1;
    uint64_t z = seed_ + n * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound), exactly (Lemire's multiply-and-reject).
  // REQUIRES: bound > 0.
  uint64_t Below(uint64_t bound) {
    unsigned __int128 m = static_cast<unsigned __int128>(Next()) * bound;
    if (static_cast<uint64_t>(m) < bound) {
      const uint64_t threshold = (0 - bound) % bound;
      while (static_cast<uint64_t>(m) < threshold) {
        m = static_cast<unsigned __int128>(Next()) * bound;
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  const uint64_t seed_;
  std::atomic<uint64_t> counter_{0};
};

}  // namespace sfs::layout
