// Internal to meta/: every write to the database goes through here.
//
// RocksDB stops accepting writes after a background error (a full disk, a
// file it could not open for want of descriptors) and stays stopped until it
// recovers: by itself for a full disk once enough space is free (it polls),
// or when asked with DB::Resume() for other causes. A write refused that way
// asks it to resume and, if it did, is tried once more; so a cause that has
// gone (space freed, descriptors closed) never leaves the store failing
// until a remount, and a cause that persists costs one quick failed Resume.
#pragma once

#include <string_view>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "common/status.h"

namespace sfs::meta {

// `sync`: the WAL is synced before returning (and with it every earlier
// write). `logged` false: the batch skips the WAL (a killed daemon may
// lose it; only for a change whose loss is harmless, e.g. erasing a
// writing mark). Errors as FromRocks, e.g. ENOSPC while the disk is full.
Status WriteToDb(rocksdb::DB* db, bool sync, rocksdb::WriteBatch* batch, std::string_view context,
                 bool logged = true);

// Makes every earlier write durable. A synced write of a marker key rather
// than DB::FlushWAL(true): RocksDB 7.8 asserts (aborting the process) when
// FlushWAL syncs a WAL file whose last append failed, while a write is
// refused before it reaches that file.
Status SyncDb(rocksdb::DB* db);

}  // namespace sfs::meta
