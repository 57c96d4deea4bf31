// Names of the records mkfs writes into the metadata store's settings space
// (S/ keys) and of the run-time settings.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace sfs::fs {

inline constexpr const char* kFormatVersionKey = "format_version";
inline constexpr const char* kFsUuidKey = "fs_uuid";
inline constexpr const char* kOstCountKey = "ost_count";
inline constexpr const char* kStripeCountKey = "stripe_count";
inline constexpr const char* kStripeSizeKey = "stripe_size";
inline constexpr const char* kJobidVarKey = "jobid_var";
inline constexpr const char* kJobidNameKey = "jobid_name";
// Read-only, never stored: the state of every OST (fs/ost_status.h).
inline constexpr const char* kOstStatusName = "ost_status";
// Read-only, never stored: space, weight and state per OST (control/ost_df.h).
inline constexpr const char* kOstDfName = "ost_df";
// Per job id counters (jobstats/report.h); written "clear" to reset, never stored.
inline constexpr const char* kJobStatsName = "job_stats";
// Write-only, root only: the directory of a new OST (Filesystem::AddOst).
// kOstCountKey is readable as a setting of the same name.
inline constexpr const char* kOstAddName = "ost_add";
// Read-only: where -o metrics= serves (the port bound, also when 0 was asked).
inline constexpr const char* kMetricsAddressName = "metrics_address";
// Seconds a job may stay idle before its counters are dropped; 0 = never.
inline constexpr const char* kJobCleanupKey = "job_cleanup_interval";
inline constexpr int64_t kDefaultJobCleanupSeconds = 600;
inline constexpr int64_t kMaxJobCleanupSeconds = 30LL * 24 * 3600;


inline std::string OstPathKey(uint32_t index) { return "ost." + std::to_string(index) + ".path"; }
inline std::string OstUuidKey(uint32_t index) { return "ost." + std::to_string(index) + ".uuid"; }

}  // namespace sfs::fs
