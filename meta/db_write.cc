#include "meta/db_write.h"

#include "common/log.h"
#include "meta/keys.h"
#include "meta/rocks_status.h"

namespace sfs::meta {

Status WriteToDb(rocksdb::DB* db, bool sync, rocksdb::WriteBatch* batch, std::string_view context,
                 bool logged) {
  rocksdb::WriteOptions options;
  options.sync = sync;
  options.disableWAL = !logged;
  rocksdb::Status s = db->Write(options, batch);
  if (s.ok()) return Status::Ok();
  // Busy means RocksDB's own recovery is under way (it waits for free
  // space); anything else but OK means the cause is still there.
  rocksdb::Status resumed = db->Resume();
  if (resumed.ok()) {
    s = db->Write(options, batch);
    if (s.ok()) {
      Logger("meta")->info("metadata store resumed writing after: {}", context);
      return Status::Ok();
    }
  }
  return FromRocks(s, context);
}

Status SyncDb(rocksdb::DB* db) {
  rocksdb::WriteBatch batch;
  batch.Put(std::string(kSyncKey), "");
  return WriteToDb(db, /*sync=*/true, &batch, "meta: sync");
}

}  // namespace sfs::meta
