#include "layout/layout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>


namespace sfs::layout {
namespace {

Layout MakeLayout(uint32_t count, uint64_t stripe_size) {
  Layout layout;
  layout.stripe_size = stripe_size;
  for (uint32_t i = 0; i < count; ++i) layout.objects.push_back({i, 100 + i});
  return layout;
}

// Reference mapping of one byte, straight from the definition.
std::pair<uint32_t, uint64_t> MapByte(const Layout& l, uint64_t off) {
  uint64_t chunk = off / l.stripe_size;
  return {static_cast<uint32_t>(chunk % l.stripe_count()),
          (chunk / l.stripe_count()) * l.stripe_size + off % l.stripe_size};
}

TEST(MapExtentTest, EveryByteLandsWhereTheDefinitionSays) {
  const Layout layout = MakeLayout(3, 64 * 1024);
  // Extents around stripe and row boundaries.
  const uint64_t s = layout.stripe_size;
  for (uint64_t offset : std::initializer_list<uint64_t>{0, 1, s - 1, s, s + 1, 3 * s - 1, 3 * s, 7 * s + 5}) {
    for (uint64_t length : std::initializer_list<uint64_t>{1, 2, s - 1, s, s + 1, 3 * s, 10 * s + 3}) {
      auto parts = MapExtent(layout, offset, length);
      uint64_t total = 0;
      std::set<uint64_t> seen_buffer;
      for (const auto& part : parts) {
        uint64_t object_pos = part.object_offset;
        uint64_t seg_total = 0;
        for (const auto& seg : part.segments) {
          for (uint64_t b = 0; b < seg.length; b += (seg.length > 64 ? 61 : 1)) {
            auto [stripe, obj] = MapByte(layout, offset + seg.buffer_offset + b);
            ASSERT_EQ(stripe, part.stripe);
            ASSERT_EQ(obj, object_pos + b);
          }
          object_pos += seg.length;
          seg_total += seg.length;
          ASSERT_TRUE(seen_buffer.insert(seg.buffer_offset).second);
        }
        ASSERT_EQ(seg_total, part.length);
        total += part.length;
      }
      ASSERT_EQ(total, length) << offset << "+" << length;
    }
  }
}

TEST(MapExtentTest, OnePartPerTouchedStripeInStripeOrder) {
  const Layout layout = MakeLayout(4, 1 << 20);
  auto parts = MapExtent(layout, (1 << 20) - 10, 20);  // crosses stripe 0 -> 1
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].stripe, 0u);
  EXPECT_EQ(parts[0].object_offset, (1u << 20) - 10);
  EXPECT_EQ(parts[0].length, 10u);
  EXPECT_EQ(parts[1].stripe, 1u);
  EXPECT_EQ(parts[1].object_offset, 0u);
  EXPECT_EQ(parts[1].length, 10u);

  // 8 MiB over 4 stripes: each stripe once, 2 MiB contiguous in the object
  // but gathered from two buffer segments.
  parts = MapExtent(layout, 0, 8 << 20);
  ASSERT_EQ(parts.size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(parts[i].stripe, i);
    EXPECT_EQ(parts[i].object_offset, 0u);
    EXPECT_EQ(parts[i].length, 2u << 20);
    ASSERT_EQ(parts[i].segments.size(), 2u);
    EXPECT_EQ(parts[i].segments[0].buffer_offset, uint64_t{i} << 20);
    EXPECT_EQ(parts[i].segments[1].buffer_offset, uint64_t{i + 4} << 20);
  }
  EXPECT_TRUE(MapExtent(layout, 5, 0).empty());
}

TEST(MapExtentTest, SingleStripeMergesIntoOneSegment) {
  const Layout layout = MakeLayout(1, 64 * 1024);
  auto parts = MapExtent(layout, 100, 1 << 20);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].object_offset, 100u);
  ASSERT_EQ(parts[0].segments.size(), 1u);
  EXPECT_EQ(parts[0].segments[0].length, 1u << 20);
}

TEST(MapRangeTest, SameObjectRangesAsMapExtent) {
  for (uint32_t count : {1u, 3u, 4u}) {
    const Layout layout = MakeLayout(count, 64 * 1024);
    const uint64_t s = layout.stripe_size;
    for (uint64_t offset : std::initializer_list<uint64_t>{0, 5, s - 1, s, 3 * s + 7}) {
      for (uint64_t length : std::initializer_list<uint64_t>{0, 1, s, 2 * s + 3, 13 * s + 1}) {
        auto expected = MapExtent(layout, offset, length);
        auto ranges = MapRange(layout, offset, length);
        ASSERT_EQ(ranges.size(), expected.size()) << offset << "+" << length;
        for (size_t i = 0; i < ranges.size(); ++i) {
          EXPECT_EQ(ranges[i].stripe, expected[i].stripe);
          EXPECT_EQ(ranges[i].object_offset, expected[i].object_offset);
          EXPECT_EQ(ranges[i].length, expected[i].length);
          EXPECT_TRUE(ranges[i].segments.empty());
        }
      }
    }
  }
}

TEST(MapRangeTest, HugeExtentCostsOneEntryPerStripe) {
  const Layout layout = MakeLayout(2, 1 << 20);
  const uint64_t huge = uint64_t{1} << 62;  // 4 EiB: per-chunk work would never end
  auto ranges = MapRange(layout, 0, huge);
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].length, huge / 2);
  EXPECT_EQ(ranges[1].object_offset, 0u);
  EXPECT_EQ(ranges[1].length, huge / 2);
}

TEST(MapExtentTest, WideLayoutOnlyTouchedStripes) {
  const Layout layout = MakeLayout(2000, 64 * 1024);
  // Starts in stripe 1999 and wraps to stripes 0 and 1.
  auto parts = MapExtent(layout, 1999 * 65536 + 10, 2 * 65536);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].stripe, 0u);
  EXPECT_EQ(parts[0].object_offset, 65536u);
  EXPECT_EQ(parts[1].stripe, 1u);
  EXPECT_EQ(parts[2].stripe, 1999u);
  EXPECT_EQ(parts[2].object_offset, 10u);
  EXPECT_EQ(parts[0].length + parts[1].length + parts[2].length, 2u * 65536);
}

TEST(ObjectSizeTest, MatchesByteCount) {
  const Layout layout = MakeLayout(3, 64 * 1024);
  const uint64_t s = layout.stripe_size;
  for (uint64_t file_size : std::initializer_list<uint64_t>{0, 1, s - 1, s, s + 1, 2 * s + 7, 3 * s, 3 * s + 1, 9 * s + s / 2}) {
    // Object size is one past the highest object byte of that stripe.
    std::map<uint32_t, uint64_t> expect;
    for (uint64_t b = file_size > 3 * s + 3 ? file_size - 3 * s - 3 : 0; b < file_size; ++b) {
      auto [stripe, obj] = MapByte(layout, b);
      expect[stripe] = std::max(expect[stripe], obj + 1);
    }
    for (uint32_t stripe = 0; stripe < 3; ++stripe) {
      EXPECT_EQ(ObjectSizeFor(layout, stripe, file_size), expect[stripe])
          << "size " << file_size << " stripe " << stripe;
    }
  }
}

TEST(LayoutCodecTest, RoundTripAndCorruption) {
  Layout layout = MakeLayout(5, 2 << 20);
  layout.pool = "fast";
  auto decoded = Decode(Encode(layout));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->stripe_size, layout.stripe_size);
  EXPECT_EQ(decoded->pool, "fast");
  ASSERT_EQ(decoded->stripe_count(), 5u);
  EXPECT_EQ(decoded->objects[4].ost, 4u);
  EXPECT_EQ(decoded->objects[4].object_id, 104u);
  std::string blob = Encode(layout);
  EXPECT_EQ(Decode(blob.substr(0, blob.size() - 1)).err(), EIO);
  EXPECT_EQ(Decode(blob + "x").err(), EIO);
  EXPECT_EQ(Decode("").err(), EIO);
  // A geometry no valid layout has: 2^63-byte stripes (its row size would
  // wrap to 0) and stripes not a multiple of 64 KiB.
  for (uint64_t bad_size : {uint64_t{1} << 63, uint64_t{1000}}) {
    Layout odd = MakeLayout(2, 1 << 20);
    odd.stripe_size = bad_size;
    EXPECT_EQ(Decode(Encode(odd)).err(), EIO) << bad_size;
  }
}

TEST(LayoutCodecTest, ObjectStateRoundTripsAndBadFlagsAreCorrupt) {
  Layout layout = MakeLayout(3, 1 << 20);
  layout.objects[1].created = true;
  layout.objects[1].allocated = 8192;
  auto decoded = Decode(Encode(layout));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, layout);
  std::string blob = Encode(layout);
  blob[blob.size() - 9] = 4;  // the last object's flags: a flag no version defines
  EXPECT_EQ(Decode(blob).err(), EIO);
}

TEST(FileOffsetTest, InvertsTheMappingAndObjectSizeIsTheFirstByteAtOrAfter) {
  const Layout layout = MakeLayout(3, 64 * 1024);
  for (uint64_t off = 0; off < 7 * layout.stripe_size; off += 4099) {
    auto [stripe, object_offset] = MapByte(layout, off);
    EXPECT_EQ(FileOffsetOf(layout, stripe, object_offset), off);
    // For every stripe, the object byte ObjectSizeFor names is the first one
    // at or after `off` (and the one before it lies before `off`).
    for (uint32_t s = 0; s < 3; ++s) {
      const uint64_t first = ObjectSizeFor(layout, s, off);
      EXPECT_GE(FileOffsetOf(layout, s, first), off);
      if (first > 0) EXPECT_LT(FileOffsetOf(layout, s, first - 1), off);
    }
  }
}

TEST(MaxFileSizeTest, OneStripeIsItsObjectsLimit) {
  const Layout layout = MakeLayout(1, 1 << 20);
  const uint64_t ext4 = ((1ull << 32) - 1) * 4096;  // 16 TiB - 4 KiB
  EXPECT_EQ(MaxFileSize(layout, {ext4}), ext4);
  EXPECT_EQ(MaxFileSize(layout, {UINT64_MAX}), static_cast<uint64_t>(INT64_MAX));
}

TEST(MaxFileSizeTest, StripesMultiplyWholeRowsThenStripeZerosRest) {
  const uint64_t s = 1 << 20;
  const Layout layout = MakeLayout(4, s);
  // 10.5 stripe sizes per object: 10 rows of 4 chunks, then half of the
  // next row's first chunk.
  const uint64_t limit = 10 * s + s / 2;
  EXPECT_EQ(MaxFileSize(layout, {limit, limit, limit, limit}), 40 * s + s / 2);
  // ext4's limit is not a multiple of 1 MiB: 4 x (whole rows) + the rest.
  const uint64_t ext4 = ((1ull << 32) - 1) * 4096;
  EXPECT_EQ(MaxFileSize(layout, {ext4, ext4, ext4, ext4}), 4 * (ext4 / s) * s + ext4 % s);
}

TEST(MaxFileSizeTest, EveryByteBelowFitsAndTheNextDoesNot) {
  // Against the definition: every byte below the limit maps inside its
  // object's limit, and the byte at it maps at or past its own.
  const Layout layout = MakeLayout(3, 64 * 1024);
  const std::vector<std::vector<uint64_t>> cases = {
      {200000, 200000, 200000}, {65536, 1000000, 1000000}, {1000000, 1, 1000000},
      {300000, 300000, 70000}, {0, 5, 5}};
  for (const auto& limits : cases) {
    const uint64_t max = MaxFileSize(layout, limits);
    for (uint64_t off = 0; off < max; off += 997) {
      auto [stripe, object_offset] = MapByte(layout, off);
      ASSERT_LT(object_offset, limits[stripe]) << off;
    }
    if (max > 0) {
      auto [last_stripe, last] = MapByte(layout, max - 1);
      EXPECT_LT(last, limits[last_stripe]);
    }
    auto [stripe, object_offset] = MapByte(layout, max);
    EXPECT_GE(object_offset, limits[stripe]) << max;
    // A file of exactly that size never needs an object past its limit.
    for (uint32_t i = 0; i < 3; ++i) EXPECT_LE(ObjectSizeFor(layout, i, max), limits[i]);
  }
}

TEST(MaxFileSizeTest, NeverPastOffTMax) {
  const Layout layout = MakeLayout(2000, 1 << 20);
  std::vector<uint64_t> limits(2000, static_cast<uint64_t>(INT64_MAX));
  EXPECT_EQ(MaxFileSize(layout, limits), static_cast<uint64_t>(INT64_MAX));
}

TEST(LayoutDescribeTest, ListsEveryStripe) {
  Layout layout = MakeLayout(2, 1 << 20);
  EXPECT_EQ(Describe(layout),
            "stripe_count=2 stripe_size=1048576 pool= stripe0=ost0:0x64 stripe1=ost1:0x65");
}

TEST(ValidateTest, StripeSizeAndCount) {
  EXPECT_TRUE(Validate({4, 1 << 20, ""}).ok());
  EXPECT_EQ(Validate({4, 1000, ""}).err(), EINVAL);
  EXPECT_EQ(Validate({4, 0, ""}).err(), EINVAL);
  EXPECT_EQ(Validate({0, 1 << 20, ""}).err(), EINVAL);
  EXPECT_EQ(Validate({kMaxStripeCount + 1, 1 << 20, ""}).err(), EINVAL);
}

TEST(ParseSizeTest, UnitsAndErrors) {
  EXPECT_EQ(*ParseSize("1M"), 1u << 20);
  EXPECT_EQ(*ParseSize("64k"), 65536u);
  EXPECT_EQ(*ParseSize("2GiB"), 2ull << 30);
  EXPECT_EQ(*ParseSize("4096"), 4096u);
  for (const char* bad : {"", "M", "1X", "1MM", "-1", "99999999999999999999", "17179869184T"}) {
    EXPECT_EQ(ParseSize(bad).err(), EINVAL) << bad;
  }
}

}  // namespace
}  // namespace sfs::layout
