#include "tools/stripefs/jobstats_cmd.h"

#include <charconv>
#include <cstdio>

#include "jobstats/report.h"
#include "tools/stripefs/cli_util.h"

namespace sfs::cli {

int JobStats(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "usage: stripefs jobstats MOUNTPOINT [--top N] [--sort bytes|ops] [--json]";
  size_t top = 10;
  jobstats::RankBy by = jobstats::RankBy::kBytes;
  bool json = false;
  std::string mountpoint;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& arg = args[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--top" || arg == "--sort") {
      if (i + 1 >= args.size()) return Fail("jobstats: " + arg + " wants a value\n" + kUsage);
      const std::string& value = args[++i];
      if (arg == "--sort") {
        if (value != "bytes" && value != "ops") {
          return Fail("jobstats: --sort takes bytes or ops, not '" + value + "'");
        }
        by = value == "ops" ? jobstats::RankBy::kOps : jobstats::RankBy::kBytes;
        continue;
      }
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), top);
      if (value.empty() || ec != std::errc() || end != value.data() + value.size() || top == 0) {
        return Fail("jobstats: --top takes a whole number from 1, not '" + value + "'");
      }
    } else if (int failed = TakeMountpoint("jobstats", arg, kUsage, &mountpoint)) {
      return failed;
    }
  }
  std::string text;
  if (int failed = ReadSetting("jobstats", mountpoint, "job_stats", kUsage, &text)) return failed;
  auto jobs = jobstats::ParseYaml(text);
  if (!jobs.ok()) return Fail("jobstats: " + jobs.status().message());
  const auto ranked = jobstats::RankJobs(*jobs, by, top);
  const std::string out =
      json ? jobstats::RenderJobJson(ranked) : jobstats::RenderJobTable(ranked);
  fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace sfs::cli
