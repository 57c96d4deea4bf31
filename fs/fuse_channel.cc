#include "fs/fuse_channel.h"

#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "common/log.h"
#include "fs/fuse_api.h"
#include "fs/filesystem.h"
#include "ring/fuse_ring.h"
#include "ring/uapi.h"

namespace sfs::fs {
namespace {

InitAmendment& StateOf(void* userdata) {
  return static_cast<Filesystem*>(userdata)->init_amendment();
}

// The INIT reply went out: the kernel now holds every request until each
// io_uring queue has an entry registered, or sends them over /dev/fuse if
// the reply did not offer the queues.
void StartRing(InitAmendment& state, int fd, uint64_t granted) {
  if (state.ring == nullptr) return;
  if ((granted & ring::uapi::kFuseOverIoUring) != 0) {
    state.ring->Start(fd);
    Logger("fs")->info("FUSE requests come over io_uring: {} queues of {} entries",
                       state.ring->options().queues, state.ring->options().queue_depth);
  } else {
    Logger("fs")->warn("the kernel did not offer FUSE over io_uring in INIT (enable_uring "
                       "turned off since the mount began?): requests come over /dev/fuse");
  }
}

ssize_t ChannelWritev(int fd, struct iovec* iov, int count, void* userdata) {
  InitAmendment& state = StateOf(userdata);
  if (state.ring != nullptr) {
    if (auto sent = state.ring->Reply(iov, count)) return *sent;
  }
  if (state.done.load(std::memory_order_acquire) || count < 2 ||
      iov[0].iov_len != sizeof(fuse_out_header) ||
      iov[1].iov_len < offsetof(fuse_init_out, flags) + sizeof(uint32_t)) {
    return writev(fd, iov, count);
  }
  fuse_out_header header;
  std::memcpy(&header, iov[0].iov_base, sizeof(header));
  const uint64_t init_unique = state.init_unique.load(std::memory_order_acquire);
  if (init_unique == 0 || header.unique != init_unique) return writev(fd, iov, count);
  if (header.error != 0) {
    state.refused.store(-header.error, std::memory_order_relaxed);
    state.done.store(true, std::memory_order_release);
    return writev(fd, iov, count);
  }
  // The reply is libfuse's; the amended copy is ours.
  std::vector<char> reply(static_cast<const char*>(iov[1].iov_base),
                          static_cast<const char*>(iov[1].iov_base) + iov[1].iov_len);
  const InitGrant grant = AmendInitReply(reply, state.offered.load(std::memory_order_relaxed),
                                         state.wishes, static_cast<size_t>(getpagesize()));
  state.granted.store(grant.flags, std::memory_order_relaxed);
  state.max_write.store(grant.max_write, std::memory_order_relaxed);
  state.max_pages.store(grant.max_pages, std::memory_order_relaxed);
  state.done.store(true, std::memory_order_release);
  Logger("fs")->info(
      "FUSE INIT amended: handle_killpriv_v2 {}, direct_io_allow_mmap {}, max_write {}{}",
      (grant.flags & FUSE_HANDLE_KILLPRIV_V2) != 0 ? "on" : "off",
      (grant.flags & kFuseDirectIoAllowMmap) != 0 ? "on" : "off", grant.max_write,
      grant.sized                   ? " (max_request)"
      : state.wishes.max_write != 0 ? " (max_request refused: no FUSE_MAX_PAGES)"
                                    : "");
  std::vector<iovec> amended(iov, iov + count);
  amended[1].iov_base = reply.data();
  const ssize_t sent = writev(fd, amended.data(), count);
  if (sent >= 0) StartRing(state, fd, grant.flags);
  return sent;
}

// Replies spliced from a pipe (read replies, fs/pipe_pool.h) go out as
// libfuse would send them itself; without this hook it would not offer
// FUSE_CAP_SPLICE_WRITE at all. Never an INIT reply (that is a writev).
ssize_t ChannelSpliceSend(int fd_in, off_t* off_in, int fd_out, off_t* off_out, size_t len,
                          unsigned int flags, void*) {
  return splice(fd_in, off_in, fd_out, off_out, len, flags);
}

}  // namespace

namespace {
thread_local bool tls_write_kills_setid = false;
}  // namespace

bool WriteKillsSetId() { return tls_write_kills_setid; }

namespace {

// Notes what the request in `buf` (n bytes) carries that libfuse 3.14
// does not pass on (WriteKillsSetId), for the callback on this thread.
void NoteRequest(const void* buf, ssize_t n) {
  tls_write_kills_setid = false;
  if (n >= static_cast<ssize_t>(sizeof(fuse_in_header) + sizeof(fuse_write_in))) {
    fuse_in_header header;
    std::memcpy(&header, buf, sizeof(header));
    if (header.opcode == FUSE_WRITE) {
      fuse_write_in write;
      std::memcpy(&write, static_cast<const char*>(buf) + sizeof(header), sizeof(write));
      tls_write_kills_setid = (write.write_flags & FUSE_WRITE_KILL_SUIDGID) != 0;
    }
  }
}

// Serves a request an io_uring queue was handed, on its thread, as the
// /dev/fuse loop serves one it read (fs/fuse_loop.cc).
void ServeRingRequest(void* filesystem, char* request, size_t size) {
  NoteRequest(request, static_cast<ssize_t>(size));
  fuse_buf buf{};
  buf.mem = request;
  buf.size = size;
  fuse_session_process_buf(static_cast<Filesystem*>(filesystem)->session(), &buf);
}

}  // namespace

ssize_t ReadChannel(int fd, void* buf, size_t len, void* filesystem) {
  const ssize_t n = read(fd, buf, len);
  NoteRequest(buf, n);
  InitAmendment& state = StateOf(filesystem);
  if (n < 0 || state.done.load(std::memory_order_acquire)) return n;
  if (auto init = ParseInitRequest(buf, static_cast<size_t>(n))) {
    state.offered.store(init->offered, std::memory_order_relaxed);
    state.init_unique.store(init->unique, std::memory_order_release);
  }
  return n;
}

uint32_t RingDepth(unsigned queues) {
  return std::clamp<uint32_t>(512 / std::max(queues, 1u), 64, 256);
}

Result<std::unique_ptr<ring::FuseRing>> MakeRing(MountOptions::Uring mode, uint32_t depth,
                                                 int queue_nice, uint32_t max_request,
                                                 void* filesystem) {
  if (mode == MountOptions::Uring::kOff) return std::unique_ptr<ring::FuseRing>();
  const ring::Availability availability = ring::Probe();
  const unsigned queues = ring::PossibleCpus();
  std::string why_not = availability.why_not;
  if (availability.usable && queues == 0) why_not = "cannot read /sys/devices/system/cpu/possible";
  if (why_not.empty()) {
    ring::Options options;
    options.queues = queues;
    options.queue_depth = depth != 0 ? depth : RingDepth(queues);
    options.queue_nice = queue_nice;
    // The kernel wants room for max(8 KiB, max_write, max_pages pages);
    // the INIT reply asks for max_request as both (fs/init_reply.h).
    options.payload_size = std::max<size_t>(8192, max_request);
    options.serve = ServeRingRequest;
    options.context = filesystem;
    auto made = ring::FuseRing::Create(options);
    if (made.ok()) return std::move(made).value();
    why_not = made.status().ToString();
  }
  if (mode == MountOptions::Uring::kOn) {
    return Status::Error(EOPNOTSUPP, "io_uring=on, but " + why_not);
  }
  Logger("fs")->info("FUSE requests come over /dev/fuse: {}", why_not);
  return std::unique_ptr<ring::FuseRing>();
}

int AttachChannel(fuse_session* session) {
  static constexpr fuse_custom_io kIo = {
      .writev = ChannelWritev,
      .read = ReadChannel,
      .splice_receive = nullptr,
      .splice_send = ChannelSpliceSend,
  };
  return fuse_session_custom_io(session, &kIo, fuse_session_fd(session));
}

}  // namespace sfs::fs
