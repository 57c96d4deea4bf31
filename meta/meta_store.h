// The metadata store: namespace, inodes, layouts (as opaque blobs owned by
// the layout module), extended attributes and filesystem settings, all as
// RocksDB keys (schema in docs/design.md and meta/keys.h). Every mutating
// call is one atomic WriteBatch; none of them syncs except Sync() and the
// identifier high-water marks.
//
// Thread safety: every method is safe from any thread. A mutation's
// read-check-write is atomic because it holds the locks of the inodes it
// reads and writes (parent directory, child, for a rename both directories
// and the inode replaced) from its first read until its batch has landed;
// mutations of unrelated inodes share no lock and write side by side
// (meta/inode_locks.h; renames between two directories also take one
// store-wide rename lock for their ancestor check). Reads go to RocksDB
// without locks and see whole batches only. Quota usage is written as
// deltas that RocksDB adds up (a merge operator), so no lock orders the
// batches that charge one id; the usage in memory has a lock of its own,
// held only to update it. Repairs and soft-limit changes take every inode
// lock (the store's exclusive mode). All the store's locks are leaves to
// the callers but for the two callbacks below (PurgeNow, UsageObserver),
// which say what they may do.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/quota_id.h"
#include "common/status.h"

namespace sfs::meta {

inline constexpr uint64_t kRootIno = 1;
inline constexpr size_t kMaxNameLen = 255;
inline constexpr size_t kMaxXattrValue = 65536;

struct Timestamp {
  int64_t sec = 0;
  int64_t nsec = 0;
  static Timestamp Now();  // CLOCK_REALTIME
};

struct Inode {
  uint64_t ino = 0;
  uint32_t mode = 0;  // type and permission bits
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t nlink = 0;
  uint64_t size = 0;
  uint64_t rdev = 0;
  uint64_t parent = 0;  // directories only: for ".."
  Timestamp atime, mtime, ctime;
  // Regular files: bytes the objects occupy on their disks, as last stored
  // (StoreObjects); st_blocks is this in 512-byte units.
  uint64_t allocated = 0;
  // The project it counts for (quota) and, for a directory, what it hands
  // to everything created in it; 0 = none.
  uint32_t projid = 0;
  // False only when no extended attribute was ever set on it (stored since
  // record version 4): deleting it then skips the scan for them, a
  // RocksDB iterator per unlink. True for records written before.
  bool may_have_xattrs = true;
  std::string symlink;  // symlinks only: the target
};

struct DirEntry {
  std::string name;
  uint64_t ino = 0;
  uint32_t mode = 0;  // type bits (S_IFMT) of the child
};

// What a new node is. For regular files `layout` is the layout blob stored
// with it in the same batch (may be empty for other types). Its project id
// is its parent directory's.
struct NewNode {
  uint32_t mode = 0;
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint64_t rdev = 0;
  std::string symlink;
  std::string layout;
  // Extended attributes written with the node, in the same batch (e.g. a
  // directory's inherited default layout).
  std::map<std::string, std::string> xattrs;
};

// Fields to change; unset ones stay. ctime is always set to `now`.
struct AttrChange {
  std::optional<uint32_t> mode;  // permission bits only; type is kept
  std::optional<uint32_t> uid;
  std::optional<uint32_t> gid;
  std::optional<uint64_t> size;
  std::optional<Timestamp> atime;
  std::optional<Timestamp> mtime;
  std::optional<uint32_t> projid;  // directories only (EINVAL elsewhere)
  // After `mode` is applied: clear set-user-ID, and set-group-ID if group
  // executable (without it S_ISGID marks mandatory locking, not privilege),
  // as for a write or truncate by non-root and for chown.
  bool kill_setid = false;
};

// `mode` without the bits a write, truncate or chown by non-root clears.
inline uint32_t WithoutSetId(uint32_t mode) {
  mode &= ~static_cast<uint32_t>(S_ISUID);
  if (mode & S_IXGRP) mode &= ~static_cast<uint32_t>(S_ISGID);
  return mode;
}

// When a name goes away and the inode's link count reaches zero, the inode is
// kept as an orphan (key O/) until the caller destroys its objects and calls
// Purge; at mount, orphans left by a crash are purged the same way.
struct Removed {
  uint64_t ino = 0;
  uint32_t mode = 0;
  uint32_t nlink_left = 0;
  bool orphaned = false;  // nlink reached 0 on a regular file, which is kept
  bool purged = false;    // nlink reached 0 and the inode went in the same batch
  bool operator==(const Removed&) const = default;
};

// What a reply record keeps of the operation that wrote it (mds/ reply
// reconstruction, Lustre's last_rcvd): enough to answer a resent call
// from the state instead of applying it again.
struct ReplyRecord {
  uint64_t created_ino = 0;        // the inode its batch made, if any
  std::optional<Removed> removed;  // the link it dropped, if any
  bool operator==(const ReplyRecord&) const = default;
};

// While one lives on a thread, the first mutation that thread commits
// writes the reply record (client, request) in its own batch, so the
// record lands exactly when the operation does. One per thread at a time.
class ReplyRecordScope {
 public:
  ReplyRecordScope(uint64_t client, uint64_t request);
  ~ReplyRecordScope();
  ReplyRecordScope(const ReplyRecordScope&) = delete;
  ReplyRecordScope& operator=(const ReplyRecordScope&) = delete;

  // The scope of this thread that has not written its record yet, if any.
  static ReplyRecordScope* Pending();
  uint64_t client() const { return client_; }
  uint64_t request() const { return request_; }
  bool written() const { return written_; }
  void MarkWritten() { written_ = true; }

 private:
  const uint64_t client_;
  const uint64_t request_;
  bool written_ = false;
};

// Asked, inside an unlink that drops a regular file's last link, whether the
// inode can go in the unlink's own batch instead of staying as an orphan:
// true when there are no objects to destroy and nobody holds the file open.
// Gets the file's stored layout (empty if it has none). Called with the
// locks of the parent and the file held, so it must not call back into the
// store, and may take a lock that a caller of the store may hold only by
// trying it (fs/ tries the inode's shard of its open-file table, which it
// holds across store calls; a busy shard sends the file the orphan way).
using PurgeNow = std::function<bool(uint64_t ino, const std::string& layout)>;

enum class RenameMode { kReplace, kNoReplace, kExchange };

// Quota usage (issue 11). Every inode but the root directory counts one
// inode for its user, its group and its project (if not 0); a regular file
// also counts its size in bytes (apparent size: holes count, as they do
// for the size a quota limits). The store keeps one usage record per id
// and changes it in the same batch as the inode change it counts (create,
// purge, size, owner, group, project), so usage is exact after a crash.
struct Charge {
  QuotaId id;
  int64_t bytes = 0;
  int64_t inodes = 0;
};
// What `inode` counts for: up to three charges (no project: two; the
// root directory: none).
std::vector<Charge> ChargesOf(const Inode& inode);

// The soft limits that decide usage records' grace ends (QuotaUsage): a
// record whose bytes (inodes) go above `bytes` (`inodes`) gets a grace end
// of now + the grace period in the same batch, one that falls back to or
// below it gets 0. 0 = no soft limit.
struct SoftLimit {
  uint64_t bytes = 0;
  uint64_t inodes = 0;
  bool operator==(const SoftLimit&) const = default;
};

// Called with an id's usage after every batch that changed it landed,
// once per batch: each call gives the usage as of a set of landed batches,
// the last call's set plus one (a repair or soft-limit change gives the
// record it put), so once no batch is in flight the last call for each id
// gives its counters as stored. Batches that charge one id may land in one
// order and be told in another (the counters are sums, so they agree
// whatever the order; a grace end started by two batches racing across a
// soft limit may be the other's, apart by the time between them). Calls
// are serialized under the usage book's lock: the observer must be quick
// and must not call back into the store.
using UsageObserver = std::function<void(const QuotaId& id, const QuotaUsage& usage)>;

// How the store uses the machine.
struct StoreOptions {
  // Table files RocksDB keeps open at once (-1: all): its share of the
  // daemon's file descriptors.
  int max_open_files = 256;
  // A store with no usage records yet (made before quotas) or a damaged
  // one is counted at open, in one batch (meta_store.h, "Quota usage").
  // false (fsck without --repair): nothing is written; usage starts empty.
  bool count_usage = true;
};

// Settings are plain string key/values in the S/ space, and so are the
// records mkfs writes (fs_uuid, the OST list, the default layout).
class MetaStore {
 public:
  virtual ~MetaStore() = default;

  // Creates a store holding only the root directory (uid/gid 0, mode 0755)
  // and `settings`, in `dir` (created if missing). EEXIST if `dir` already
  // holds a store.
  static Result<std::unique_ptr<MetaStore>> Format(const std::string& dir,
                                                   const std::map<std::string, std::string>& settings);
  // ENOENT if `dir` holds no store.
  static Result<std::unique_ptr<MetaStore>> Open(const std::string& dir,
                                                 const StoreOptions& options = {});
  // Removes every store file in `dir` (mkfs --force).
  static Status Destroy(const std::string& dir);

  // --- settings ---
  virtual Result<std::string> GetSetting(const std::string& name) = 0;  // ENOENT if unset
  virtual Result<std::map<std::string, std::string>> AllSettings() = 0;
  virtual Status PutSetting(const std::string& name, const std::string& value) = 0;
  // Puts `values` and erases `erase` in one atomic write: a reader or a
  // crash sees all of the change or none of it.
  virtual Status PutSettings(const std::map<std::string, std::string>& values,
                             const std::vector<std::string>& erase = {}) = 0;

  // --- namespace ---
  virtual Result<Inode> GetInode(uint64_t ino) = 0;  // ENOENT
  virtual Result<Inode> Lookup(uint64_t parent, const std::string& name) = 0;  // ENOENT
  // Allocates an inode number from the current range. EEXIST if the name is
  // taken, ENOTDIR if parent is not a directory, ENAMETOOLONG. Sets parent's
  // mtime/ctime (and nlink for a new directory).
  virtual Result<Inode> Create(uint64_t parent, const std::string& name,
                               const NewNode& node) = 0;
  // Hard link. EEXIST, EPERM for directories.
  virtual Result<Inode> Link(uint64_t ino, uint64_t new_parent, const std::string& new_name) = 0;
  // ENOENT, EISDIR for a directory. With `purge_now`, a regular file whose
  // last link goes is purged at once where it says so (one commit instead of
  // an orphan mark now and a Purge later).
  virtual Result<Removed> Unlink(uint64_t parent, const std::string& name,
                                 const PurgeNow& purge_now = {}) = 0;
  // ENOENT, ENOTDIR, ENOTEMPTY.
  virtual Status Rmdir(uint64_t parent, const std::string& name) = 0;
  // POSIX rename with RENAME_NOREPLACE / RENAME_EXCHANGE. Returns the inode
  // the rename replaced, if any (its link count dropped by one).
  virtual Result<std::optional<Removed>> Rename(uint64_t parent, const std::string& name,
                                                uint64_t new_parent,
                                                const std::string& new_name,
                                                RenameMode mode) = 0;
  virtual Result<Inode> SetAttr(uint64_t ino, const AttrChange& change) = 0;
  // After a write ending at `end`: size = max(size, end), and mtime = ctime =
  // now when `touch_times` (a writeback-cache mount leaves the times to the
  // kernel, which sends its own with setattr). Clears set-user-ID (and
  // set-group-ID if group-executable) when `kill_suid` as POSIX requires for
  // writes by non-owners.
  virtual Result<Inode> NoteWrite(uint64_t ino, uint64_t end, bool kill_suid,
                                  bool touch_times = true) = 0;
  // A consistent snapshot of the whole directory, in name order. Its size
  // grows with the directory: for tools and tests, not for serving readdir.
  Result<std::vector<DirEntry>> ReadDir(uint64_t ino) {
    return ReadDirAfter(ino, "", SIZE_MAX);
  }
  // Up to `max_entries` entries of directory `ino` whose names sort strictly
  // after `after` (bytewise; "" = from the first), in name order, read from
  // one consistent state. Fewer than `max_entries` means none follow in that
  // state. Resuming after the last name returned never repeats an entry and
  // never skips one that stayed in the directory, whatever changed between
  // calls. ENOENT, ENOTDIR.
  virtual Result<std::vector<DirEntry>> ReadDirAfter(uint64_t ino, const std::string& after,
                                                     size_t max_entries) = 0;

  // --- layouts (blobs encoded by layout/) ---
  virtual Result<std::string> GetLayout(uint64_t ino) = 0;  // ENOENT
  // The layout and the allocation of its objects (Inode::allocated) of
  // `ino`, stored together in one batch; ctime is left alone (the blocks a
  // file occupies change with writes, which set mtime and ctime themselves).
  virtual Status PutLayout(uint64_t ino, const std::string& blob, uint64_t allocated) = 0;

  // --- extended attributes (user.* names, full name as key) ---
  virtual Result<std::string> GetXattr(uint64_t ino, const std::string& name) = 0;  // ENODATA
  virtual Result<std::vector<std::string>> ListXattr(uint64_t ino) = 0;
  // flags: XATTR_CREATE (EEXIST) / XATTR_REPLACE (ENODATA). Sets ctime.
  virtual Status SetXattr(uint64_t ino, const std::string& name, const std::string& value,
                          int flags) = 0;
  virtual Status RemoveXattr(uint64_t ino, const std::string& name) = 0;  // ENODATA

  // --- orphans (unlinked regular files whose objects still exist) ---
  virtual Result<std::vector<uint64_t>> Orphans() = 0;
  // Deletes the inode, its layout, xattrs and orphan mark in one batch.
  virtual Status Purge(uint64_t ino) = 0;

  // --- writing marks: files whose objects may differ from what their inode
  // and layout record (docs/design.md, "Writes in flight"). Set before the
  // first write or preallocation of an open that grows the file or reaches
  // an object not recorded as created; erased once the file has no such op
  // in flight (its last close). A mark left by an unclean stop is settled
  // by the next mount before it serves: objects cut to the file's size,
  // existing ones recorded. Neither call takes the mutation locks' checks:
  // a mark of an inode that is gone is harmless, the mount erases it.
  virtual Status MarkWriting(uint64_t ino, bool writing) = 0;
  virtual Result<std::vector<uint64_t>> Writing() = 0;

  // --- identifiers: handed out from ranges whose high-water mark is
  // persisted (synced) before any id of the range is used, so an id is never
  // reused after a crash. Object ids are global across OSTs.
  virtual Result<uint64_t> AllocateObjectIds(uint32_t count) = 0;  // first of `count`

  // --- quota usage ---
  // Replaces the soft-limit table (ids not in it have none) and the grace
  // periods; records whose grace end the new table contradicts (over a
  // soft limit without a grace end, or not over one with it) are fixed at
  // once in one batch. A grace end already running is kept.
  virtual Status SetSoftLimits(const std::map<QuotaId, SoftLimit>& soft, QuotaGrace grace) = 0;
  // Installs the observer (replacing any), first calling it with every
  // record there is, so the observer misses no change.
  virtual void SetUsageObserver(UsageObserver observer) = 0;
  virtual std::map<QuotaId, QuotaUsage> AllUsage() = 0;
  virtual QuotaUsage GetUsage(const QuotaId& id) = 0;  // zeros if none

  // --- whole-store scans and raw repairs, for stripefs fsck (fsck/fsck.h)
  // on an unmounted store. Each scan reads one consistent state, in key
  // order. A repair is one batch and skips the namespace's checks: the
  // caller keeps the namespace whole. ---
  // Every inode record; one that does not decode comes as its error (EIO).
  virtual Status ScanInodes(const std::function<void(uint64_t ino, const Result<Inode>&)>& fn) = 0;
  // Every directory entry by parent, then name; a value that does not
  // decode comes as its error (EIO).
  virtual Status ScanDirents(
      const std::function<void(uint64_t parent, const std::string& name,
                               const Result<DirEntry>&)>& fn) = 0;
  // Every record kept per inode besides the inode itself (a layout blob, an
  // xattr once per name, an orphan mark), whether or not the inode exists.
  enum class Record { kLayout, kXattr, kOrphanMark };
  virtual Status ScanRecords(Record kind,
                             const std::function<void(uint64_t ino, std::string_view value)>& fn) = 0;
  // The identifier high-water marks as stored: the first inode number and
  // object id never handed out.
  struct IdMarks {
    uint64_t next_ino = 0;
    uint64_t next_obj = 0;
  };
  virtual Result<IdMarks> StoredIdMarks() = 0;
  // Raises the stored marks to at least `marks` (synced); never lowers one.
  virtual Status RaiseIdMarks(const IdMarks& marks) = 0;
  // Writes `inode` as it is (its ctime too).
  virtual Status RepairInode(const Inode& inode) = 0;
  // Puts (entry set) or erases (nullopt) the entry `name` of `parent`.
  virtual Status RepairDirent(uint64_t parent, const std::string& name,
                              const std::optional<DirEntry>& entry) = 0;
  // Sets or clears the orphan mark of `ino`.
  virtual Status RepairOrphanMark(uint64_t ino, bool marked) = 0;
  // Erases every record of `ino` (inode, layout, xattrs, orphan mark).
  virtual Status EraseRecords(uint64_t ino) = 0;
  // Replaces every usage record by `usage` (fsck's recount: ChargesOf over
  // every inode). A grace end already stored is kept (the soft limits are
  // not known without a mount; the next mount's SetSoftLimits corrects
  // it); its bytes and inodes are ignored.
  virtual Status RepairUsage(const std::map<QuotaId, QuotaUsage>& usage) = 0;

  // --- reply records (ReplyRecordScope writes them): a store that keeps
  // none answers ENOTSUP. ---
  virtual Result<std::optional<ReplyRecord>> GetReplyRecord(uint64_t client, uint64_t request) {
    return Status::Error(ENOTSUP, "this store keeps no reply records");
  }
  // Drops the records of `client` below request `below` (all: UINT64_MAX).
  virtual Status DropReplyRecords(uint64_t client, uint64_t below) {
    return Status::Error(ENOTSUP, "this store keeps no reply records");
  }
  // The clients that have records.
  virtual Result<std::vector<uint64_t>> ReplyRecordClients() {
    return Status::Error(ENOTSUP, "this store keeps no reply records");
  }

  // Makes everything written so far durable (syncs the WAL). While the disk
  // is full, fails like a write (ENOSPC) instead of syncing.
  virtual Status Sync() = 0;
};
}  // namespace sfs::meta
