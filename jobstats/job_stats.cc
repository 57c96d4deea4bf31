#include "jobstats/job_stats.h"

#include <algorithm>
#include <bit>

namespace sfs::jobstats {
namespace {

constexpr const char* kNames[kJobOps] = {
    "read",   "write",  "punch",   "sync",     "truncate", "prealloc", "destroy", "seek",
    "lookup", "getattr", "setattr", "create",  "mknod",    "open",     "close",   "unlink",
    "mkdir",  "rmdir",  "rename",  "link",     "symlink",  "readlink", "readdir", "getxattr",
    "setxattr", "statfs"};

}  // namespace

const char* JobOpName(JobOp op) {
  const size_t i = static_cast<size_t>(op);
  return i < kJobOps ? kNames[i] : "?";
}

std::optional<JobOp> JobOpFromName(std::string_view name) {
  for (size_t i = 0; i < kJobOps; i++) {
    if (name == kNames[i]) return static_cast<JobOp>(i);
  }
  return std::nullopt;
}

void Summary::Add(uint64_t value) {
  min = samples == 0 ? value : std::min(min, value);
  max = std::max(max, value);
  sum += value;
  samples++;
}

size_t HistogramBucket(uint64_t latency_us) {
  // bit_width(0) = 0, bit_width(1) = 1, bit_width(2..3) = 2: bucket i holds
  // [2^(i-1), 2^i).
  return std::min<size_t>(std::bit_width(latency_us), kHistogramBuckets - 1);
}

JobCounters::JobCounters(const JobCounters& other)
    : job_id(other.job_id),
      start(other.start),
      last_seen(other.last_seen),
      read_bytes(other.read_bytes),
      write_bytes(other.write_bytes) {
  for (size_t i = 0; i < kJobOps; i++) {
    if (other.ops[i]) ops[i] = std::make_unique<OpCounters>(*other.ops[i]);
  }
}

uint64_t JobCounters::TotalOps() const {
  uint64_t total = 0;
  for (const auto& op : ops) {
    if (op) total += op->latency_us.samples;
  }
  return total;
}

void JobStats::Record(std::string_view job_id, JobOp op, uint64_t bytes,
                      std::chrono::nanoseconds latency, TimePoint now) {
  if (job_id.empty() || op >= JobOp::kCount) return;
  const uint64_t us =
      static_cast<uint64_t>(std::max<int64_t>(0, latency.count())) / 1000;
  std::lock_guard<std::mutex> lock(mu_);
  SweepLocked(now);
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) {
    if (jobs_.size() >= max_jobs_) EvictIdlestLocked();
    it = jobs_.emplace(std::string(job_id), JobCounters{}).first;
    it->second.job_id = std::string(job_id);
    it->second.start = now;
  }
  JobCounters& job = it->second;
  job.last_seen = std::max(job.last_seen, now);
  if (op == JobOp::kRead) job.read_bytes.Add(bytes);
  if (op == JobOp::kWrite) job.write_bytes.Add(bytes);
  auto& counters = job.ops[static_cast<size_t>(op)];
  if (!counters) counters = std::make_unique<OpCounters>();
  counters->latency_us.Add(us);
  counters->histogram[HistogramBucket(us)]++;
}

std::vector<JobCounters> JobStats::Snapshot(TimePoint now) {
  std::vector<JobCounters> out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    SweepLocked(now);
    out.reserve(jobs_.size());
    for (const auto& [id, job] : jobs_) out.push_back(job);
  }
  std::sort(out.begin(), out.end(), [](const JobCounters& a, const JobCounters& b) {
    return a.last_seen != b.last_seen ? a.last_seen > b.last_seen : a.job_id < b.job_id;
  });
  return out;
}

void JobStats::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.clear();
}

void JobStats::SetCleanupInterval(std::chrono::seconds interval, TimePoint now) {
  std::lock_guard<std::mutex> lock(mu_);
  cleanup_interval_ = interval;
  last_sweep_ = TimePoint{};  // sweep with the new interval on the next call
  SweepLocked(now);
}

std::chrono::seconds JobStats::cleanup_interval() {
  std::lock_guard<std::mutex> lock(mu_);
  return cleanup_interval_;
}

size_t JobStats::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return jobs_.size();
}

void JobStats::SweepLocked(TimePoint now) {
  if (cleanup_interval_.count() <= 0) return;
  // In nanoseconds: a quarter of 1-3 s is not 0.
  const auto quarter = std::chrono::duration_cast<std::chrono::nanoseconds>(cleanup_interval_) / 4;
  if (last_sweep_ != TimePoint{} && now - last_sweep_ < quarter) return;
  last_sweep_ = now;
  std::erase_if(jobs_, [&](const auto& entry) {
    return now - entry.second.last_seen > cleanup_interval_;
  });
}

void JobStats::EvictIdlestLocked() {
  auto idlest = std::min_element(jobs_.begin(), jobs_.end(), [](const auto& a, const auto& b) {
    return a.second.last_seen < b.second.last_seen;
  });
  if (idlest != jobs_.end()) jobs_.erase(idlest);
}

}  // namespace sfs::jobstats
