#include "fs/nrs_settings.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "common/text.h"

namespace sfs::fs {
namespace {

bool TakeQualifier(std::string_view word, HeadChoice* choice) {
  if (word == "reg") {
    *choice = HeadChoice{true, false};
    return true;
  }
  if (word == "hp") {
    *choice = HeadChoice{false, true};
    return true;
  }
  return false;
}

}  // namespace

Result<PolicySetting> ParsePolicySetting(std::string_view value) {
  PolicySetting setting;
  bool qualified = false;
  for (std::string_view word : Words(value)) {
    if (!setting.spec.empty() && TakeQualifier(word, &setting.heads)) {
      if (qualified) return Status::Error(EINVAL, "give 'reg' or 'hp' at most once");
      qualified = true;
      continue;
    }
    if (!setting.spec.empty()) setting.spec += ' ';
    setting.spec += word;
  }
  if (setting.spec.empty()) return Status::Error(EINVAL, "nrs_policies needs a policy name");
  return setting;
}

RuleSetting ParseRuleSetting(std::string_view value) {
  RuleSetting setting;
  setting.command = Trim(value);
  const auto [first, rest] = SplitWord(value);
  if (TakeQualifier(first, &setting.heads)) setting.command = rest;
  return setting;
}

Result<uint64_t> ParseCount(std::string_view name, std::string_view text, uint64_t min,
                            uint64_t max) {
  text = Trim(text);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    return Status::Error(EINVAL, fmt::format("{} must be a whole number from {} to {}, not '{}'",
                                             name, min, max, text));
  }
  return value;
}

Result<std::chrono::nanoseconds> ParseDuration(std::string_view name, std::string_view text) {
  text = Trim(text);
  double scale = 1e9;
  std::string_view number = text;
  // "ns" before "s", which it ends with.
  for (auto [suffix, factor] : {std::pair{"ms", 1e6}, {"us", 1e3}, {"ns", 1.0}, {"s", 1e9}}) {
    const std::string_view sfx(suffix);
    if (number.size() > sfx.size() && number.substr(number.size() - sfx.size()) == sfx) {
      number.remove_suffix(sfx.size());
      scale = factor;
      break;
    }
  }
  double value = -1;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value) || value < 0 || value * scale > 3600e9) {
    return Status::Error(EINVAL, fmt::format("{} must be a duration such as 2, 0.5, 250ms, "
                                             "100us or 500ns (plain numbers are seconds, at "
                                             "most one hour), not '{}'",
                                             name, text));
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(value * scale)));
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  const int64_t ns = d.count();
  if (ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns % 1000 == 0) return std::to_string(ns / 1000) + "us";
  return std::to_string(ns) + "ns";
}

Result<nrs::OrrSupported> ParseOrrSupported(std::string_view text) {
  text = Trim(text);
  for (auto s : {nrs::OrrSupported::kReads, nrs::OrrSupported::kWrites,
                 nrs::OrrSupported::kReadsAndWrites}) {
    if (text == nrs::OrrSupportedName(s)) return s;
  }
  return Status::Error(EINVAL,
                       "nrs_orr_supported must be reads, writes or reads_and_writes, "
                       "not '" +
                           std::string(text) + "'");
}

}  // namespace sfs::fs
