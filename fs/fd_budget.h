// How the daemon shares its file descriptors. One user holding thousands of
// files open must not be able to run the daemon out of descriptors (every
// user's I/O and the metadata store would fail), so each consumer gets a
// bounded share of the limit: object files (ost::ObjectCache, per OST), the
// metadata store's table files, and room left for everything else.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sfs::fs {

// Pipes for spliced read replies that may exist at once (fs/pipe_pool.h),
// two descriptors each.
inline constexpr size_t kMaxReadPipes = 64;

struct FdBudget {
  uint64_t limit = 0;          // the soft RLIMIT_NOFILE split here
  int rocksdb_files = 0;       // RocksDB max_open_files
  size_t objects_per_ost = 0;  // ObjectCache capacity of each OST
};

// Pure: the split of `limit` descriptors for `osts` OSTs with
// `threads_per_ost` service threads each. Reserves a fixed part for
// libraries, FUSE, logs, Asio, OST directories, read pipes and the metrics
// server's sockets, plus one descriptor per
// service thread (an evicted object in use stays open until its I/O ends)
// and some for short-lived ones (/proc reads, RocksDB's WAL and manifest);
// RocksDB gets an eighth of the limit (20 to 1000: below 20 it raises the
// value itself); objects get the rest, split evenly, at least 4 per OST.
FdBudget SplitDescriptors(uint64_t limit, size_t osts, int threads_per_ost);

// Raises the soft RLIMIT_NOFILE to the hard limit (the daemon may use what
// the administrator allowed) and returns the soft limit now in force.
uint64_t RaiseDescriptorLimit();

}  // namespace sfs::fs
