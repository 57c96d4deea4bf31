// A file's layout (RAID-0 striping over objects on distinct OSTs) and the
// arithmetic that maps file bytes to object bytes. Pure functions, no I/O.
//
// Byte `off` of a file lives in stripe (off / stripe_size) % stripe_count, at
// object offset (off / (stripe_size * stripe_count)) * stripe_size
// + off % stripe_size.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sfs::layout {

inline constexpr uint64_t kStripeSizeUnit = 64 * 1024;  // stripe sizes are multiples
inline constexpr uint32_t kMaxStripeCount = 2000;

struct StripeObject {
  uint32_t ost = 0;
  uint64_t object_id = 0;
  // The object was created (a write or preallocation reached it), so it
  // must exist: missing, it was lost, which is an error, where a never
  // created object is a hole.
  bool created = false;
  // Bytes it occupies on its OST's disk, as last reported by the OST and
  // stored (st_blocks of the file is the sum, in 512-byte units).
  uint64_t allocated = 0;
  bool operator==(const StripeObject&) const = default;
};

struct Layout {
  uint64_t stripe_size = 1 << 20;
  std::vector<StripeObject> objects;  // stripe i -> objects[i]
  std::string pool;                   // empty until pools exist
  uint32_t stripe_count() const { return static_cast<uint32_t>(objects.size()); }
  bool operator==(const Layout&) const = default;
};

// What a new file asks for; the placement chooses which OSTs.
struct LayoutRequest {
  uint32_t stripe_count = 1;
  uint64_t stripe_size = 1 << 20;
  std::string pool;
};

// EINVAL unless stripe_size is a positive multiple of 64 KiB and the stripe
// count is in [1, kMaxStripeCount].
Status Validate(const LayoutRequest& request);

std::string Encode(const Layout& layout);
Result<Layout> Decode(std::string_view blob);  // EIO if corrupt

// For `getfattr -n user.stripefs.layout`:
// "stripe_count=2 stripe_size=1048576 pool= objects=0:0x1a,3:0x1b".
std::string Describe(const Layout& layout);

// A piece of a user buffer: [buffer_offset, +length).
struct Segment {
  uint64_t buffer_offset = 0;
  uint64_t length = 0;
};

// The part of a file extent that falls in one stripe. Its object bytes are
// contiguous ([object_offset, +length)); its buffer bytes are the segments,
// in order, which are non-contiguous when the extent wraps the stripe set.
struct StripeExtent {
  uint32_t stripe = 0;
  uint64_t object_offset = 0;
  uint64_t length = 0;
  std::vector<Segment> segments;
};

// One StripeExtent per stripe the extent [offset, offset+length) touches,
// ordered by stripe index. Empty for length 0.
std::vector<StripeExtent> MapExtent(const Layout& layout, uint64_t offset, uint64_t length);

// For requests that carry no buffer (punch, preallocate): the object range
// of each stripe [offset, offset+length) touches, with no segments, ordered
// by stripe. Computed per stripe, not per chunk, so an extent of exabytes
// costs no more than a small one.
std::vector<StripeExtent> MapRange(const Layout& layout, uint64_t offset, uint64_t length);

// The size object `stripe` has when the file is exactly `file_size` bytes.
uint64_t ObjectSizeFor(const Layout& layout, uint32_t stripe, uint64_t file_size);

// The file offset of byte `object_offset` of stripe `stripe`'s object.
// Monotonic in object_offset. REQUIRES: the result fits in 64 bits.
uint64_t FileOffsetOf(const Layout& layout, uint32_t stripe, uint64_t object_offset);
// The first byte of stripe `stripe`'s object whose file offset is at or
// after `file_offset` (SEEK_DATA/SEEK_HOLE look from there in each object):
// equal to ObjectSizeFor(layout, stripe, file_offset).

// The largest size a file of `layout` can have when the object of stripe i
// can be at most `object_limits[i]` bytes (its OST filesystem's limit;
// UINT64_MAX for none): the first file byte whose object byte would lie at
// or past its object's limit, over all stripes, and at most 2^63-1 (off_t).
// One stripe: its object's limit. N stripes of equal limit M: N whole rows
// per M / stripe_size rows, then M % stripe_size bytes of stripe 0.
// REQUIRES: object_limits.size() == layout.stripe_count().
uint64_t MaxFileSize(const Layout& layout, const std::vector<uint64_t>& object_limits);

// Parses "1M", "64K", "1048576", "2G" (binary units). EINVAL otherwise.
Result<uint64_t> ParseSize(std::string_view text);

}  // namespace sfs::layout
