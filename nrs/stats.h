// Per-class request statistics of one policy on one head: counts, bytes and
// wait/service time histograms, for user.stripefs.nrs_stats.
//
// Thread safety: plain data, serialized by the owning Scheduler's caller.
#pragma once

#include <array>
#include <atomic>
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
  void Add(uint64_t ns, uint32_t times = 1);
  uint64_t count() const { return count_; }
  // The upper bound of the bucket holding the p-th percentile (0 < p <= 100);
  // 0 when empty.
  uint64_t Percentile(double p) const;
  void Merge(const LatencyHistogram& other);

  // Its buckets one by one, for a copy that crosses a process boundary
  // (rpc/nrs_wire.h); AddToBucket with an index out of range does nothing.
  static constexpr int kSubBits = 2;
  static constexpr int kBuckets = 64 << kSubBits;
  uint32_t bucket(int index) const { return buckets_[index]; }
  void AddToBucket(int index, uint32_t times) {
    if (index < 0 || index >= kBuckets) return;
    buckets_[index] += times;
    count_ += times;
  }

 private:
  static int BucketOf(uint64_t ns);
  static uint64_t UpperBoundOf(int bucket);

  std::array<uint32_t, kBuckets> buckets_{};
  uint64_t count_ = 0;

  friend class AtomicLatencyHistogram;
};

// A LatencyHistogram that threads add to without a lock (relaxed atomic
// counts) and a reader moves out of now and then: for tallies kept off a
// shared lock (mdt::Service's lock-free way in).
class AtomicLatencyHistogram {
 public:
  void Add(uint64_t ns) {
    buckets_[LatencyHistogram::BucketOf(ns)].fetch_add(1, std::memory_order_relaxed);
  }
  // Adds what was counted since the last call to `into`, forgets it, and
  // returns how many samples that was. An Add racing with it lands in this
  // call or the next, never both.
  uint64_t MoveInto(LatencyHistogram* into);

 private:
  std::array<std::atomic<uint32_t>, LatencyHistogram::kBuckets> buckets_{};
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
  // Many requests of one class at once, as if each were Added.
  void AddMany(const std::string& class_name, uint64_t requests, uint64_t bytes,
               const LatencyHistogram& wait, const LatencyHistogram& service);
  // Most recently used first; "(other)" last if anything was folded.
  std::vector<ClassStats> Snapshot() const;

 private:
  // The class's entry, created (folding the oldest away if over the
  // limit) or moved to the front.
  ClassStats& Touch(const std::string& class_name);
  void FoldOldest();

  size_t limit_;
  std::list<ClassStats> lru_;  // front = most recently used
  std::unordered_map<std::string, std::list<ClassStats>::iterator> index_;
  ClassStats other_;
};

}  // namespace sfs::nrs
