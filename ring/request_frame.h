// The bytes of one FUSE-over-io_uring entry as the rest of the daemon
// knows them: a request laid out as read(2) from /dev/fuse would have it,
// and a reply given as libfuse's iovecs (out header, then arguments). Pure
// functions over the wire format, tested without a kernel
// (tests/ring/request_frame_test.cc).
//
// An entry's memory is one mapping: its header buffer (uapi::ReqHeader) at
// the start, then room, then the payload buffer on the next page boundary.
// The kernel writes a request in three pieces (fuse_in_header in
// header.in_out, the op's first argument in header.op_in, the rest in the
// payload); AssembleRequest copies the first two into the room just in
// front of the payload, so the request is contiguous without copying its
// payload (a 1 MiB write's data stays where the kernel put it).
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "ring/uapi.h"

namespace sfs::ring {

// Room an entry keeps in front of its payload for the request's headers:
// fuse_in_header (40 bytes) and the largest first argument (128).
inline constexpr size_t kFrameRoom = 40 + uapi::kOpInSize;

struct Frame {
  char* data = nullptr;  // starts kFrameRoom or less in front of the payload
  size_t size = 0;       // the request's fuse_in_header.len
  uint64_t unique = 0;
};

// The request the kernel wrote into `header` and `payload` (its
// payload_sz bytes), laid out contiguously ending at payload + payload_sz.
// EIO if the header contradicts itself (a length shorter than the pieces,
// a first argument longer than op_in, a payload longer than
// `payload_capacity`, a commit id other than the unique).
// REQUIRES: kFrameRoom bytes in front of `payload` belong to the entry.
Result<Frame> AssembleRequest(const uapi::ReqHeader& header, char* payload,
                              size_t payload_capacity);

// Stores libfuse's reply (`iov[0]` the fuse_out_header, the rest its
// arguments, as a fuse_custom_io writev hook gets them) into the entry:
// the out header in header.in_out, the arguments one after the other in
// the payload (not copied if `iov[1]` already is the payload), and their
// length in payload_sz. A reply larger than the payload is replaced by an
// EIO error reply, so the caller still gets an answer. Returns the bytes
// the reply had (what writev would have returned), or EINVAL for an iovec
// without a whole out header.
Result<size_t> StoreReply(const iovec* iov, int count, uapi::ReqHeader& header, char* payload,
                          size_t payload_capacity);

// The unique of a reply given as libfuse's iovecs; 0 (a notification, or
// not a reply) if iov[0] is not a whole out header.
uint64_t ReplyUnique(const iovec* iov, int count);

}  // namespace sfs::ring
