// Internal to meta/: the one place a RocksDB status becomes an errno.
#pragma once

#include <rocksdb/status.h>

#include <string_view>

#include "common/status.h"

namespace sfs::meta {

// ok -> ok. NotFound -> ENOENT; out of space (NoSpace subcode or an IOError
// saying "No space") -> ENOSPC; Corruption -> EIO; InvalidArgument -> EINVAL;
// Busy, TimedOut, TryAgain -> EAGAIN; anything else -> EIO.
// The message is `context` + ": " + the RocksDB text.
Status FromRocks(const rocksdb::Status& s, std::string_view context);

}  // namespace sfs::meta
