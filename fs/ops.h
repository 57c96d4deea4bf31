// Each ops_*.cc file fills its part of the FUSE operation table.
#pragma once

#include "fs/fuse_api.h"

namespace sfs::fs {
void AddNamespaceOps(fuse_lowlevel_ops* ops);
void AddFileOps(fuse_lowlevel_ops* ops);
void AddDirOps(fuse_lowlevel_ops* ops);
void AddXattrOps(fuse_lowlevel_ops* ops);
}  // namespace sfs::fs
