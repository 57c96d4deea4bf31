// stripefs jobstats: the busiest jobs over every OST and the metadata
// service, from the job_stats setting (jobstats/report.h).
#pragma once

#include <string>
#include <vector>

namespace sfs::cli {

// jobstats MOUNTPOINT [--top N] [--sort bytes|ops] [--json]
int JobStats(const std::vector<std::string>& args);

}  // namespace sfs::cli
