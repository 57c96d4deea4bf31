// The daemon's multi-threaded receive loop, in place of libfuse 3.14's
// fuse_session_loop_mt. That loop reads /dev/fuse into buffers of a fixed
// size (se->bufsize: 256 pages + 4 KiB), and the kernel refuses a read
// into a buffer smaller than max_write plus the request headers (EINVAL,
// "fuse: reading device: Invalid argument", and the session ends), so a
// mount whose INIT reply asks for requests above 1 MiB (mount option
// max_request, fs/init_reply.h) needs buffers of its own. Each worker reads
// into its own buffer and hands what it read to libfuse's public
// fuse_session_process_buf, which dispatches it as libfuse's loop would.
//
// It ends as libfuse's loop ends: when the kernel says the mount is gone
// (a read fails with ENODEV: unmounted, or the connection aborted), or
// once fuse_session_exit was called (libfuse's signal handlers do that):
// the calling thread then cancels the workers, whose reads are the only
// place they can be cancelled at (a request read is served whole), and
// joins them. Workers block SIGTERM, SIGINT, SIGHUP and SIGQUIT, so those
// reach the calling thread and interrupt its wait.
//
// Thread safety: one RunReceiveLoop per session at a time; the read hook
// is called on every worker thread at once.
#pragma once

#include <sys/types.h>

#include <cstddef>

#include "common/status.h"

struct fuse_session;

namespace sfs::fs {

struct ReceiveLoopOptions {
  // At most this many workers. As in libfuse's loop, one starts with the
  // loop and another each time the last idle one takes a request; none
  // ends before the loop does.
  unsigned workers = 4;
  // Bytes each worker reads into: the largest request (max_write) plus
  // room for its headers.
  size_t buffer_size = 0;
  // Reads one request from the channel with read(2)'s contract, as a
  // fuse_custom_io read hook does (fs/fuse_channel.h, ReadChannel); null:
  // read(2) itself.
  ssize_t (*read)(int fd, void* buf, size_t len, void* context) = nullptr;
  void* context = nullptr;
};

enum class LoopEnd {
  kUnmounted,      // the kernel ended the connection (ENODEV)
  kExitRequested,  // fuse_session_exit, e.g. from a signal handler
};

// Serves `session` (mounted, its channel attached) until it ends, and
// returns once every worker has ended. An error reading the channel (other
// than EINTR, EAGAIN and ENOENT, which mean "read again"; EIO for a read
// shorter than a request header) ends it too and is returned; so is a
// worker that could not be started (the others are stopped first).
Result<LoopEnd> RunReceiveLoop(fuse_session* session, const ReceiveLoopOptions& options);

}  // namespace sfs::fs
