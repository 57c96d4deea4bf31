// The FUSE INIT handshake as bytes on /dev/fuse: what the kernel offers in
// its INIT request, and the daemon's amendments to the reply libfuse 3.14
// makes (fs/fuse_channel.h says why each is needed). Pure functions over
// the wire format of <linux/fuse.h>, so they are tested without a mount
// (tests/fs/init_reply_test.cc).
//
// Flags are 64 bits as the kernel counts them: bits 0-31 travel in
// fuse_init_{in,out}.flags, bits 32-63 in flags2 (with FUSE_INIT_EXT).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace sfs::fs {

struct InitRequest {
  uint64_t unique = 0;   // of the request, which its reply repeats
  uint64_t offered = 0;  // flags, and flags2 << 32 when FUSE_INIT_EXT is set
};

// The INIT request in `bytes` (one request as read from /dev/fuse), or
// nothing if it is another request or too short to be one.
std::optional<InitRequest> ParseInitRequest(const void* bytes, size_t size);

struct InitWishes {
  uint64_t flags = 0;  // bits to add where the kernel offered them
  // 0: the reply's max_write as libfuse made it. Else the largest request
  // in bytes: max_write and max_pages (FUSE_MAX_PAGES) are set to it,
  // where the kernel offered FUSE_MAX_PAGES. The kernel keeps
  // min(max_pages, /proc/sys/fs/fuse/max_pages_limit) and says nothing.
  uint32_t max_write = 0;
};

struct InitGrant {
  uint64_t flags = 0;      // bits added to the reply
  uint32_t max_write = 0;  // the reply's max_write, as sent
  uint32_t max_pages = 0;  // the reply's max_pages, as sent (0: not sent)
  bool sized = false;      // max_write and max_pages are the wish's
};

// Amends libfuse's INIT reply body (`reply`: the fuse_init_out bytes as
// libfuse sends them, perhaps shorter for an old protocol minor) in place.
// Only adds: a flag the kernel did not offer, or that a short reply has no
// field for, is left out; so is the size without FUSE_MAX_PAGES (a kernel
// without it sends at most 32 pages a request, whatever max_write says).
// REQUIRES: page_size > 0.
InitGrant AmendInitReply(std::span<char> reply, uint64_t offered, const InitWishes& wishes,
                         size_t page_size);

}  // namespace sfs::fs
