#include "fs/init_reply.h"

#include <linux/fuse.h>

#include <algorithm>
#include <cstring>

namespace sfs::fs {
namespace {

// Whether a reply of `size` bytes holds the field at `offset` of `width`.
bool Holds(size_t size, size_t offset, size_t width) { return size >= offset + width; }

template <class T>
T Load(std::span<const char> bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(value));
  return value;
}

template <class T>
void Store(std::span<char> bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(value));
}

}  // namespace

std::optional<InitRequest> ParseInitRequest(const void* bytes, size_t size) {
  const std::span<const char> request(static_cast<const char*>(bytes), size);
  const size_t body = sizeof(fuse_in_header);
  if (!Holds(size, body + offsetof(fuse_init_in, flags), sizeof(uint32_t))) return std::nullopt;
  const auto header = Load<fuse_in_header>(request, 0);
  if (header.opcode != FUSE_INIT) return std::nullopt;
  const auto flags = Load<uint32_t>(request, body + offsetof(fuse_init_in, flags));
  InitRequest init{header.unique, flags};
  if ((flags & FUSE_INIT_EXT) != 0 &&
      Holds(size, body + offsetof(fuse_init_in, flags2), sizeof(uint32_t))) {
    init.offered |= uint64_t{Load<uint32_t>(request, body + offsetof(fuse_init_in, flags2))} << 32;
  }
  return init;
}

InitGrant AmendInitReply(std::span<char> reply, uint64_t offered, const InitWishes& wishes,
                         size_t page_size) {
  InitGrant grant;
  if (!Holds(reply.size(), offsetof(fuse_init_out, flags), sizeof(uint32_t))) return grant;
  auto flags = Load<uint32_t>(reply, offsetof(fuse_init_out, flags));
  uint64_t add = wishes.flags & offered;
  // flags2 only where libfuse sent it (it does when the kernel set
  // FUSE_INIT_EXT, which is also what made those bits offered).
  const bool has_flags2 = (flags & FUSE_INIT_EXT) != 0 &&
                          Holds(reply.size(), offsetof(fuse_init_out, flags2), sizeof(uint32_t));
  if (!has_flags2) add &= 0xffffffffULL;
  const size_t max_write_at = offsetof(fuse_init_out, max_write);
  const size_t max_pages_at = offsetof(fuse_init_out, max_pages);
  const bool sizable = wishes.max_write != 0 && (offered & FUSE_MAX_PAGES) != 0 &&
                       Holds(reply.size(), max_pages_at, sizeof(uint16_t));
  if (sizable) {
    const size_t pages = std::min<size_t>((wishes.max_write - 1) / page_size + 1, UINT16_MAX);
    Store<uint32_t>(reply, max_write_at, wishes.max_write);
    Store<uint16_t>(reply, max_pages_at, static_cast<uint16_t>(pages));
    flags |= FUSE_MAX_PAGES;
    grant.sized = true;
  }
  flags |= static_cast<uint32_t>(add);
  Store<uint32_t>(reply, offsetof(fuse_init_out, flags), flags);
  if (has_flags2) {
    auto flags2 = Load<uint32_t>(reply, offsetof(fuse_init_out, flags2));
    Store<uint32_t>(reply, offsetof(fuse_init_out, flags2),
                    flags2 | static_cast<uint32_t>(add >> 32));
  }
  grant.flags = add;
  if (Holds(reply.size(), max_write_at, sizeof(uint32_t))) {
    grant.max_write = Load<uint32_t>(reply, max_write_at);
  }
  if (Holds(reply.size(), max_pages_at, sizeof(uint16_t)) && (flags & FUSE_MAX_PAGES) != 0) {
    grant.max_pages = Load<uint16_t>(reply, max_pages_at);
  }
  return grant;
}

}  // namespace sfs::fs
