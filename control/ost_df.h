// The df report (`stripefs df`, Lustre's `lfs df`): per OST its space,
// inodes, placement weight and state, and the filesystem's total.
//
// OSTs are directories, and several of them often sit on one disk. The
// total (and statfs of the mount, which uses the same sum) counts each
// backing filesystem once, told apart by the st_dev of the OST directories;
// an OST whose device is not known counts on its own.
//
// The daemon publishes the report as the read-only setting `ost_df`, one
// line per OST and a total line, figures in bytes ("-" for an OST with no
// space sample yet), the path last because it may hold blanks:
//   ost0 size=B used=B avail=B inodes=N ifree=N weight=W state=ok device=254:0 max_object=B path=/x
//   total size=B used=B avail=B inodes=N ifree=N filesystems=1 osts=4
// `stripefs df` parses it and prints a table or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ost/backend.h"

namespace sfs::control {

// Space summed over distinct backing filesystems, in bytes and inodes.
struct SpaceTotal {
  uint64_t size = 0;
  uint64_t free = 0;   // root's view
  uint64_t avail = 0;  // unprivileged view
  uint64_t inodes = 0;
  uint64_t ifree = 0;
  uint32_t filesystems = 0;
};

// Samples of OSTs that have none yet (nullopt) add nothing.
SpaceTotal SumOncePerFilesystem(const std::vector<std::optional<ost::SpaceInfo>>& samples);

struct OstDf {
  uint32_t index = 0;
  std::optional<ost::SpaceInfo> space;
  double weight = 0;   // RTDS weight as placement uses it (admin x automatic)
  std::string state;   // ok, unresponsive, read-only, inactive
  std::string path;
};

// The `ost_df` text.
std::string FormatOstDf(const std::vector<OstDf>& osts);

// One line of the `ost_df` text, read back.
struct DfRow {
  std::string name;  // "ost3" or "total"
  uint32_t index = 0;  // OST rows: 3 for "ost3"
  bool has_space = false;
  uint64_t size = 0, used = 0, avail = 0, inodes = 0, ifree = 0;
  double weight = 0;            // OST rows
  std::string state, device, path;  // OST rows
  uint64_t max_object = 0;          // OST rows: the largest object; 0 = not known
  uint32_t filesystems = 0, osts = 0;  // the total row
};

// EINVAL naming the line that does not parse.
Result<std::vector<DfRow>> ParseOstDf(std::string_view text);

enum class DfUnits { kKibiBlocks, kHuman, kInodes };
// A table like `lfs df` (1K blocks), `lfs df -h` or `lfs df -i`.
std::string RenderDfTable(const std::vector<DfRow>& rows, DfUnits units);
std::string RenderDfJson(const std::vector<DfRow>& rows);

}  // namespace sfs::control
