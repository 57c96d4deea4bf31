#include "fs/fuse_channel.h"

#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "common/log.h"
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
  uint64_t offered = init.flags;
  if ((init.flags & FUSE_INIT_EXT) != 0 &&
      got >= sizeof(header) + offsetof(fuse_init_in, flags2) + sizeof(uint32_t)) {
    offered |= static_cast<uint64_t>(init.flags2) << 32;
  }
  state.offered.store(offered, std::memory_order_relaxed);
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
  uint64_t add = state.wanted & state.offered.load(std::memory_order_relaxed);
  // flags2 only where libfuse sent it (it does when the kernel set
  // FUSE_INIT_EXT, which is also what made those bits offered).
  const bool has_flags2 = (flags & FUSE_INIT_EXT) != 0 &&
                          reply.size() >= offsetof(fuse_init_out, flags2) + sizeof(uint32_t);
  if (!has_flags2) add &= 0xffffffffULL;
  flags |= static_cast<uint32_t>(add);
  std::memcpy(reply.data() + offsetof(fuse_init_out, flags), &flags, sizeof(flags));
  if (has_flags2) {
    uint32_t flags2;
    std::memcpy(&flags2, reply.data() + offsetof(fuse_init_out, flags2), sizeof(flags2));
    flags2 |= static_cast<uint32_t>(add >> 32);
    std::memcpy(reply.data() + offsetof(fuse_init_out, flags2), &flags2, sizeof(flags2));
  }
  state.granted.store(add, std::memory_order_relaxed);
  Logger("fs")->info("FUSE INIT amended: handle_killpriv_v2 {}, direct_io_allow_mmap {}",
                     (add & FUSE_HANDLE_KILLPRIV_V2) != 0 ? "on" : "off",
                     (add & kFuseDirectIoAllowMmap) != 0 ? "on" : "off");
  std::vector<iovec> amended(iov, iov + count);
  amended[1].iov_base = reply.data();
  return writev(fd, amended.data(), count);
}

// Replies spliced from a pipe (read replies, fs/pipe_pool.h) go out as
// libfuse would send them itself; without this hook it would not offer
// FUSE_CAP_SPLICE_WRITE at all. Never an INIT reply (that is a writev).
ssize_t ChannelSpliceSend(int fd_in, off_t* off_in, int fd_out, off_t* off_out, size_t len,
                          unsigned int flags, void*) {
  return splice(fd_in, off_in, fd_out, off_out, len, flags);
}

}  // namespace

int AttachChannel(fuse_session* session) {
  static constexpr fuse_custom_io kIo = {
      .writev = ChannelWritev,
      .read = ChannelRead,
      .splice_receive = nullptr,
      .splice_send = ChannelSpliceSend,
  };
  return fuse_session_custom_io(session, &kIo, fuse_session_fd(session));
}

}  // namespace sfs::fs
