// The job_stats report: what the daemon publishes as the setting
// `job_stats` (YAML in the shape of Lustre's job_stats, one block per
// target) and how `stripefs jobstats` reads it back and ranks jobs.
//
//   ost0:
//     job_stats:
//     - job_id:          dd.1000
//       snapshot_time:   1763880000.123456789 secs.nsecs
//       start_time:      1763879990.000000000 secs.nsecs
//       elapsed_time:    10.123456789 secs.nsecs
//       read_bytes:      { samples: 0, unit: bytes, min: 0, max: 0, sum: 0 }
//       write_bytes:     { samples: 4, unit: bytes, min: 1048576, max: 1048576, sum: 4194304 }
//       write:           { samples: 4, unit: usecs, min: 310, max: 911, sum: 2280, hist: { 512: 3, 1024: 1 } }
//
// Kinds of operation a job never used are left out; `hist` maps a bucket's
// upper bound in microseconds (exclusive; "inf" for the last) to its count.
// An extended attribute holds at most 64 KiB, so each target lists the jobs
// that fit in its share of `max_bytes`, most recently active first, and
// says in a comment how many it left out.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "jobstats/job_stats.h"

namespace sfs::jobstats {

struct TargetJobs {
  std::string target;  // "mdt", "ost0", ...
  std::vector<JobCounters> jobs;
};

// `now` and `wall_now` are the same instant on the two clocks.
std::string FormatYaml(const std::vector<TargetJobs>& targets, TimePoint now,
                       std::chrono::system_clock::time_point wall_now, size_t max_bytes);

// One job on one target, read back.
struct ParsedJob {
  std::string target;
  std::string job_id;
  uint64_t read_bytes = 0, write_bytes = 0;
  std::map<std::string, uint64_t> op_samples;  // per kind of operation
};
// EINVAL naming the line that does not parse.
Result<std::vector<ParsedJob>> ParseYaml(std::string_view text);

// A job's totals over every target.
struct JobTotal {
  std::string job_id;
  uint64_t read_bytes = 0, write_bytes = 0, ops = 0;
  std::map<std::string, uint64_t> op_samples;
};
enum class RankBy { kBytes, kOps };
// Totals per job, highest first (ties by job id), at most `top` of them.
std::vector<JobTotal> RankJobs(const std::vector<ParsedJob>& jobs, RankBy by, size_t top);
std::string RenderJobTable(const std::vector<JobTotal>& jobs);
std::string RenderJobJson(const std::vector<JobTotal>& jobs);

}  // namespace sfs::jobstats
