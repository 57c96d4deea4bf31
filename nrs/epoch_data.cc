#include "nrs/epoch_data.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "nrs/epoch_groups.h"
#include "nrs/tbf_shares.h"

namespace sfs::nrs {
namespace {

bool KeyBefore(const EpochSection& a, const EpochSection& b) {
  return std::tie(a.kind, a.head) < std::tie(b.kind, b.head);
}

std::vector<uint8_t> CombinePayloads(EpochKind kind, std::span<const uint8_t> a,
                                     std::span<const uint8_t> b) {
  switch (kind) {
    case EpochKind::kTbfShares: return CombineTbfShares(a, b);
    case EpochKind::kEpochGroups: return CombineEpochGroups(a, b);
    default: break;
  }
  // A kind this build does not know: keep one of the two, the same one
  // whatever the order.
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end())
             ? std::vector<uint8_t>(a.begin(), a.end())
             : std::vector<uint8_t>(b.begin(), b.end());
}

}  // namespace

void PutLe16(std::vector<uint8_t>* out, uint16_t v) {
  for (int i = 0; i < 2; i++) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutLe32(std::vector<uint8_t>* out, uint32_t v) {
  for (int i = 0; i < 4; i++) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutLe64(std::vector<uint8_t>* out, uint64_t v) {
  for (int i = 0; i < 8; i++) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
uint16_t GetLe16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t GetLe32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
uint64_t GetLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
uint32_t SaturatingAdd(uint32_t a, uint32_t b) {
  return a > std::numeric_limits<uint32_t>::max() - b ? std::numeric_limits<uint32_t>::max()
                                                      : a + b;
}

EpochData EncodeEpochData(const EpochEnvelope& envelope) {
  EpochData out;
  PutLe32(&out, envelope.participants);
  for (const EpochSection& section : envelope.sections) {
    out.push_back(static_cast<uint8_t>(section.kind));
    out.push_back(section.head);
    PutLe16(&out, static_cast<uint16_t>(section.payload.size()));
    out.insert(out.end(), section.payload.begin(), section.payload.end());
  }
  return out;
}

EpochEnvelope DecodeEpochData(std::span<const uint8_t> data) {
  EpochEnvelope envelope;
  if (data.size() < kEpochEnvelopeHeader) return envelope;
  envelope.participants = GetLe32(data.data());
  size_t at = kEpochEnvelopeHeader;
  while (at + kEpochSectionHeader <= data.size() &&
         envelope.sections.size() < kMaxEpochSections) {
    EpochSection section;
    section.kind = static_cast<EpochKind>(data[at]);
    section.head = data[at + 1];
    const size_t length = GetLe16(data.data() + at + 2);
    at += kEpochSectionHeader;
    if (length > kMaxEpochPayload || at + length > data.size()) break;
    if (!envelope.sections.empty() && !KeyBefore(envelope.sections.back(), section)) break;
    section.payload.assign(data.begin() + at, data.begin() + at + length);
    at += length;
    envelope.sections.push_back(std::move(section));
  }
  return envelope;
}

const EpochSection* FindSection(const EpochEnvelope& envelope, EpochKind kind, uint8_t head) {
  for (const EpochSection& section : envelope.sections) {
    if (section.kind == kind && section.head == head) return &section;
  }
  return nullptr;
}

EpochData CombineEpochData(const EpochData& a, const EpochData& b) {
  const EpochEnvelope x = DecodeEpochData(a);
  const EpochEnvelope y = DecodeEpochData(b);
  EpochEnvelope out;
  out.participants = SaturatingAdd(x.participants, y.participants);
  size_t i = 0, j = 0;
  while (out.sections.size() < kMaxEpochSections &&
         (i < x.sections.size() || j < y.sections.size())) {
    if (j == y.sections.size() || (i < x.sections.size() && KeyBefore(x.sections[i], y.sections[j]))) {
      out.sections.push_back(x.sections[i++]);
    } else if (i == x.sections.size() || KeyBefore(y.sections[j], x.sections[i])) {
      out.sections.push_back(y.sections[j++]);
    } else {
      EpochSection merged{x.sections[i].kind, x.sections[i].head, {}};
      merged.payload = CombinePayloads(merged.kind, x.sections[i].payload, y.sections[j].payload);
      if (merged.payload.size() > kMaxEpochPayload) merged.payload.resize(kMaxEpochPayload);
      out.sections.push_back(std::move(merged));
      i++;
      j++;
    }
  }
  return EncodeEpochData(out);
}

}  // namespace sfs::nrs
