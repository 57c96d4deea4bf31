#include "fs/fuse_channel.h"

#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "fs/fuse_api.h"
#include "fs/filesystem.h"

namespace sfs::fs {
namespace {

InitAmendment& StateOf(void* userdata) {
  return static_cast<Filesystem*>(userdata)->init_amendment();
}

ssize_t ChannelRead(int fd, void* buf, size_t len, void* userdata) {
  const ssize_t n = read(fd, buf, len);
  InitAmendment& state = StateOf(userdata);
  if (n < 0 || state.done.load(std::memory_order_acquire)) return n;
  const size_t got = static_cast<size_t>(n);
  if (got < sizeof(fuse_in_header) + offsetof(fuse_init_in, flags) + sizeof(uint32_t)) return n;
  fuse_in_header header;
  std::memcpy(&header, buf, sizeof(header));
  if (header.opcode != FUSE_INIT) return n;
  fuse_init_in init;
  std::memset(&init, 0, sizeof(init));
  std::memcpy(&init, static_cast<const char*>(buf) + sizeof(header),
              std::min(sizeof(init), got - sizeof(header)));
  state.offered.store(init.flags, std::memory_order_relaxed);
  state.init_unique.store(header.unique, std::memory_order_release);
  return n;
}

ssize_t ChannelWritev(int fd, struct iovec* iov, int count, void* userdata) {
  InitAmendment& state = StateOf(userdata);
  if (state.done.load(std::memory_order_acquire) || count < 2 ||
      iov[0].iov_len != sizeof(fuse_out_header) ||
      iov[1].iov_len < offsetof(fuse_init_out, flags) + sizeof(uint32_t)) {
    return writev(fd, iov, count);
  }
  fuse_out_header header;
  std::memcpy(&header, iov[0].iov_base, sizeof(header));
  const uint64_t init_unique = state.init_unique.load(std::memory_order_acquire);
  if (init_unique == 0 || header.unique != init_unique) return writev(fd, iov, count);
  state.done.store(true, std::memory_order_release);
  if (header.error != 0) return writev(fd, iov, count);
  // The reply is libfuse's; the amended copy is ours.
  std::vector<char> reply(static_cast<const char*>(iov[1].iov_base),
                          static_cast<const char*>(iov[1].iov_base) + iov[1].iov_len);
  uint32_t flags;
  std::memcpy(&flags, reply.data() + offsetof(fuse_init_out, flags), sizeof(flags));
  const uint32_t add = state.wanted & state.offered.load(std::memory_order_relaxed);
  flags |= add;
  std::memcpy(reply.data() + offsetof(fuse_init_out, flags), &flags, sizeof(flags));
  state.granted.store(add, std::memory_order_relaxed);
  std::vector<iovec> amended(iov, iov + count);
  amended[1].iov_base = reply.data();
  return writev(fd, amended.data(), count);
}

}  // namespace

int AttachChannel(fuse_session* session) {
  static constexpr fuse_custom_io kIo = {
      .writev = ChannelWritev,
      .read = ChannelRead,
      .splice_receive = nullptr,
      .splice_send = nullptr,
  };
  return fuse_session_custom_io(session, &kIo, fuse_session_fd(session));
}

}  // namespace sfs::fs
