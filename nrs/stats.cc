#include "nrs/stats.h"

#include <bit>
#include <cmath>

namespace sfs::nrs {

int LatencyHistogram::BucketOf(uint64_t ns) {
  if (ns < (1u << kSubBits)) return static_cast<int>(ns);
  const int top = 63 - std::countl_zero(ns);  // >= kSubBits
  const int sub = static_cast<int>((ns >> (top - kSubBits)) & ((1u << kSubBits) - 1));
  return ((top - kSubBits + 1) << kSubBits) + sub;
}

uint64_t LatencyHistogram::UpperBoundOf(int bucket) {
  if (bucket < (1 << kSubBits)) return static_cast<uint64_t>(bucket);
  const int top = (bucket >> kSubBits) + kSubBits - 1;
  const uint64_t sub = static_cast<uint64_t>(bucket & ((1 << kSubBits) - 1));
  const uint64_t base = uint64_t{1} << top;
  const uint64_t step = base >> kSubBits;
  return base + (sub + 1) * step - 1;
}

void LatencyHistogram::Add(uint64_t ns, uint32_t times) {
  buckets_[BucketOf(ns)] += times;
  count_ += times;
}

uint64_t AtomicLatencyHistogram::MoveInto(LatencyHistogram* into) {
  uint64_t moved = 0;
  for (int i = 0; i < LatencyHistogram::kBuckets; i++) {
    // Most buckets of a service time are empty: a load is cheaper than an
    // exchange that finds nothing.
    if (buckets_[i].load(std::memory_order_relaxed) == 0) continue;
    const uint32_t n = buckets_[i].exchange(0, std::memory_order_relaxed);
    into->buckets_[i] += n;
    moved += n;
  }
  into->count_ += moved;
  return moved;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; i++) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
}

uint64_t LatencyHistogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  // The rank of the p-th percentile, 1-based: the smallest value with at
  // least p percent of the samples at or below it.
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(p / 100.0 * count_)));
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; i++) {
    seen += buckets_[i];
    if (seen >= rank) return UpperBoundOf(i);
  }
  return UpperBoundOf(kBuckets - 1);
}

void ClassStatsTable::Add(const std::string& class_name, uint64_t bytes, uint64_t wait_ns,
                          uint64_t service_ns) {
  ClassStats& stats = Touch(class_name);
  stats.requests++;
  stats.bytes += bytes;
  stats.wait.Add(wait_ns);
  stats.service.Add(service_ns);
}

void ClassStatsTable::AddMany(const std::string& class_name, uint64_t requests, uint64_t bytes,
                              const LatencyHistogram& wait, const LatencyHistogram& service) {
  if (requests == 0) return;
  ClassStats& stats = Touch(class_name);
  stats.requests += requests;
  stats.bytes += bytes;
  stats.wait.Merge(wait);
  stats.service.Merge(service);
}

ClassStats& ClassStatsTable::Touch(const std::string& class_name) {
  auto it = index_.find(class_name);
  if (it == index_.end()) {
    lru_.emplace_front();
    lru_.front().name = class_name;
    it = index_.emplace(class_name, lru_.begin()).first;
    if (lru_.size() > limit_) FoldOldest();
  } else if (it->second != lru_.begin()) {
    lru_.splice(lru_.begin(), lru_, it->second);
  }
  return *it->second;
}

void ClassStatsTable::FoldOldest() {
  ClassStats& oldest = lru_.back();
  other_.requests += oldest.requests;
  other_.bytes += oldest.bytes;
  other_.wait.Merge(oldest.wait);
  other_.service.Merge(oldest.service);
  index_.erase(oldest.name);
  lru_.pop_back();
}

std::vector<ClassStats> ClassStatsTable::Snapshot() const {
  std::vector<ClassStats> out(lru_.begin(), lru_.end());
  if (other_.requests != 0) out.push_back(other_);
  return out;
}

}  // namespace sfs::nrs
