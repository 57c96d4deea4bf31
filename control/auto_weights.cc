#include "control/auto_weights.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "common/text.h"
#include "layout/rtds_placement.h"

namespace sfs::control {

Result<AutoWeights> ParseAutoWeights(std::string_view text) {
  text = Trim(text);
  AutoWeights out;
  const size_t blank = std::min(text.find_first_of(kBlanks), text.size());
  const std::string_view mode = text.substr(0, blank);
  std::string_view rest = Trim(text.substr(blank));
  if (mode == "off") {
    out.mode = AutoWeights::Mode::kOff;
  } else if (mode == "space") {
    out.mode = AutoWeights::Mode::kSpace;
  } else if (mode == "space+load") {
    out.mode = AutoWeights::Mode::kSpaceLoad;
  } else {
    return Status::Error(EINVAL,
                         "rtds_auto must be off, space or space+load [interval=SECONDS], "
                         "not '" +
                             std::string(text) + "'");
  }
  if (!rest.empty()) {
    constexpr std::string_view kInterval = "interval=";
    const std::string_view digits =
        rest.substr(0, kInterval.size()) == kInterval ? rest.substr(kInterval.size()) : "";
    uint32_t seconds = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seconds);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
        seconds < 1 || seconds > 86400) {
      return Status::Error(EINVAL, "rtds_auto interval must be interval=1..86400 (seconds), not '" +
                                       std::string(rest) + "'");
    }
    out.interval_s = seconds;
  }
  return out;
}

std::string FormatAutoWeights(const AutoWeights& autow) {
  switch (autow.mode) {
    case AutoWeights::Mode::kOff:
      return "off";
    case AutoWeights::Mode::kSpace:
      return fmt::format("space interval={}", autow.interval_s);
    case AutoWeights::Mode::kSpaceLoad:
      return fmt::format("space+load interval={}", autow.interval_s);
  }
  return "off";
}

double EffectiveAvail(const OstSample& s) {
  const double avail = static_cast<double>(s.avail_bytes);
  if (s.total_files == 0 || s.total_bytes == 0) return avail;
  const double free_inodes =
      static_cast<double>(std::min(s.free_files, s.total_files)) / s.total_files;
  return std::min(avail, static_cast<double>(s.total_bytes) * free_inodes);
}

std::vector<double> AutoFactors(AutoWeights::Mode mode, const std::vector<OstSample>& samples) {
  std::vector<double> factors(samples.size(), 1.0);
  if (mode == AutoWeights::Mode::kOff) return factors;
  double max_avail = 0;
  double busy_sum = 0, bytes_sum = 0;
  size_t healthy = 0;
  for (const OstSample& s : samples) {
    if (!s.healthy) continue;
    healthy++;
    max_avail = std::max(max_avail, EffectiveAvail(s));
    busy_sum += static_cast<double>(s.busy);
    bytes_sum += static_cast<double>(s.bytes);
  }
  const double mean_busy = healthy > 0 ? busy_sum / healthy : 0;
  const double mean_bytes = healthy > 0 ? bytes_sum / healthy : 0;
  std::vector<double> load(samples.size(), 1.0);
  double best_load = 0;
  for (size_t i = 0; i < samples.size(); i++) {
    if (!samples[i].healthy) continue;
    load[i] =
        1.0 / (1.0 + samples[i].busy / (mean_busy + 1.0) + samples[i].bytes / (mean_bytes + 1.0));
    best_load = std::max(best_load, load[i]);
  }
  for (size_t i = 0; i < samples.size(); i++) {
    if (!samples[i].healthy) {
      factors[i] = 0;
      continue;
    }
    double f = max_avail > 0 ? EffectiveAvail(samples[i]) / max_avail : 0.0;
    if (mode == AutoWeights::Mode::kSpaceLoad && best_load > 0) f *= load[i] / best_load;
    factors[i] = std::clamp(f, 0.0, layout::kMaxAutoFactor);
  }
  return factors;
}
}  // namespace sfs::control
