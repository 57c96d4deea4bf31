// Automatic weights (control/auto_weights.h): rtds_auto's text must come back
// unchanged through FormatAutoWeights; and the factors computed from any
// samples are finite and in [0, kMaxAutoFactor], 0 for an unhealthy OST.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <string>
#include <vector>

#include "control/auto_weights.h"
#include "fuzz/fuzz_check.h"
#include "layout/rtds_placement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  FuzzedDataProvider input(data, size);
  const std::string text = input.ConsumeRandomLengthString(256);
  auto parsed = control::ParseAutoWeights(text);
  if (parsed.ok()) {
    fuzz::Check(parsed->interval_s >= 1 && parsed->interval_s <= 86400, "interval out of range",
                text);
    const std::string formatted = control::FormatAutoWeights(*parsed);
    auto again = control::ParseAutoWeights(formatted);
    // "off" keeps no interval: it has none to use.
    const bool same =
        again.ok() && again->mode == parsed->mode &&
        (parsed->mode == control::AutoWeights::Mode::kOff || again->interval_s == parsed->interval_s);
    fuzz::Check(same, "rtds_auto changed through its text", text, formatted);
  }

  const auto mode =
      input.PickValueInArray({control::AutoWeights::Mode::kOff, control::AutoWeights::Mode::kSpace,
                              control::AutoWeights::Mode::kSpaceLoad});
  std::vector<control::OstSample> samples(input.ConsumeIntegralInRange<size_t>(0, 64));
  for (control::OstSample& s : samples) {
    s.healthy = input.ConsumeBool();
    s.avail_bytes = input.ConsumeIntegral<uint64_t>();
    s.total_bytes = input.ConsumeIntegral<uint64_t>();
    s.total_files = input.ConsumeIntegral<uint64_t>();
    s.free_files = input.ConsumeIntegral<uint64_t>();
    s.busy = input.ConsumeIntegral<uint64_t>();
    s.bytes = input.ConsumeIntegral<uint64_t>();
  }
  const std::vector<double> factors = control::AutoFactors(mode, samples);
  fuzz::Check(factors.size() == samples.size(), "one factor per OST");
  for (size_t i = 0; i < factors.size(); ++i) {
    fuzz::Check(
        std::isfinite(factors[i]) && factors[i] >= 0 && factors[i] <= layout::kMaxAutoFactor,
        "a factor is not finite or out of range", std::to_string(factors[i]));
    if (mode != control::AutoWeights::Mode::kOff && !samples[i].healthy) {
      fuzz::Check(factors[i] == 0, "an unhealthy OST kept a factor");
    }
  }
  return 0;
}
