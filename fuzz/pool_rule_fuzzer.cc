// Pool rules (layout/pool_rule.h): FormatPoolRule's canonical text must
// parse back to an equal rule, and format to the same text; an accepted
// rule holds no control byte.
#include <string>

#include "fuzz/fuzz_check.h"
#include "layout/pool_rule.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  const std::string_view text = fuzz::Text(data, size);
  auto rule = layout::ParsePoolRule(text);
  if (!rule.ok()) {
    fuzz::Check(rule.err() == EINVAL, "a refusal other than EINVAL", text);
    return 0;
  }
  const std::string canonical = layout::FormatPoolRule(*rule);
  fuzz::Check(FindControl(canonical) == std::string_view::npos, "a control byte was accepted", text,
              canonical);
  auto again = layout::ParsePoolRule(canonical);
  if (!again.ok())
    fuzz::Fail("ParsePoolRule refused its own format", canonical, again.status().message());
  fuzz::Check(*again == *rule, "the rule changed through its text", text, canonical);
  fuzz::Check(layout::FormatPoolRule(*again) == canonical, "FormatPoolRule is not stable",
              canonical, layout::FormatPoolRule(*again));
  return 0;
}
