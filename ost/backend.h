// Object storage behind an Env-like interface (LevelDB's Env): a POSIX
// implementation over one OST directory, an in-memory one for unit tests, and
// a fault-injecting wrapper for failure tests.
//
// Thread safety: Backend and ObjectFile implementations are safe to call
// from any number of threads at once (positional I/O only, no shared offset).
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace sfs::ost {

class ObjectFile {
 public:
  ObjectFile() = default;
  ObjectFile(const ObjectFile&) = delete;
  ObjectFile& operator=(const ObjectFile&) = delete;
  virtual ~ObjectFile() = default;

  // Reads up to the iovecs' total at `offset`; returns bytes read, which is
  // short only at the object's end (the caller zero-fills holes past it).
  virtual Result<size_t> ReadV(const iovec* iov, int count, uint64_t offset) = 0;
  // Moves up to `length` bytes at `offset` into a pipe (`pipe_fd`, its
  // write end) without copying them through user space (splice(2)): the
  // pipe holds references to the file's cached pages. Returns the bytes
  // moved, short only at the object's end. The pipe must have room for
  // `length`; it is never waited on. ENOTSUP where the object is not a
  // file that can be spliced (the caller copies through ReadV instead).
  virtual Result<size_t> SpliceTo(int pipe_fd, uint64_t offset, size_t length) {
    return Status::Error(ENOTSUP, "object cannot be spliced");
  }
  // Writes all of the iovecs at `offset` or fails (ENOSPC, EIO, ...).
  virtual Status WriteV(const iovec* iov, int count, uint64_t offset) = 0;
  virtual Status Sync(bool data_only) = 0;
  virtual Status Truncate(uint64_t size) = 0;
  // Deallocates [offset, offset+length); reads of it return zeros after.
  virtual Status Punch(uint64_t offset, uint64_t length) = 0;
  // Preallocates; extends the object size unless keep_size.
  virtual Status Allocate(uint64_t offset, uint64_t length, bool keep_size) = 0;
  virtual Result<uint64_t> Size() = 0;
  // Bytes the object occupies on its disk (st_blocks x 512).
  virtual Result<uint64_t> Allocated() = 0;
  // lseek(SEEK_DATA or SEEK_HOLE) from `offset`: the offset found, or
  // nullopt where the system says ENXIO (no data from there on; for
  // SEEK_HOLE, `offset` is at or past the end, itself a hole).
  virtual Result<std::optional<uint64_t>> Seek(uint64_t offset, int whence) = 0;
  // Opened for reading only, because its filesystem is read-only: every
  // change fails with EROFS.
  virtual bool read_only() const { return false; }
  // The file descriptor a read may be started on without this object (an
  // asynchronous read on an io_uring: Service::SubmitOrStart), valid while
  // the object is held; -1 where there is none (such objects are read by
  // ReadV only). A read of it returns short only at the object's end.
  virtual int NativeFd() const { return -1; }
};

// What SpaceInfo::max_object_size says when no limit is known.
inline constexpr uint64_t kNoObjectLimit = UINT64_MAX;

struct SpaceInfo {
  uint64_t block_size = 4096;
  uint64_t total_blocks = 0;
  uint64_t free_blocks = 0;   // root's view
  uint64_t avail_blocks = 0;  // unprivileged view
  uint64_t total_files = 0;
  uint64_t free_files = 0;
  // The OST's filesystem is mounted read-only; free and avail are then 0, as
  // nothing can be written there.
  bool read_only = false;
  // Which filesystem holds the OST (st_dev of its directory), so that OSTs
  // sharing one disk count its space once; 0 = not known, counted alone.
  uint64_t device = 0;
  // The largest size an object file can have on this filesystem (its
  // s_maxbytes: 16 TiB - 4 KiB on ext4 with 4 KiB blocks, 2^63-1 on XFS and
  // tmpfs); a file's largest size follows from its layout and these
  // (layout::MaxFileSize). kNoObjectLimit until the backend could find out.
  uint64_t max_object_size = kNoObjectLimit;
};

// An object as fsck sees it: its id and its size in bytes.
struct StoredObject {
  uint64_t id = 0;
  uint64_t size = 0;
};

struct ObjectListing {
  std::vector<StoredObject> objects;  // in no particular order
  // Paths (relative to the OST directory) of entries under objects/ that are
  // not objects stripefs wrote: a wrong name, fan-out or file type.
  std::vector<std::string> strangers;
};

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend() = default;

  // Opens object `id`. With create=false a missing object is ENOENT (the
  // caller treats it as a hole); with create=true it is created empty. On a
  // read-only filesystem an existing object opens read-only (read_only())
  // and creating one is EROFS.
  virtual Result<std::unique_ptr<ObjectFile>> Open(uint64_t id, bool create) = 0;
  // Removes the object; a missing object is not an error.
  virtual Status Remove(uint64_t id) = 0;
  // Bytes object `id` occupies on its disk (ObjectFile::Allocated), without
  // keeping it open; ENOENT if it is missing.
  virtual Result<uint64_t> Allocated(uint64_t id) {
    auto file = Open(id, /*create=*/false);
    if (!file.ok()) return file.status();
    return (*file)->Allocated();
  }
  virtual Result<SpaceInfo> Space() = 0;
  // Every object the OST holds, for stripefs fsck on an unmounted
  // filesystem (a listing taken while objects come and go is not a
  // snapshot). ENOTSUP where the backend cannot list.
  virtual Result<ObjectListing> ListObjects() {
    return Status::Error(ENOTSUP, "ost: this backend cannot list its objects");
  }
  // False while the backend cannot serve at all (an OST directory that has
  // not answered since the mount, ost/late_backend.h): the service counts
  // it as unresponsive.
  virtual bool Available() const { return true; }
  // For log lines: the directory, or "mem".
  virtual std::string Describe() const = 0;
};

// Objects live under `dir`/objects/XX/<id in hex>, XX being the low byte of
// the id, so no directory grows past 1/256 of the objects. `dir` is opened
// once with O_DIRECTORY and every access is an *at() call relative to it.
// ENOENT/ENOTDIR if `dir` is not an existing directory.
Result<std::unique_ptr<Backend>> NewPosixBackend(const std::string& dir);

// The largest size a file in the directory open as `dir_fd` can be given
// (ftruncate of a scratch file, removed again; binary search below
// 2^63-1). The filesystem's own error if the file cannot be made (EROFS).
Result<uint64_t> ProbeMaxObjectSize(int dir_fd);

// Plain memory; for unit tests.
std::unique_ptr<Backend> NewMemBackend(uint64_t capacity_bytes = 1ull << 30);

// Wraps another backend; while a fault is set, every call of that kind fails
// with the given errno. Returned handle is shared so tests keep control.
class FaultInjector {
 public:
  virtual ~FaultInjector() = default;
  virtual void FailWrites(int err) = 0;  // 0 clears
  virtual void FailReads(int err) = 0;
  virtual void FailOpens(int err) = 0;
  virtual void FailSyncs(int err) = 0;
  // While set, every call waits (a stopped disk); clearing it lets them go.
  virtual void Hang(bool hang) = 0;
  // How many calls are waiting in Hang now.
  virtual size_t Hung() const = 0;
};
std::unique_ptr<Backend> NewFaultBackend(std::unique_ptr<Backend> inner,
                                         std::shared_ptr<FaultInjector>* control);

}  // namespace sfs::ost
