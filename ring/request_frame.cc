#include "ring/request_frame.h"

#include <linux/fuse.h>

#include <cstring>

namespace sfs::ring {

Result<Frame> AssembleRequest(const uapi::ReqHeader& header, char* payload,
                              size_t payload_capacity) {
  fuse_in_header in;
  std::memcpy(&in, header.in_out, sizeof(in));
  const uapi::EntInOut& ent = header.ring_ent_in_out;
  const size_t payload_size = ent.payload_sz;
  if (payload_size > payload_capacity || in.len < sizeof(in) + payload_size) {
    return Status::Error(EIO, "FUSE ring request: length " + std::to_string(in.len) +
                                  " does not hold its payload of " + std::to_string(payload_size));
  }
  const size_t first_arg = in.len - sizeof(in) - payload_size;
  if (first_arg > uapi::kOpInSize) {
    return Status::Error(EIO, "FUSE ring request: first argument of " +
                                  std::to_string(first_arg) + " bytes (opcode " +
                                  std::to_string(in.opcode) + ")");
  }
  if (ent.commit_id != in.unique) {
    return Status::Error(EIO, "FUSE ring request: commit id differs from its unique");
  }
  Frame frame;
  frame.data = payload - first_arg - sizeof(in);
  frame.size = in.len;
  frame.unique = in.unique;
  std::memcpy(frame.data, &in, sizeof(in));
  std::memcpy(frame.data + sizeof(in), header.op_in, first_arg);
  return frame;
}

uint64_t ReplyUnique(const iovec* iov, int count) {
  if (count < 1 || iov[0].iov_len != sizeof(fuse_out_header)) return 0;
  fuse_out_header out;
  std::memcpy(&out, iov[0].iov_base, sizeof(out));
  return out.unique;
}

Result<size_t> StoreReply(const iovec* iov, int count, uapi::ReqHeader& header, char* payload,
                          size_t payload_capacity) {
  if (count < 1 || iov[0].iov_len != sizeof(fuse_out_header)) {
    return Status::Error(EINVAL, "FUSE ring reply without an out header");
  }
  fuse_out_header out;
  std::memcpy(&out, iov[0].iov_base, sizeof(out));
  size_t args = 0;
  for (int i = 1; i < count; ++i) args += iov[i].iov_len;
  const size_t total = sizeof(out) + args;
  if (args > payload_capacity) {
    out.error = -EIO;
    out.len = sizeof(out);
    args = 0;
  } else if (!(count == 2 && iov[1].iov_base == payload)) {
    size_t at = 0;
    for (int i = 1; i < count; ++i) {
      // memmove: a piece may already lie inside the payload.
      std::memmove(payload + at, iov[i].iov_base, iov[i].iov_len);
      at += iov[i].iov_len;
    }
  }
  std::memcpy(header.in_out, &out, sizeof(out));
  header.ring_ent_in_out.payload_sz = static_cast<uint32_t>(args);
  return total;
}

}  // namespace sfs::ring
