#include "layout/rtds_tree.h"

#include <algorithm>
#include <cmath>

namespace sfs::layout {
namespace {

size_t LowBit(size_t k) { return k & (~k + 1); }

}  // namespace

uint64_t WeightToUnits(double weight) {
  if (!(weight > 0)) return 0;  // also NaN
  if (weight >= kMaxWeight) return kMaxUnits;
  return std::max<uint64_t>(1, std::llround(weight * static_cast<double>(kUnitsPerWeight)));
}

double UnitsToWeight(uint64_t units) {
  return static_cast<double>(units) / static_cast<double>(kUnitsPerWeight);
}

uint64_t ScaleUnits(uint64_t units, double factor) {
  if (units == 0 || !(factor > 0)) return 0;
  const double scaled = static_cast<double>(units) * factor;  // +inf for factor inf
  if (scaled >= static_cast<double>(kMaxUnits)) return kMaxUnits;
  return std::max<uint64_t>(1, std::llround(scaled));
}

RtdsTree::RtdsTree(std::vector<uint64_t> units)
    : weights_(std::move(units)), fenwick_(weights_.size() + 1, 0) {
  const size_t n = weights_.size();
  for (size_t k = 1; k <= n; ++k) {
    fenwick_[k] += weights_[k - 1];
    total_ += weights_[k - 1];
    const size_t parent = k + LowBit(k);
    if (parent <= n) fenwick_[parent] += fenwick_[k];
  }
  top_step_ = n == 0 ? 0 : size_t{1} << (63 - __builtin_clzll(n));
}

void RtdsTree::Set(size_t i, uint64_t units) {
  // Unsigned wrap-around makes "add a negative difference" exact.
  const uint64_t diff = units - weights_[i];
  weights_[i] = units;
  total_ += diff;
  for (size_t k = i + 1; k < fenwick_.size(); k += LowBit(k)) fenwick_[k] += diff;
}

template <class Extra>
size_t RtdsTree::Descend(uint64_t point, const Extra& extra) const {
  // Finds the largest pos with S[pos-1] <= point, one bit at a time from the
  // top: fenwick_[pos + step] covers exactly the items [pos, pos + step).
  const size_t n = weights_.size();
  size_t pos = 0;
  uint64_t rest = point;
  for (size_t step = top_step_; step != 0; step >>= 1) {
    const size_t next = pos + step;
    if (next > n) continue;
    const uint64_t sum = fenwick_[next] + static_cast<uint64_t>(extra(pos, next));
    if (sum <= rest) {
      pos = next;
      rest -= sum;
    }
  }
  return pos;
}

size_t RtdsTree::Find(uint64_t point) const {
  return Descend(point, [](size_t, size_t) { return int64_t{0}; });
}

uint64_t WeightOverlay::weight(size_t i) const {
  auto it = std::lower_bound(deltas_.begin(), deltas_.end(), std::make_pair(i, INT64_MIN));
  const uint64_t shared = tree_->weight(i);
  if (it == deltas_.end() || it->first != i) return shared;
  return shared + static_cast<uint64_t>(it->second);
}

void WeightOverlay::Set(size_t i, uint64_t units) {
  const int64_t delta = static_cast<int64_t>(units) - static_cast<int64_t>(tree_->weight(i));
  auto it = std::lower_bound(deltas_.begin(), deltas_.end(), std::make_pair(i, INT64_MIN));
  if (it != deltas_.end() && it->first == i) {
    total_ += static_cast<uint64_t>(delta - it->second);
    it->second = delta;
  } else {
    total_ += static_cast<uint64_t>(delta);
    deltas_.insert(it, {i, delta});
  }
  prefix_.resize(deltas_.size() + 1);
  for (size_t k = 0; k < deltas_.size(); ++k) prefix_[k + 1] = prefix_[k] + deltas_[k].second;
}

size_t WeightOverlay::Find(uint64_t point) const {
  if (deltas_.empty()) return tree_->Find(point);
  // Sum of the differences for items in [begin, end): two binary searches.
  auto rank = [this](size_t item) {
    return std::lower_bound(deltas_.begin(), deltas_.end(), std::make_pair(item, INT64_MIN)) -
           deltas_.begin();
  };
  return tree_->Descend(
      point, [&](size_t begin, size_t end) { return prefix_[rank(end)] - prefix_[rank(begin)]; });
}

}  // namespace sfs::layout
