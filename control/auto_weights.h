// Automatic RTDS weights (issue 4): the rtds_auto setting's syntax and the
// formula that turns what the OSTs report into automatic factors. Pure
// functions, apart from control/placement_control so that they link alone
// (unit tests, fuzz/auto_weights_fuzzer.cc).
//   rtds_auto   "off" | "space [interval=S]" | "space+load [interval=S]"
//               S = 1..86400 seconds, default 30
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sfs::control {

struct AutoWeights {
  enum class Mode { kOff, kSpace, kSpaceLoad };
  Mode mode = Mode::kOff;
  uint32_t interval_s = 30;
  bool operator==(const AutoWeights&) const = default;
};
Result<AutoWeights> ParseAutoWeights(std::string_view text);
std::string FormatAutoWeights(const AutoWeights& autow);

// What the automatic weights look at, per OST, at one moment.
struct OstSample {
  bool healthy = true;       // directory there and no EIO since the last sample
  uint64_t avail_bytes = 0;  // free space for unprivileged writers
  uint64_t total_bytes = 0;  // the size of the OST's filesystem
  uint64_t total_files = 0;  // its inodes; 0 = no fixed number (btrfs)
  uint64_t free_files = 0;   // its free inodes
  uint64_t busy = 0;         // requests queued or in service
  uint64_t bytes = 0;        // moved since the last sample
};
// What an OST can still take, in bytes: its size times the scarcer of its
// free-space and free-inode fractions, i.e. avail, or less when its inodes
// are running out faster than its space (many small objects). Without
// inode figures (total_files or total_bytes 0): avail.
double EffectiveAvail(const OstSample& sample);
// The automatic factors for a set of samples (pure; unit-tested):
//  space: EffectiveAvail / the largest among healthy OSTs;
//  +load: times 1 / (1 + busy / (mean busy + 1) + bytes / (mean bytes + 1))
//         relative to the other OSTs, so equal OSTs keep equal factors;
//  an unhealthy OST: 0.
std::vector<double> AutoFactors(AutoWeights::Mode mode, const std::vector<OstSample>& samples);

}  // namespace sfs::control
