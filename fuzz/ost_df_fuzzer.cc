// The `ost_df` report as `stripefs df` reads it (control/ost_df.h ParseOstDf):
// anything it refuses is EINVAL, and whatever it accepts renders as a table
// and as JSON without fault.
#include <string>

#include "control/ost_df.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  const std::string_view text = fuzz::Text(data, size);
  auto rows = control::ParseOstDf(text);
  if (!rows.ok()) {
    fuzz::Check(rows.err() == EINVAL, "a malformed report that is not EINVAL", text);
    return 0;
  }
  for (auto units : {control::DfUnits::kKibiBlocks, control::DfUnits::kHuman, control::DfUnits::kInodes}) {
    fuzz::Check(!control::RenderDfTable(*rows, units).empty(), "an empty table", text);
  }
  fuzz::Check(!control::RenderDfJson(*rows).empty(), "empty JSON", text);
  return 0;
}
