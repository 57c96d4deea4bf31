// stripefs df: space, inodes, weight and state per OST and in total, like
// Lustre's `lfs df` (control/ost_df.h says how the total counts a shared disk).
#pragma once

#include <string>
#include <vector>

namespace sfs::cli {

// df [-h | -i] [--json] MOUNTPOINT. Returns the process exit code.
int Df(const std::vector<std::string>& args);

}  // namespace sfs::cli
