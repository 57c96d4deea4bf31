#include "tools/stripefs/df.h"

#include <cstdio>

#include "control/ost_df.h"
#include "tools/stripefs/cli_util.h"

namespace sfs::cli {

int Df(const std::vector<std::string>& args) {
  constexpr const char* kUsage = "usage: stripefs df [-h | -i] [--json] MOUNTPOINT";
  control::DfUnits units = control::DfUnits::kKibiBlocks;
  bool json = false;
  std::string mountpoint;
  for (const std::string& arg : args) {
    if (arg == "-h" || arg == "--human-readable") {
      units = control::DfUnits::kHuman;
    } else if (arg == "-i" || arg == "--inodes") {
      units = control::DfUnits::kInodes;
    } else if (arg == "--json") {
      json = true;
    } else if (int failed = TakeMountpoint("df", arg, kUsage, &mountpoint)) {
      return failed;
    }
  }
  std::string text;
  if (int failed = ReadSetting("df", mountpoint, "ost_df", kUsage, &text)) return failed;
  auto rows = control::ParseOstDf(text);
  if (!rows.ok()) return Fail("df: " + rows.status().message());
  const std::string out = json ? control::RenderDfJson(*rows) : control::RenderDfTable(*rows, units);
  fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace sfs::cli
