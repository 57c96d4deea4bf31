// Per-class request statistics of one policy on one head: counts, bytes and
// wait/service time histograms, for user.stripefs.nrs_stats.
//
// Thread safety: plain data, serialized by the owning Scheduler's caller.
#pragma once

#include <array>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace sfs::nrs {

// Log-linear histogram of nanosecond durations: four buckets per power of
// two, so a percentile is known to within 19 %. Fixed size, no allocation.
class LatencyHistogram {
 public:
  void Add(uint64_t ns);
  uint64_t count() const { return count_; }
  // The upper bound of the bucket holding the p-th percentile (0 < p <= 100);
  // 0 when empty.
  uint64_t Percentile(double p) const;
  void Merge(const LatencyHistogram& other);

 private:
  static constexpr int kSubBits = 2;
  static constexpr int kBuckets = 64 << kSubBits;
  static int BucketOf(uint64_t ns);
  static uint64_t UpperBoundOf(int bucket);

  std::array<uint32_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
};

struct ClassStats {
  std::string name;  // Policy::ClassOf, or "(other)" for evicted classes
  uint64_t requests = 0;
  uint64_t bytes = 0;
  LatencyHistogram wait;     // arrival -> dequeue
  LatencyHistogram service;  // dequeue -> complete
};

// A bounded table of ClassStats: the `limit` most recently used classes,
// plus one "(other)" entry into which least recently used ones are folded,
// so a million job ids cost a fixed amount of memory.
class ClassStatsTable {
 public:
  explicit ClassStatsTable(size_t limit = 64) : limit_(limit) { other_.name = "(other)"; }
  void Add(const std::string& class_name, uint64_t bytes, uint64_t wait_ns, uint64_t service_ns);
  // Most recently used first; "(other)" last if anything was folded.
  std::vector<ClassStats> Snapshot() const;

 private:
  void FoldOldest();

  size_t limit_;
  std::list<ClassStats> lru_;  // front = most recently used
  std::unordered_map<std::string, std::list<ClassStats>::iterator> index_;
  ClassStats other_;
};

}  // namespace sfs::nrs
