#include "jobstats/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "common/text.h"

namespace sfs::jobstats {
namespace {

std::string SecsNsecs(std::chrono::nanoseconds since_epoch) {
  const int64_t ns = since_epoch.count();
  return fmt::format("{}.{:09d} secs.nsecs", ns / 1000000000, ns % 1000000000);
}

std::string Field(std::string_view name) { return fmt::format("{:<17}", std::string(name) + ":"); }

std::string BytesLine(std::string_view name, const Summary& s) {
  return fmt::format("    {}{{ samples: {}, unit: bytes, min: {}, max: {}, sum: {} }}\n",
                     Field(name), s.samples, s.min, s.max, s.sum);
}

std::string OpLine(JobOp op, const OpCounters& c) {
  std::string hist;
  for (size_t i = 0; i < kHistogramBuckets; i++) {
    if (c.histogram[i] == 0) continue;
    if (!hist.empty()) hist += ", ";
    const std::string bound =
        i + 1 == kHistogramBuckets ? "inf" : std::to_string(uint64_t{1} << i);
    hist += fmt::format("{}: {}", bound, c.histogram[i]);
  }
  const Summary& s = c.latency_us;
  return fmt::format("    {}{{ samples: {}, unit: usecs, min: {}, max: {}, sum: {}, hist: {{ {} }} }}\n",
                     Field(JobOpName(op)), s.samples, s.min, s.max, s.sum, hist);
}

std::string JobBlock(const JobCounters& job, TimePoint now,
                     std::chrono::system_clock::time_point wall_now) {
  const auto wall = [&](TimePoint t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        (wall_now - (now - t)).time_since_epoch());
  };
  // The id is written as a YAML double-quoted string: job ids come from
  // users' environments and may hold ':' or '#'.
  std::string out = fmt::format("  - {}{}\n", Field("job_id"), JsonQuote(job.job_id));
  out += fmt::format("    {}{}\n", Field("snapshot_time"), SecsNsecs(wall(now)));
  out += fmt::format("    {}{}\n", Field("start_time"), SecsNsecs(wall(job.start)));
  out += fmt::format("    {}{}\n", Field("elapsed_time"),
                     SecsNsecs(std::chrono::duration_cast<std::chrono::nanoseconds>(now - job.start)));
  out += BytesLine("read_bytes", job.read_bytes);
  out += BytesLine("write_bytes", job.write_bytes);
  for (size_t i = 0; i < kJobOps; i++) {
    if (job.ops[i]) out += OpLine(static_cast<JobOp>(i), *job.ops[i]);
  }
  return out;
}

bool ParseU64(std::string_view text, uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// The value of `key` in a flow mapping "{ samples: 3, unit: bytes, ... }".
bool FlowValue(std::string_view flow, std::string_view key, uint64_t* out) {
  const std::string needle = std::string(key) + ": ";
  size_t at = flow.find(needle);
  // A key at the start of the mapping or after ", " (not inside "hist").
  while (at != std::string_view::npos && at >= 2 && flow.substr(at - 2, 2) != "{ " &&
         flow.substr(at - 2, 2) != ", ") {
    at = flow.find(needle, at + 1);
  }
  if (at == std::string_view::npos) return false;
  std::string_view rest = flow.substr(at + needle.size());
  rest = rest.substr(0, rest.find_first_of(",}"));
  return ParseU64(Trim(rest), out);
}

// The YAML double-quoted string at the start of `text` (as JsonQuote wrote it).
bool Unquote(std::string_view text, std::string* out) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return false;
  out->clear();
  for (size_t i = 1; i + 1 < text.size(); i++) {
    char c = text[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (i + 2 >= text.size()) return false;  // a backslash just before the closing quote
    c = text[++i];
    if (c == '"' || c == '\\') {
      out->push_back(c);
    } else if (c == 'u' && i + 5 < text.size()) {
      uint64_t code = 0;
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 5, code, 16);
      if (ec != std::errc() || end != text.data() + i + 5 || code > 0x7f) return false;
      out->push_back(static_cast<char>(code));
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string FormatYaml(const std::vector<TargetJobs>& targets, TimePoint now,
                       std::chrono::system_clock::time_point wall_now, size_t max_bytes) {
  std::string out;
  const size_t share = targets.empty() ? max_bytes : max_bytes / targets.size();
  constexpr size_t kCommentRoom = 96;  // for the "left out" line
  for (const TargetJobs& target : targets) {
    std::string block = target.target + ":\n  job_stats:\n";
    size_t shown = 0;
    for (const JobCounters& job : target.jobs) {
      const std::string text = JobBlock(job, now, wall_now);
      if (block.size() + text.size() + kCommentRoom > share) break;
      block += text;
      shown++;
    }
    if (shown < target.jobs.size()) {
      block += fmt::format("  # {} more jobs not shown: a value holds at most {} bytes\n",
                           target.jobs.size() - shown, max_bytes);
    }
    out += block;
  }
  // With very many targets even their headers may not fit: cut at a line
  // and say so, so the value stays within what an attribute can hold.
  if (out.size() > max_bytes) {
    constexpr std::string_view kCut = "# cut: the value holds at most this much\n";
    const size_t room = max_bytes > kCut.size() ? max_bytes - kCut.size() : 0;
    const size_t line_end = out.rfind('\n', room == 0 ? 0 : room - 1);
    out.resize(line_end == std::string::npos ? 0 : line_end + 1);
    if (out.size() + kCut.size() <= max_bytes) out += kCut;
  }
  return out;
}

Result<std::vector<ParsedJob>> ParseYaml(std::string_view text) {
  std::vector<ParsedJob> jobs;
  std::string target;
  for (std::string_view line : SplitAny(text, "\n")) {
    auto bad = [&](std::string_view why) {
      return Status::Error(EINVAL, fmt::format("job_stats line '{}': {}", Printable(line), why));
    };
    const std::string_view trimmed = Trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    if (line.front() != ' ') {  // a target
      if (line.back() != ':') return bad("a target name ends with ':'");
      target = std::string(line.substr(0, line.size() - 1));
      continue;
    }
    if (trimmed == "job_stats:") continue;
    const size_t colon = trimmed.find(':');
    if (colon == std::string_view::npos) return bad("no ':'");
    std::string_view key = trimmed.substr(0, colon);
    const std::string_view value = Trim(trimmed.substr(colon + 1));
    if (key.substr(0, 2) == "- ") {
      key = Trim(key.substr(2));
      if (key != "job_id") return bad("a job starts with job_id");
      if (target.empty()) return bad("a job before any target");
      ParsedJob job;
      job.target = target;
      if (!Unquote(value, &job.job_id)) return bad("bad job id");
      jobs.push_back(std::move(job));
      continue;
    }
    if (jobs.empty()) return bad("a field before any job");
    ParsedJob& job = jobs.back();
    if (key == "snapshot_time" || key == "start_time" || key == "elapsed_time") continue;
    if (value.empty() || value.front() != '{') continue;  // a field of a newer daemon
    uint64_t samples = 0, sum = 0;
    if (!FlowValue(value, "samples", &samples) || !FlowValue(value, "sum", &sum)) {
      return bad("no samples or sum");
    }
    if (key == "read_bytes") {
      job.read_bytes = sum;
    } else if (key == "write_bytes") {
      job.write_bytes = sum;
    } else {
      job.op_samples[std::string(key)] = samples;
    }
  }
  return jobs;
}

std::vector<JobTotal> RankJobs(const std::vector<ParsedJob>& jobs, RankBy by, size_t top) {
  std::map<std::string, JobTotal> totals;
  for (const ParsedJob& job : jobs) {
    JobTotal& total = totals[job.job_id];
    total.job_id = job.job_id;
    total.read_bytes += job.read_bytes;
    total.write_bytes += job.write_bytes;
    for (const auto& [op, samples] : job.op_samples) {
      total.op_samples[op] += samples;
      total.ops += samples;
    }
  }
  std::vector<JobTotal> ranked;
  for (auto& [id, total] : totals) ranked.push_back(std::move(total));
  auto key = [by](const JobTotal& t) {
    return by == RankBy::kBytes ? t.read_bytes + t.write_bytes : t.ops;
  };
  std::sort(ranked.begin(), ranked.end(), [&](const JobTotal& a, const JobTotal& b) {
    return key(a) != key(b) ? key(a) > key(b) : a.job_id < b.job_id;
  });
  if (ranked.size() > top) ranked.resize(top);
  return ranked;
}

std::string RenderJobTable(const std::vector<JobTotal>& jobs) {
  std::string out = fmt::format("{:<32} {:>14} {:>14} {:>10}  {}\n", "JOBID", "READ_BYTES",
                                "WRITE_BYTES", "OPS", "BUSIEST OPS");
  for (const JobTotal& job : jobs) {
    std::vector<std::pair<uint64_t, std::string>> ops;
    for (const auto& [op, samples] : job.op_samples) ops.emplace_back(samples, op);
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::string busiest;
    for (size_t i = 0; i < ops.size() && i < 3; i++) {
      busiest += fmt::format("{}{}={}", i ? " " : "", ops[i].second, ops[i].first);
    }
    out += fmt::format("{:<32} {:>14} {:>14} {:>10}  {}\n", Printable(job.job_id),
                       job.read_bytes, job.write_bytes, job.ops, busiest);
  }
  return out;
}

std::string RenderJobJson(const std::vector<JobTotal>& jobs) {
  std::string out = "[";
  for (size_t i = 0; i < jobs.size(); i++) {
    const JobTotal& job = jobs[i];
    std::string ops;
    for (const auto& [op, samples] : job.op_samples) {
      ops += fmt::format("{}{}: {}", ops.empty() ? "" : ", ", JsonQuote(op), samples);
    }
    out += fmt::format(
        "{}\n  {{\"job_id\": {}, \"read_bytes\": {}, \"write_bytes\": {}, \"ops\": {}, "
        "\"op_samples\": {{{}}}}}",
        i ? "," : "", JsonQuote(job.job_id), job.read_bytes, job.write_bytes, job.ops, ops);
  }
  return out + (jobs.empty() ? "]\n" : "\n]\n");
}

}  // namespace sfs::jobstats
