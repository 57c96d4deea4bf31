#include "common/log.h"
#include "fs/filesystem.h"
#include "fs/ops.h"

namespace sfs::fs {
namespace {

void OpInit(void* userdata, fuse_conn_info* conn) {
  // 1 MiB writes (libfuse asks the kernel for max_pages to match), so a
  // 1 MiB application write is one request per stripe, not eight. More
  // with max_request: the channel amends the reply (fs/fuse_channel.h), as
  // libfuse keeps this within its own receive buffer.
  conn->max_write = kMaxTransfer;
  conn->max_readahead = kReadahead;
  const auto* fs = static_cast<const Filesystem*>(userdata);
  // libfuse ends the session unless this matches the mount's max_read.
  conn->max_read = fs->config().max_read;
  if (conn->capable & FUSE_CAP_PARALLEL_DIROPS) conn->want |= FUSE_CAP_PARALLEL_DIROPS;
  // Large reads are replied by splice from pipes (fs/pipe_pool.h); without
  // it libfuse copies them out of the pipes, which still works.
  if (conn->capable & FUSE_CAP_SPLICE_WRITE) conn->want |= FUSE_CAP_SPLICE_WRITE;
  // No async direct I/O: with it the kernel sends the pieces of one large
  // O_DIRECT write concurrently, and the cut-back/trim of bytes past the end
  // of file (fs/ops_file.cc) relies on writes past the end arriving one at
  // a time. Synchronous direct I/O sends them in order, each after the last
  // is answered, under the inode lock.
  conn->want &= ~FUSE_CAP_ASYNC_DIO;
  // Writeback: the page cache gathers writes and the kernel's flusher sends
  // them in pieces of up to max_write, each charged to the process that
  // opened its handle (fs/ops_file.cc). Write-through: each write(2) reaches
  // the OST scheduler itself, with the identity of its caller
  // (docs/design.md, "Write caching").
  if (fs->config().writeback && (conn->capable & FUSE_CAP_WRITEBACK_CACHE)) {
    conn->want |= FUSE_CAP_WRITEBACK_CACHE;
  } else {
    conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
  }
  // open(O_TRUNC) must empty the objects, which open does not do: without
  // atomic O_TRUNC the kernel sends a setattr(size 0) first, which does.
  conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
  // max_write as the kernel gets it is in the channel's "FUSE INIT amended" line.
  Logger("fs")->info("FUSE session up: proto {}.{} cache {}", conn->proto_major, conn->proto_minor,
                     (conn->want & FUSE_CAP_WRITEBACK_CACHE) ? "writeback"
                     : fs->config().direct_writes         ? "writearound"
                                                          : "writethrough");
}

fuse_lowlevel_ops MakeOps() {
  fuse_lowlevel_ops ops{};
  ops.init = OpInit;
  AddNamespaceOps(&ops);
  AddFileOps(&ops);
  AddDirOps(&ops);
  AddXattrOps(&ops);
  return ops;
}

}  // namespace

const fuse_lowlevel_ops* LowLevelOps() {
  static const fuse_lowlevel_ops ops = MakeOps();  // immutable after first use
  return &ops;
}

}  // namespace sfs::fs
