// Each ops_*.cc file fills its part of the FUSE operation table.
#pragma once

#include "fs/fuse_api.h"

namespace sfs::fs {
// The largest write one FUSE request carries (max_write; libfuse sets
// max_pages to match) unless the mount sets max_request, and the most a
// user may set max_read to.
inline constexpr unsigned kMaxTransfer = 1 << 20;

// The largest read request (the mount's max_read, unless the user gave
// one). A read reply is spliced (fs/ops_file.cc) only when it fits in one
// pipe beside its header and a page per piece, and a pipe holds at most
// 1 MiB (/proc/sys/fs/pipe-max-size) without CAP_SYS_RESOURCE; and half
// the default stripe, so a request rarely spans two stripes.
inline constexpr unsigned kMaxRead = 512 << 10;
// What the kernel reads ahead on the mount (fs/mount.cc, WidenReadahead):
// a cold sequential read's window is sent as kReadahead / kMaxRead requests
// at once, which the OSTs serve side by side.
inline constexpr unsigned kReadahead = 2 << 20;

void AddNamespaceOps(fuse_lowlevel_ops* ops);
void AddFileOps(fuse_lowlevel_ops* ops);
void AddDirOps(fuse_lowlevel_ops* ops);
void AddXattrOps(fuse_lowlevel_ops* ops);
}  // namespace sfs::fs
