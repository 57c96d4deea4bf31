// Per-job counters of one target (an OST or the metadata service), as
// Lustre's job_stats keeps them: for every job id, per kind of operation the
// number of samples and the min, max and sum of their latency in
// microseconds with a power-of-two histogram, and for reads and writes also
// the min, max and sum of their sizes in bytes.
//
// Memory is bounded whatever job ids appear: at most `max_jobs` jobs are
// kept; a new job beyond that evicts the one idle longest. Jobs idle longer
// than the cleanup interval are dropped (checked on every call, at most
// once per quarter interval; 0 = never).
//
// Pure: the caller passes the time. Thread safety: every method may be
// called from any thread (one mutex per target, never held across a call
// out).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace sfs::jobstats {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

// Kinds of operation, named as Lustre's job_stats names them where it has
// the same operation (an OST truncate is "setattr" there; ours says
// "truncate").
enum class JobOp : uint8_t {
  // Data (counted by the OSTs)
  kRead,
  kWrite,
  kPunch,
  kSync,
  kTruncate,
  kAllocate,
  kDestroy,
  kSeek,
  // Metadata
  kLookup,
  kGetattr,
  kSetattr,
  kCreate,
  kMknod,
  kOpen,
  kClose,
  kUnlink,
  kMkdir,
  kRmdir,
  kRename,
  kLink,
  kSymlink,
  kReadlink,
  kReaddir,
  kGetxattr,
  kSetxattr,
  kStatfs,
  kCount  // not an op: the number of them
};
inline constexpr size_t kJobOps = static_cast<size_t>(JobOp::kCount);
const char* JobOpName(JobOp op);
std::optional<JobOp> JobOpFromName(std::string_view name);

// Latency buckets: bucket i counts samples below 2^i microseconds (bucket
// 0: below 1 us), the last one everything from 2^(kBuckets-2) us up.
inline constexpr size_t kHistogramBuckets = 24;  // up to ~4.2 s, then one open bucket

struct Summary {
  uint64_t samples = 0;
  uint64_t min = 0;
  uint64_t max = 0;
  uint64_t sum = 0;
  void Add(uint64_t value);
};

struct OpCounters {
  Summary latency_us;
  std::array<uint64_t, kHistogramBuckets> histogram{};
};

struct JobCounters {
  std::string job_id;
  TimePoint start{};      // first sample since the job appeared (or a clear)
  TimePoint last_seen{};  // latest sample
  Summary read_bytes;
  Summary write_bytes;
  // nullptr for kinds the job never used: most jobs use a few.
  std::array<std::unique_ptr<OpCounters>, kJobOps> ops;

  JobCounters() = default;
  JobCounters(const JobCounters& other);  // deep: snapshots own their counters
  JobCounters(JobCounters&&) = default;
  JobCounters& operator=(const JobCounters& other) = delete;
  JobCounters& operator=(JobCounters&&) = default;
  uint64_t TotalOps() const;
};

size_t HistogramBucket(uint64_t latency_us);

class JobStats {
 public:
  static constexpr size_t kDefaultMaxJobs = 1024;
  explicit JobStats(size_t max_jobs = kDefaultMaxJobs) : max_jobs_(max_jobs) {}

  // One operation of `job_id` that took `latency`; `bytes` counts for reads
  // and writes. An empty job id (job ids disabled) is not counted.
  void Record(std::string_view job_id, JobOp op, uint64_t bytes,
              std::chrono::nanoseconds latency, TimePoint now);
  // Every job, most recently seen first.
  std::vector<JobCounters> Snapshot(TimePoint now);
  void Clear();
  // Idle jobs older than this are dropped; 0 = never.
  void SetCleanupInterval(std::chrono::seconds interval, TimePoint now);
  std::chrono::seconds cleanup_interval();
  size_t size();

 private:
  // REQUIRES: mu_ held.
  void SweepLocked(TimePoint now);
  void EvictIdlestLocked();

  // Looked up by string_view: no string is made per record of a known job.
  struct IdHash {
    using is_transparent = void;
    size_t operator()(std::string_view id) const { return std::hash<std::string_view>{}(id); }
  };

  const size_t max_jobs_;
  std::mutex mu_;  // guards everything below
  std::unordered_map<std::string, JobCounters, IdHash, std::equal_to<>> jobs_;
  std::chrono::seconds cleanup_interval_{600};
  TimePoint last_sweep_{};
};

}  // namespace sfs::jobstats
