#include "rpc/bulk.h"

#include <string>

namespace sfs::rpc {

grpc::ByteBuffer EncodeBulk(const google::protobuf::MessageLite& header,
                            const std::vector<grpc::Slice>& payload) {
  std::string head;
  const std::string body = header.SerializeAsString();
  const uint32_t n = static_cast<uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) head.push_back(static_cast<char>(n >> (8 * i)));
  head += body;
  std::vector<grpc::Slice> slices;
  slices.reserve(payload.size() + 1);
  slices.emplace_back(head.data(), head.size());  // copied: small
  for (const grpc::Slice& slice : payload) {
    if (slice.size() > 0) slices.push_back(slice);
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

bool DecodeBulk(const grpc::ByteBuffer& message, google::protobuf::MessageLite* header,
                std::vector<grpc::Slice>* payload, uint64_t* payload_bytes) {
  std::vector<grpc::Slice> slices;
  if (!message.Dump(&slices).ok()) return false;
  // The length and the header may straddle slices: gathered (small); the
  // payload is referred to where it lies.
  std::string head;
  uint64_t want = 4;
  bool have_length = false;
  payload->clear();
  *payload_bytes = 0;
  for (const grpc::Slice& slice : slices) {
    size_t at = 0;
    while (at < slice.size() && head.size() < want) {
      const size_t n = std::min<uint64_t>(slice.size() - at, want - head.size());
      head.append(reinterpret_cast<const char*>(slice.begin()) + at, n);
      at += n;
      if (!have_length && head.size() == 4) {
        uint32_t length = 0;
        for (int i = 0; i < 4; ++i) length |= uint32_t{static_cast<uint8_t>(head[i])} << (8 * i);
        want = 4 + uint64_t{length};
        have_length = true;
      }
    }
    if (at < slice.size()) {
      payload->push_back(at == 0 ? slice : slice.sub(at, slice.size()));
      *payload_bytes += slice.size() - at;
    }
  }
  if (!have_length || head.size() != want) return false;
  return header->ParseFromArray(head.data() + 4, static_cast<int>(head.size() - 4));
}

}  // namespace sfs::rpc
