// The /dev/fuse channel as libfuse 3.14 drives it, with one addition: the
// INIT reply asks the kernel for what that libfuse cannot name or size.
//
// FUSE_HANDLE_KILLPRIV_V2 (kernel 5.12, libfuse 3.15+): the daemon clears
// set-user/group-ID bits and security.capability itself, and the kernel
// marks the superblock SB_NOSEC. Without it, every write(2) through the page
// cache asks the daemon for security.capability first (file_remove_privs),
// a full round trip per write: half of what a 4 KiB write costs. What the
// daemon then does itself:
//  - a write whose request carries FUSE_WRITE_KILL_SUIDGID (the writer
//    lacks CAP_FSETID) clears the bits (fs/ops_file.cc, WriteOp); libfuse
//    3.14 does not pass write_flags on, so ReadChannel notes it
//    (WriteKillsSetId);
//  - setattr carrying FATTR_KILL_SUIDGID (libfuse: FUSE_SET_ATTR_KILL_SUID),
//    which the kernel sends for chown of a non-directory and for truncate
//    by a caller without CAP_FSETID, clears them (OpSetattr);
//  - security.capability cannot exist: only user.* attributes can be set.
//
// FUSE_DIRECT_IO_ALLOW_MMAP (kernel 6.6, libfuse 3.16+; a flags2 bit): a
// direct_io handle may be mapped shared, the kernel writing cached pages of
// a range back and dropping them before a direct write to it. With it an
// O_RDWR handle can bypass the page cache (cache=writearound) and shared
// writable mmap still works on it.
//
// max_write and max_pages above 1 MiB (mount option max_request): libfuse
// keeps max_write within its own receive buffer (256 pages + 4 KiB). 3.14
// caps it before init() runs, newer ones after, so the amendment here, not
// init(), says what the daemon's own receive loop takes (fs/fuse_loop.h).
// The kernel keeps at most /proc/sys/fs/fuse/max_pages_limit pages of it.
//
// Each is asked for only when the kernel offered it in INIT; an older kernel
// gets exactly what libfuse sends.
//
// Replies spliced from pipes (large reads, fs/pipe_pool.h) go out through a
// splice_send hook that is a plain splice(2): libfuse offers
// FUSE_CAP_SPLICE_WRITE to a session with custom I/O only if it has one. A newer libfuse would do this itself
// (FUSE_CAP_HANDLE_KILLPRIV_V2), and this file could go.
//
// Thread safety: the hooks run on the receive loop's worker threads; the
// state is atomics. INIT is the first request on a channel and nothing else is sent
// before it is answered.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/status.h"
#include "fs/init_reply.h"
#include "fs/stripefs.h"

struct fuse_session;

namespace sfs::ring {
class FuseRing;
}

namespace sfs::fs {

// Not in Debian 12's <linux/fuse.h>; the kernel's value.
inline constexpr uint64_t kFuseDirectIoAllowMmap = 1ULL << 36;

struct InitAmendment {
  // What to add to the INIT reply (fs/init_reply.h); set before the mount
  // serves, read only after.
  InitWishes wishes;
  std::atomic<uint64_t> init_unique{0};  // of the INIT request, once read
  std::atomic<uint64_t> offered{0};      // INIT's flags, once read
  std::atomic<bool> done{false};         // the INIT reply went out
  std::atomic<uint64_t> granted{0};      // flags added to it
  std::atomic<uint32_t> max_write{0};    // its max_write, as sent
  std::atomic<uint32_t> max_pages{0};    // its max_pages, as sent (0: none)
  std::atomic<int> refused{0};           // the errno INIT was answered with, if any
  // The io_uring queues (ring/fuse_ring.h), made before the mount when it
  // is to use them (MakeRing); set before the mount serves, never after.
  // The INIT reply then offers FUSE_OVER_IO_URING and, once it went out,
  // starts them; every reply to a request they serve goes back through
  // them. Null: /dev/fuse only.
  ring::FuseRing* ring = nullptr;
};

// The io_uring queues a mount with `mode` uses (one per possible CPU,
// `depth` entries each, 0: the daemon's choice; payloads of `max_request`
// bytes), serving through `filesystem`'s session; null where it uses
// /dev/fuse only (off, or auto on a kernel that does not offer them: one
// log line says why). An error only for io_uring=on when they cannot be
// had. Call before fuse_session_mount.
Result<std::unique_ptr<ring::FuseRing>> MakeRing(MountOptions::Uring mode, uint32_t depth,
                                                 int queue_nice, uint32_t max_request,
                                                 void* filesystem);

// Entries per queue when the mount does not say (uring_depth): each holds
// a request of its CPU until its reply, waiting ones (TBF) included, so
// every queue can hold many; about 512 in all, 64 to 256 per queue.
uint32_t RingDepth(unsigned queues);

// Routes the session's reads and writes through the hooks above. Call after
// fuse_session_mount and before the loop. The session's userdata must be
// the Filesystem whose InitAmendment it uses. 0 or -errno.
int AttachChannel(fuse_session* session);

// The read hook: read(2) of one request from /dev/fuse into `buf`, noting
// the INIT request. For the daemon's own receive loop (fs/fuse_loop.h),
// which libfuse's hooks do not reach; `filesystem` is the Filesystem.
ssize_t ReadChannel(int fd, void* buf, size_t len, void* filesystem);

// Whether the last request ReadChannel read on this thread was a FUSE_WRITE
// carrying FUSE_WRITE_KILL_SUIDGID. Valid inside the write callback, which
// libfuse runs on the thread that read the request.
bool WriteKillsSetId();

}  // namespace sfs::fs
