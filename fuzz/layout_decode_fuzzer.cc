// The stored layout record (layout/layout.h Decode). A record Decode
// accepts must encode back to the very same bytes; and on the decoded
// layout, the per-chunk mapping of an extent (MapExtent, used by reads and
// writes) must agree with the per-stripe arithmetic (MapRange, used by
// punch and preallocate).
#include <fuzzer/FuzzedDataProvider.h>

#include <string>

#include "fuzz/fuzz_check.h"
#include "layout/layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  FuzzedDataProvider input(data, size);
  // Integers come from the end of the input, the record is what is left.
  const uint64_t offset = input.ConsumeIntegralInRange<uint64_t>(0, uint64_t{1} << 62);
  const uint64_t length = input.ConsumeIntegralInRange<uint64_t>(0, 8 << 20);
  const std::string blob = input.ConsumeRemainingBytesAsString();

  auto layout = layout::Decode(blob);
  if (!layout.ok()) {
    fuzz::Check(layout.err() == EIO, "a corrupt record that is not EIO", blob);
    return 0;
  }
  const std::string encoded = layout::Encode(*layout);
  fuzz::Check(encoded == blob, "Encode(Decode(record)) differs", blob, encoded);
  fuzz::Check(layout::Validate({layout->stripe_count(), layout->stripe_size, ""}).ok(),
              "Decode accepted an invalid geometry", blob);

  const auto extents = layout::MapExtent(*layout, offset, length);
  const auto ranges = layout::MapRange(*layout, offset, length);
  fuzz::Check(extents.size() == ranges.size(), "MapExtent and MapRange touch different stripes",
              layout::Describe(*layout));
  uint64_t total = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    const layout::StripeExtent& e = extents[i];
    const layout::StripeExtent& r = ranges[i];
    fuzz::Check(e.stripe == r.stripe && e.object_offset == r.object_offset && e.length == r.length,
                "MapExtent and MapRange disagree", layout::Describe(*layout));
    uint64_t in_segments = 0;
    for (const layout::Segment& s : e.segments) in_segments += s.length;
    fuzz::Check(in_segments == e.length, "segments do not add up to the extent");
    fuzz::Check(
        e.object_offset + e.length <= layout::ObjectSizeFor(*layout, e.stripe, offset + length),
        "an extent ends past its object's size");
    total += e.length;
  }
  fuzz::Check(total == length, "the extents do not add up to the length");
  return 0;
}
