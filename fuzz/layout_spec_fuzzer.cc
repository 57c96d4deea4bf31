// Asked-for layouts (layout/layout_spec.h) and sizes ("1M", layout.h
// ParseSize). FormatLayoutSpec's text must parse back to an equal spec; a
// spec with an OST list has a matching stripe count (or none, or -1).
#include <string>

#include "fuzz/fuzz_check.h"
#include "layout/layout.h"
#include "layout/layout_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  const std::string_view text = fuzz::Text(data, size);
  auto spec = layout::ParseLayoutSpec(text);
  if (spec.ok()) {
    const std::string canonical = layout::FormatLayoutSpec(*spec);
    auto again = layout::ParseLayoutSpec(canonical);
    if (!again.ok()) {
      fuzz::Fail("ParseLayoutSpec refused its own format", canonical, again.status().message());
    }
    fuzz::Check(*again == *spec, "the spec changed through its text", text, canonical);
    fuzz::Check(spec->osts.empty() || spec->stripe_count <= 0 ||
                    static_cast<size_t>(spec->stripe_count) == spec->osts.size(),
                "stripe_count disagrees with osts", text, canonical);
    fuzz::Check(spec->stripe_count >= -1 &&
                    spec->stripe_count <= static_cast<int64_t>(layout::kMaxStripeCount),
                "stripe_count out of range", text);
  } else {
    fuzz::Check(spec.err() == EINVAL, "a refusal other than EINVAL", text);
  }

  auto bytes = layout::ParseSize(text);
  if (bytes.ok()) {
    auto again = layout::ParseSize(std::to_string(*bytes));
    fuzz::Check(again.ok() && *again == *bytes, "a size does not parse back as a number", text);
  }
  return 0;
}
