// The policy data the OSTs' schedulers hand to the epoch handler, and its
// reduction (seed 002's eh_combine). Byte order is defined (little endian
// everywhere), so a transport between machines would carry it as is and
// needs no eh_swab.
//
// Layout, at most kMaxEpochData (4096) bytes:
//   u32 participants         how many schedulers' data went into it
//   then up to kMaxEpochSections sections, sorted by (kind, head):
//     u8 kind, u8 head, u16 length, `length` bytes of the kind's payload
// A section holds one policy's data for one NRS head; sections of the same
// (kind, head) combine with the kind's own combine (tbf_shares.h for
// kTbfShares), others pass through. When more sections than
// kMaxEpochSections meet, the ones with the smallest (kind, head) are kept:
// a rule on keys, never on sizes, so the reduction stays associative and
// commutative. Bytes that do not parse count as an envelope with the
// sections before the damage (a peer's data is not trusted).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "nrs/epoch_handler.h"

namespace sfs::nrs {

enum class EpochKind : uint8_t {
  kNone = 0,       // a policy that does not coordinate
  kTbfShares = 1,   // TBF with nrs_tbf_scope=fs: per class demand and use
  kEpochGroups = 2,  // the epoch policy: per group waiting bytes and age
};

inline constexpr size_t kMaxEpochSections = 2;
inline constexpr size_t kEpochEnvelopeHeader = 4;
inline constexpr size_t kEpochSectionHeader = 4;
// The largest payload one section may have, so two always fit.
inline constexpr size_t kMaxEpochPayload =
    (kMaxEpochData - kEpochEnvelopeHeader) / kMaxEpochSections - kEpochSectionHeader;

struct EpochSection {
  EpochKind kind = EpochKind::kNone;
  uint8_t head = 0;
  std::vector<uint8_t> payload;  // at most kMaxEpochPayload bytes
};

struct EpochEnvelope {
  uint32_t participants = 0;
  std::vector<EpochSection> sections;  // sorted by (kind, head), keys unique
};

// REQUIRES: sections sorted and unique by (kind, head), payloads within
// kMaxEpochPayload, at most kMaxEpochSections of them.
EpochData EncodeEpochData(const EpochEnvelope& envelope);
EpochEnvelope DecodeEpochData(std::span<const uint8_t> data);
// The EpochCombine of every stripefs policy: participants add up (capped at
// 2^32-1), sections merge as described above.
EpochData CombineEpochData(const EpochData& a, const EpochData& b);
// The section of (kind, head), or null.
const EpochSection* FindSection(const EpochEnvelope& envelope, EpochKind kind, uint8_t head);

// Little-endian helpers for payloads. Get* REQUIRE enough bytes at `p`.
void PutLe16(std::vector<uint8_t>* out, uint16_t v);
void PutLe32(std::vector<uint8_t>* out, uint32_t v);
void PutLe64(std::vector<uint8_t>* out, uint64_t v);
uint16_t GetLe16(const uint8_t* p);
uint32_t GetLe32(const uint8_t* p);
uint64_t GetLe64(const uint8_t* p);
// a + b, at most 2^32-1.
uint32_t SaturatingAdd(uint32_t a, uint32_t b);

// The keyed-entry rule of every payload kind: sorts `entries` by .key,
// merges entries of equal keys with `merge(kept, other)` and keeps the
// `limit` smallest keys (a cut by key, never by value, so a combine built
// on it stays associative and commutative).
template <class Entry, class Merge>
std::vector<Entry> MergeByKey(std::vector<Entry> entries, size_t limit, Merge merge) {
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.key < b.key; });
  std::vector<Entry> merged;
  for (const Entry& e : entries) {
    if (!merged.empty() && merged.back().key == e.key) {
      merge(merged.back(), e);
      continue;
    }
    if (merged.size() == limit) break;
    merged.push_back(e);
  }
  return merged;
}

// The combine of a payload with a window (epoch_groups.h, tbf_shares.h):
// `reporters` add up, and only the entries of the latest (epoch, window)
// count, the others' being stale (an OST rejoining, or whose policy just
// started) and two windows cutting by two orders. Returns the payload to
// encode (which merges and cuts the entries).
template <class Payload>
Payload CombineLatestWindow(Payload x, Payload y) {
  const uint32_t reporters = SaturatingAdd(x.reporters, y.reporters);
  const auto tag_x = std::make_pair(static_cast<uint64_t>(x.epoch), x.window);
  const auto tag_y = std::make_pair(static_cast<uint64_t>(y.epoch), y.window);
  if (tag_x < tag_y) std::swap(x, y);
  if (tag_x == tag_y) x.entries.insert(x.entries.end(), y.entries.begin(), y.entries.end());
  x.reporters = reporters;
  return x;
}

// 64-bit FNV-1a, fed bytes in a defined order: the keys every OST (and a
// later peer machine) computes alike for a class or a group.
class Fnv1a64 {
 public:
  void Mix(uint8_t byte) {
    value_ ^= byte;
    value_ *= 0x100000001b3ull;
  }
  void Mix(std::string_view bytes) {
    for (char c : bytes) Mix(static_cast<uint8_t>(c));
  }
  void MixLe32(uint32_t v) {
    for (int i = 0; i < 4; i++) Mix(static_cast<uint8_t>(v >> (8 * i)));
  }
  uint64_t value() const { return value_; }

 private:
  uint64_t value_ = 0xcbf29ce484222325ull;
};

}  // namespace sfs::nrs
