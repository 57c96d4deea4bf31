// The job_stats YAML as `stripefs jobstats` reads it (jobstats/report.h
// ParseYaml): anything it refuses is EINVAL, and whatever it accepts ranks
// and renders without fault, every job id it read showing up in the JSON.
#include <string>

#include "common/text.h"
#include "fuzz/fuzz_check.h"
#include "jobstats/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  const std::string_view text = fuzz::Text(data, size);
  auto jobs = jobstats::ParseYaml(text);
  if (!jobs.ok()) {
    fuzz::Check(jobs.err() == EINVAL, "a malformed report that is not EINVAL", text);
    return 0;
  }
  const auto ranked = jobstats::RankJobs(*jobs, jobstats::RankBy::kOps, jobs->size() + 1);
  const std::string json = jobstats::RenderJobJson(ranked);
  for (const auto& job : *jobs) {
    fuzz::Check(json.find(JsonQuote(job.job_id)) != std::string::npos, "a job lost on the way",
                text, json);
  }
  fuzz::Check(!jobstats::RenderJobTable(ranked).empty(), "an empty table", text);
  return 0;
}
