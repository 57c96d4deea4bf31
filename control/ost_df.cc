#include "control/ost_df.h"

#include <fmt/format.h>
#include <sys/sysmacros.h>

#include <charconv>
#include <set>

#include "common/text.h"

namespace sfs::control {
namespace {

std::string DeviceName(uint64_t device) {
  if (device == 0) return "-";
  return fmt::format("{}:{}", major(device), minor(device));
}

uint64_t Bytes(uint64_t blocks, uint64_t block_size) { return blocks * block_size; }

bool ParseU64(std::string_view text, uint64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool ParseDouble(std::string_view text, double* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// df's Use%: used over what a user could have, rounded up.
unsigned UsePercent(uint64_t used, uint64_t avail) {
  // 128 bits: used * 100 overflows 64 above ~184 PB.
  const unsigned __int128 base = static_cast<unsigned __int128>(used) + avail;
  if (base == 0) return 0;
  return static_cast<unsigned>((static_cast<unsigned __int128>(used) * 100 + base - 1) / base);
}

// 1024-based with one decimal below 10, like df -h.
std::string Human(uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "K", "M", "G", "T", "P", "E"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    unit++;
  }
  if (unit == 0) return fmt::format("{}B", bytes);
  return value < 10 ? fmt::format("{:.1f}{}", value, kUnits[unit])
                    : fmt::format("{:.0f}{}", value, kUnits[unit]);
}

}  // namespace

SpaceTotal SumOncePerFilesystem(const std::vector<std::optional<ost::SpaceInfo>>& samples) {
  SpaceTotal total;
  std::set<uint64_t> counted;  // devices already in the total
  for (const auto& sample : samples) {
    if (!sample.has_value()) continue;
    if (sample->device != 0 && !counted.insert(sample->device).second) continue;
    const uint64_t block = sample->block_size;
    total.size += Bytes(sample->total_blocks, block);
    total.free += Bytes(sample->free_blocks, block);
    total.avail += Bytes(sample->avail_blocks, block);
    total.inodes += sample->total_files;
    total.ifree += sample->free_files;
    total.filesystems++;
  }
  return total;
}

std::string FormatOstDf(const std::vector<OstDf>& osts) {
  std::string out;
  std::vector<std::optional<ost::SpaceInfo>> samples;
  for (const OstDf& o : osts) {
    samples.push_back(o.space);
    std::string figures = "size=- used=- avail=- inodes=- ifree=-";
    if (o.space.has_value()) {
      const ost::SpaceInfo& s = *o.space;
      figures = fmt::format("size={} used={} avail={} inodes={} ifree={}",
                            Bytes(s.total_blocks, s.block_size),
                            Bytes(s.total_blocks - std::min(s.free_blocks, s.total_blocks),
                                  s.block_size),
                            Bytes(s.avail_blocks, s.block_size), s.total_files, s.free_files);
    }
    // The largest object its filesystem takes, which bounds the size of
    // files striped over it (Filesystem::FileSizeLimit).
    const bool limit_known = o.space.has_value() && o.space->max_object_size != ost::kNoObjectLimit;
    out += fmt::format("ost{} {} weight={:g} state={} device={} max_object={} path={}\n", o.index,
                       figures, o.weight, o.state, DeviceName(o.space ? o.space->device : 0),
                       limit_known ? std::to_string(o.space->max_object_size) : "-",
                       Printable(o.path));
  }
  const SpaceTotal total = SumOncePerFilesystem(samples);
  out += fmt::format("total size={} used={} avail={} inodes={} ifree={} filesystems={} osts={}\n",
                     total.size, total.size - std::min(total.free, total.size), total.avail,
                     total.inodes, total.ifree, total.filesystems, osts.size());
  return out;
}

Result<std::vector<DfRow>> ParseOstDf(std::string_view text) {
  std::vector<DfRow> rows;
  for (std::string_view line : SplitAny(text, "\n")) {
    auto bad = [&](std::string_view why) {
      return Status::Error(EINVAL, fmt::format("ost_df line '{}': {}", Printable(line), why));
    };
    DfRow row;
    auto [name, rest] = SplitWord(line);
    row.name = std::string(name);
    const bool is_total = name == "total";
    if (!is_total) {
      uint64_t index = 0;
      if (name.substr(0, 3) != "ost" || !ParseU64(name.substr(3), &index) || index > UINT32_MAX) {
        return bad("not an OST or the total");
      }
      row.index = static_cast<uint32_t>(index);
    }
    // The path is last and may hold blanks: everything after "path=".
    const size_t path_at = rest.find("path=");
    if (!is_total) {
      if (path_at == std::string_view::npos) return bad("no path");
      row.path = std::string(rest.substr(path_at + 5));
      rest = rest.substr(0, path_at);
    }
    int figures = 0;
    for (std::string_view word : Words(rest)) {
      const size_t eq = word.find('=');
      if (eq == std::string_view::npos) return bad("a field without '='");
      const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
      uint64_t* figure = key == "size"     ? &row.size
                         : key == "used"   ? &row.used
                         : key == "avail"  ? &row.avail
                         : key == "inodes" ? &row.inodes
                         : key == "ifree"  ? &row.ifree
                                           : nullptr;
      if (figure != nullptr) {
        if (value == "-") continue;
        if (!ParseU64(value, figure)) return bad(fmt::format("bad {}", key));
        figures++;
      } else if (key == "weight") {
        if (!ParseDouble(value, &row.weight)) return bad("bad weight");
      } else if (key == "state") {
        row.state = std::string(value);
      } else if (key == "device") {
        row.device = std::string(value);
      } else if (key == "max_object") {
        if (value != "-" && !ParseU64(value, &row.max_object)) return bad("bad max_object");
      } else if (key == "filesystems" || key == "osts") {
        uint64_t n = 0;
        if (!ParseU64(value, &n)) return bad(fmt::format("bad {}", key));
        (key == "osts" ? row.osts : row.filesystems) = static_cast<uint32_t>(n);
      }
      // Fields this version does not know are skipped: a newer daemon may add some.
    }
    row.has_space = figures == 5;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string RenderDfTable(const std::vector<DfRow>& rows, DfUnits units) {
  const bool inodes = units == DfUnits::kInodes;
  const bool human = units == DfUnits::kHuman;
  auto figure = [&](uint64_t bytes) {
    return human ? Human(bytes) : std::to_string(bytes / 1024);
  };
  std::string out = fmt::format("{:<8} {:>14} {:>14} {:>14} {:>5} {:>8} {:<12} {:<8} {}\n", "OST",
                                inodes ? "Inodes" : (human ? "Size" : "1K-blocks"),
                                inodes ? "IUsed" : "Used", inodes ? "IFree" : "Available",
                                inodes ? "IUse%" : "Use%", "Weight", "State", "Device", "Path");
  for (const DfRow& row : rows) {
    const bool total = row.name == "total";
    std::string cells;
    if (!row.has_space) {
      cells = fmt::format("{:>14} {:>14} {:>14} {:>5}", "-", "-", "-", "-");
    } else if (inodes) {
      const uint64_t used = row.inodes - std::min(row.ifree, row.inodes);
      cells = fmt::format("{:>14} {:>14} {:>14} {:>4}%", row.inodes, used, row.ifree,
                          UsePercent(used, row.ifree));
    } else {
      cells = fmt::format("{:>14} {:>14} {:>14} {:>4}%", figure(row.size), figure(row.used),
                          figure(row.avail), UsePercent(row.used, row.avail));
    }
    if (total) {
      out += fmt::format("{:<8} {} ({} backing filesystem{} for {} OST{})\n", "total", cells,
                         row.filesystems, row.filesystems == 1 ? "" : "s", row.osts,
                         row.osts == 1 ? "" : "s");
    } else {
      out += fmt::format("{:<8} {} {:>8g} {:<12} {:<8} {}\n", row.name, cells, row.weight,
                         row.state, row.device, row.path);
    }
  }
  return out;
}

std::string RenderDfJson(const std::vector<DfRow>& rows) {
  auto figures = [](const DfRow& row) {
    if (!row.has_space) {
      return std::string("\"size\": null, \"used\": null, \"avail\": null, "
                         "\"inodes\": null, \"ifree\": null");
    }
    return fmt::format("\"size\": {}, \"used\": {}, \"avail\": {}, \"inodes\": {}, \"ifree\": {}",
                       row.size, row.used, row.avail, row.inodes, row.ifree);
  };
  std::string osts, total = "null";
  for (const DfRow& row : rows) {
    if (row.name == "total") {
      total = fmt::format("{{{}, \"filesystems\": {}, \"osts\": {}}}", figures(row),
                          row.filesystems, row.osts);
      continue;
    }
    if (!osts.empty()) osts += ",\n";
    osts += fmt::format("    {{\"ost\": {}, {}, \"weight\": {:g}, \"state\": {}, \"device\": {}, "
                        "\"max_object\": {}, \"path\": {}}}",
                        row.index, figures(row),
                        row.weight, JsonQuote(row.state), JsonQuote(row.device),
                        row.max_object != 0 ? std::to_string(row.max_object) : "null",
                        JsonQuote(row.path));
  }
  return fmt::format("{{\n  \"osts\": [\n{}\n  ],\n  \"total\": {}\n}}\n", osts, total);
}

}  // namespace sfs::control
