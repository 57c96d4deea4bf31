// The placement settings' text forms (layout/placement_config.h): weight
// lists (rtds_weight), relative weights (rtds_relative) and OST sets
// (pool.<name>). The first byte chooses the parser. What a parser accepts
// must come back unchanged through its formatter once applied to a
// configuration big enough for every OST it names.
#include <algorithm>
#include <iterator>
#include <string>

#include "fuzz/fuzz_check.h"
#include "layout/placement_config.h"

namespace sfs::fuzz {
namespace {

using layout::PlacementConfig;

void Weights(std::string_view text) {
  auto list = layout::ParseWeightList(text);
  if (!list.ok()) return;
  uint32_t count = 1;
  for (const auto& [ost, weight] : *list) count = std::max(count, ost + 1);
  PlacementConfig config = layout::DefaultPlacementConfig(count);
  Check(layout::ApplyWeights(&config, *list).ok(), "ApplyWeights refused a parsed list", text);
  const std::string formatted = layout::FormatWeightList(config.weights);
  auto back = layout::ParseWeightList(formatted);
  if (!back.ok())
    Fail("ParseWeightList refused its own format", formatted, back.status().message());
  PlacementConfig again = layout::DefaultPlacementConfig(count);
  Check(layout::ApplyWeights(&again, *back).ok(), "ApplyWeights refused a formatted list");
  Check(again.weights == config.weights, "weights changed through their text", text, formatted);
}

void Relative(std::string_view text) {
  auto entries = layout::ParseRelativeWeights(text);
  if (!entries.ok()) return;
  uint32_t count = 1;
  for (const auto& e : *entries) count = std::max({count, e.from + 1, e.to + 1});
  PlacementConfig config = layout::DefaultPlacementConfig(count);
  Check(layout::ApplyRelativeWeights(&config, *entries).ok(), "ApplyRelativeWeights refused", text);
  const std::string formatted = layout::FormatRelativeWeights(config);
  PlacementConfig again = layout::DefaultPlacementConfig(count);
  if (!formatted.empty()) {  // "" is all defaults, which the parser refuses as empty
    auto back = layout::ParseRelativeWeights(formatted);
    if (!back.ok()) Fail("ParseRelativeWeights refused its own format", formatted);
    Check(layout::ApplyRelativeWeights(&again, *back).ok(), "ApplyRelativeWeights refused");
  }
  Check(again.relative == config.relative, "relative weights changed through their text", text,
        formatted);
}

void OstSet(std::string_view text) {
  auto osts = layout::ParseOstSet(text);
  if (!osts.ok()) return;
  Check(std::is_sorted(osts->begin(), osts->end()) &&
            std::adjacent_find(osts->begin(), osts->end()) == osts->end(),
        "an OST set is not sorted and distinct", text);
  const std::string formatted = layout::FormatOstSet(*osts);
  auto back = layout::ParseOstSet(formatted);
  if (!back.ok()) Fail("ParseOstSet refused its own format", formatted);
  Check(*back == *osts, "an OST set changed through its text", text, formatted);
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs::fuzz;
  DispatchByFirstByte(data, size, {Weights, Relative, OstSet});
  return 0;
}
