// Internal to meta/: RocksDB's info log, sent to the "rocksdb" spdlog logger
// instead of RocksDB's own LOG file in the metadata directory.
//
// Why: RocksDB 7.8 (Debian 12) asserts and aborts the process when it logs a
// line after a failed write to its LOG file; with the metadata on a full disk
// that took the daemon down on the next error message. Our log sink falls
// back to stderr instead (common/log_file_sink.h). It also spares RocksDB a
// file descriptor and a LOG rotation that can fail for want of descriptors.
#pragma once

#include <memory>

#include <rocksdb/env.h>

namespace sfs::meta {

// DEBUG and INFO lines are logged at debug level (RocksDB is chatty), WARN at
// warn, ERROR and FATAL at error. Lines below WARN are dropped unless the
// "rocksdb" logger is at debug or finer.
std::shared_ptr<rocksdb::Logger> NewRocksLogger();

}  // namespace sfs::meta
