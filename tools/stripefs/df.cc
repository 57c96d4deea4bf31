#include "tools/stripefs/df.h"

#include <cstdio>

#include "fs/ost_df.h"
#include "tools/stripefs/cli_util.h"

namespace sfs::cli {

int Df(const std::vector<std::string>& args) {
  constexpr const char* kUsage = "usage: stripefs df [-h | -i] [--json] MOUNTPOINT";
  fs::DfUnits units = fs::DfUnits::kKibiBlocks;
  bool json = false;
  std::string mountpoint;
  for (const std::string& arg : args) {
    if (arg == "-h" || arg == "--human-readable") {
      units = fs::DfUnits::kHuman;
    } else if (arg == "-i" || arg == "--inodes") {
      units = fs::DfUnits::kInodes;
    } else if (arg == "--json") {
      json = true;
    } else if (int failed = TakeMountpoint("df", arg, kUsage, &mountpoint)) {
      return failed;
    }
  }
  std::string text;
  if (int failed = ReadSetting("df", mountpoint, "ost_df", kUsage, &text)) return failed;
  auto rows = fs::ParseOstDf(text);
  if (!rows.ok()) return Fail("df: " + rows.status().message());
  const std::string out = json ? fs::RenderDfJson(*rows) : fs::RenderDfTable(*rows, units);
  fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace sfs::cli
