// The stored placement configuration (layout/placement_config.h
// DecodePlacementConfig): whatever it accepts is a valid configuration, and
// encodes to text that decodes to an equal one. The first byte is the
// filesystem's OST count (1..256).
#include <string>

#include "fuzz/fuzz_check.h"
#include "layout/placement_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  if (size == 0) return 0;
  const uint32_t ost_count = data[0] + 1u;
  const std::string_view text = fuzz::Text(data + 1, size - 1);
  auto config = layout::DecodePlacementConfig(text, ost_count);
  if (!config.ok()) {
    fuzz::Check(config.err() == EIO, "a bad stored configuration that is not EIO", text);
    return 0;
  }
  fuzz::Check(config->ost_count() == ost_count, "the OST count changed", text);
  fuzz::Check(layout::ValidatePlacementConfig(*config).ok(), "Decode gave an invalid config", text);
  const std::string encoded = layout::EncodePlacementConfig(*config);
  auto again = layout::DecodePlacementConfig(encoded, ost_count);
  if (!again.ok())
    fuzz::Fail("Decode refused what Encode wrote", encoded, again.status().message());
  fuzz::Check(*again == *config, "the configuration changed through its text", text, encoded);
  fuzz::Check(layout::EncodePlacementConfig(*again) == encoded, "Encode is not stable", encoded);
  return 0;
}
