// The FUSE-over-io_uring wire format (<linux/fuse.h> protocol 7.42, Linux
// 6.14), which Debian 12's kernel headers (6.1, protocol 7.38) lack. The
// values are the kernel's and must match it exactly; sizes are checked at
// compile time below. Only what this module uses is here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sfs::ring::uapi {

// INIT flag (flags2 bit 9): the daemon will serve requests over io_uring.
// The kernel offers it only when the fuse module's enable_uring parameter
// is set (6.14).
inline constexpr uint64_t kFuseOverIoUring = 1ULL << 41;

// Sizes of the two fixed parts of an entry's header buffer (6.14).
inline constexpr size_t kInOutHeaderSize = 128;  // fuse_in_header / fuse_out_header
inline constexpr size_t kOpInSize = 128;         // the op's first argument (fuse_write_in ...)

// struct fuse_uring_ent_in_out (6.14).
struct EntInOut {
  uint64_t flags;
  uint64_t commit_id;   // the request's unique; repeated in the commit
  uint32_t payload_sz;  // bytes of the payload buffer in use, either way
  uint32_t padding;
  uint64_t reserved;
};

// struct fuse_uring_req_header (6.14): iov[0] of a registration.
struct ReqHeader {
  char in_out[kInOutHeaderSize];
  char op_in[kOpInSize];
  EntInOut ring_ent_in_out;
};

// enum fuse_uring_cmd (6.14): sqe->cmd_op of IORING_OP_URING_CMD.
inline constexpr uint32_t kCmdRegister = 1;
inline constexpr uint32_t kCmdCommitAndFetch = 2;

// struct fuse_uring_cmd_req (6.14), in the 80-byte command area of a
// 128-byte SQE (IORING_SETUP_SQE128, Linux 5.19).
struct CmdReq {
  uint64_t flags;
  uint64_t commit_id;  // 0 for a registration
  uint16_t qid;
  uint8_t padding[6];
};

static_assert(sizeof(EntInOut) == 32);
static_assert(sizeof(ReqHeader) == 288);
static_assert(offsetof(ReqHeader, ring_ent_in_out) == 256);
static_assert(sizeof(CmdReq) == 24);

// Where the module parameter is (present when the kernel was built with
// CONFIG_FUSE_IO_URING, 6.14).
inline constexpr const char* kEnableParam = "/sys/module/fuse/parameters/enable_uring";

}  // namespace sfs::ring::uapi
