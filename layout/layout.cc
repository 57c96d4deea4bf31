#include "layout/layout.h"

#include <algorithm>
#include <cstring>

namespace sfs::layout {
namespace {

constexpr uint8_t kLayoutMagic = 'L';
constexpr uint8_t kLayoutVersion = 2;  // 2: flags and allocation per object
constexpr uint8_t kCreatedFlag = 1;

template <class T>
void Put(std::string* out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little-endian hosts only (x86_64, arm64)
  out->append(bytes, sizeof(T));
}

template <class T>
bool Get(std::string_view* in, T* value) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(value, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

}  // namespace

Status Validate(const LayoutRequest& request) {
  if (request.stripe_size == 0 || request.stripe_size % kStripeSizeUnit != 0) {
    return Status::Error(EINVAL, "stripe_size " + std::to_string(request.stripe_size) +
                                     " is not a positive multiple of 64 KiB");
  }
  if (request.stripe_size > (4ull << 30)) {
    return Status::Error(EINVAL, "stripe_size over 4 GiB");
  }
  if (request.stripe_count == 0 || request.stripe_count > kMaxStripeCount) {
    return Status::Error(EINVAL, "stripe_count " + std::to_string(request.stripe_count) +
                                     " is outside [1, " + std::to_string(kMaxStripeCount) + "]");
  }
  return Status::Ok();
}

std::string Encode(const Layout& layout) {
  std::string out;
  out.reserve(16 + layout.pool.size() + layout.objects.size() * 21);
  Put<uint8_t>(&out, kLayoutMagic);
  Put<uint8_t>(&out, kLayoutVersion);
  Put<uint64_t>(&out, layout.stripe_size);
  Put<uint32_t>(&out, layout.stripe_count());
  Put<uint16_t>(&out, static_cast<uint16_t>(layout.pool.size()));
  out.append(layout.pool);
  for (const StripeObject& object : layout.objects) {
    Put<uint32_t>(&out, object.ost);
    Put<uint64_t>(&out, object.object_id);
    Put<uint8_t>(&out, object.created ? kCreatedFlag : 0);
    Put<uint64_t>(&out, object.allocated);
  }
  return out;
}

Result<Layout> Decode(std::string_view blob) {
  auto corrupt = [] { return Status::Error(EIO, "corrupt layout record"); };
  uint8_t magic = 0, version = 0;
  uint32_t count = 0;
  uint16_t pool_len = 0;
  Layout layout;
  if (!Get(&blob, &magic) || !Get(&blob, &version) || magic != kLayoutMagic ||
      version != kLayoutVersion || !Get(&blob, &layout.stripe_size) ||
      !Get(&blob, &count) || !Get(&blob, &pool_len) || layout.stripe_size == 0 ||
      count == 0 || count > kMaxStripeCount || blob.size() < pool_len) {
    return corrupt();
  }
  // A stripe geometry mkfs or setstripe could not have written (arithmetic
  // on it could overflow or divide by zero) is corruption.
  if (!Validate(LayoutRequest{count, layout.stripe_size, ""}).ok()) return corrupt();
  layout.pool.assign(blob.substr(0, pool_len));
  blob.remove_prefix(pool_len);
  layout.objects.resize(count);
  for (StripeObject& object : layout.objects) {
    uint8_t flags = 0;
    if (!Get(&blob, &object.ost) || !Get(&blob, &object.object_id) || !Get(&blob, &flags) ||
        (flags & ~kCreatedFlag) != 0 || !Get(&blob, &object.allocated)) {
      return corrupt();
    }
    object.created = (flags & kCreatedFlag) != 0;
  }
  if (!blob.empty()) return corrupt();
  return layout;
}

std::string Describe(const Layout& layout) {
  std::string out = "stripe_count=" + std::to_string(layout.stripe_count()) +
                    " stripe_size=" + std::to_string(layout.stripe_size) +
                    " pool=" + layout.pool;
  char buf[64];
  for (uint32_t i = 0; i < layout.stripe_count(); ++i) {
    snprintf(buf, sizeof(buf), " stripe%u=ost%u:0x%llx", i, layout.objects[i].ost,
             static_cast<unsigned long long>(layout.objects[i].object_id));
    out += buf;
  }
  return out;
}

std::vector<StripeExtent> MapExtent(const Layout& layout, uint64_t offset, uint64_t length) {
  std::vector<StripeExtent> touched;
  if (length == 0) return touched;
  const uint64_t size = layout.stripe_size;
  const uint32_t count = layout.stripe_count();
  const uint64_t first_chunk = offset / size;
  const uint64_t chunks = (offset + length - 1) / size - first_chunk + 1;
  // Only the stripes the extent touches get a slot (this runs per request,
  // and a layout may have thousands of stripes); chunk c uses slot
  // (c - first_chunk) % slots.
  const size_t slots = static_cast<size_t>(std::min<uint64_t>(count, chunks));
  touched.resize(slots);
  const uint64_t end = offset + length;
  for (uint64_t pos = offset; pos < end;) {
    const uint64_t chunk = pos / size;
    const uint64_t within = pos % size;
    const uint64_t n = std::min(size - within, end - pos);
    StripeExtent& part = touched[(chunk - first_chunk) % slots];
    if (part.length == 0) {
      part.stripe = static_cast<uint32_t>(chunk % count);
      part.object_offset = (chunk / count) * size + within;
    }
    // Successive chunks of one stripe are adjacent in the object (RAID-0), so
    // only the buffer side can be discontiguous; merge when it is not.
    const uint64_t buffer_offset = pos - offset;
    if (!part.segments.empty() &&
        part.segments.back().buffer_offset + part.segments.back().length == buffer_offset) {
      part.segments.back().length += n;
    } else {
      part.segments.push_back(Segment{buffer_offset, n});
    }
    part.length += n;
    pos += n;
  }
  std::sort(touched.begin(), touched.end(),
            [](const StripeExtent& a, const StripeExtent& b) { return a.stripe < b.stripe; });
  return touched;
}

std::vector<StripeExtent> MapRange(const Layout& layout, uint64_t offset, uint64_t length) {
  std::vector<StripeExtent> touched;
  for (uint32_t stripe = 0; stripe < layout.stripe_count(); ++stripe) {
    // The file bytes of one stripe map monotonically and contiguously onto
    // its object, so the stripe's share of [offset, end) is the object range
    // between the object sizes the two ends imply.
    const uint64_t from = ObjectSizeFor(layout, stripe, offset);
    const uint64_t to = ObjectSizeFor(layout, stripe, offset + length);
    if (to > from) touched.push_back(StripeExtent{stripe, from, to - from, {}});
  }
  return touched;
}

uint64_t ObjectSizeFor(const Layout& layout, uint32_t stripe, uint64_t file_size) {
  const uint64_t size = layout.stripe_size;
  const uint64_t row = size * layout.stripe_count();
  const uint64_t rest = file_size % row;
  const uint64_t before = static_cast<uint64_t>(stripe) * size;
  const uint64_t tail = rest <= before ? 0 : std::min(size, rest - before);
  return (file_size / row) * size + tail;
}

uint64_t FileOffsetOf(const Layout& layout, uint32_t stripe, uint64_t object_offset) {
  const uint64_t size = layout.stripe_size;
  return (object_offset / size) * size * layout.stripe_count() +
         static_cast<uint64_t>(stripe) * size + object_offset % size;
}

uint64_t MaxFileSize(const Layout& layout, const std::vector<uint64_t>& object_limits) {
  constexpr uint64_t kMaxOff = static_cast<uint64_t>(INT64_MAX);
  // FileOffsetOf in 128 bits: a limit of 2^63 bytes per object on many
  // stripes lies far beyond 64.
  using Wide = unsigned __int128;
  Wide largest = kMaxOff;
  const uint64_t size = layout.stripe_size;
  for (uint32_t stripe = 0; stripe < layout.stripe_count(); ++stripe) {
    const uint64_t limit = object_limits[stripe];
    const Wide first_beyond = Wide(limit / size) * size * layout.stripe_count() +
                              Wide(stripe) * size + limit % size;
    largest = std::min(largest, first_beyond);
  }
  return static_cast<uint64_t>(largest);
}

Result<uint64_t> ParseSize(std::string_view text) {
  auto bad = [&] { return Status::Error(EINVAL, "bad size '" + std::string(text) + "'"); };
  if (text.empty()) return bad();
  uint64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value > (UINT64_MAX - 9) / 10) return bad();
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (i == 0) return bad();
  std::string_view suffix = text.substr(i);
  int shift = 0;
  if (!suffix.empty()) {
    switch (suffix[0]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: return bad();
    }
    suffix.remove_prefix(1);
    if (suffix == "i" || suffix == "iB" || suffix == "B") suffix = {};
    if (!suffix.empty()) return bad();
  }
  if (shift > 0 && value > (UINT64_MAX >> shift)) return bad();
  return value << shift;
}

}  // namespace sfs::layout
