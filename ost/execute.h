// Internal to ost/: running one IoRequest against its object, and the single
// place where backend errors are turned into what a caller may see.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "ost/backend.h"
#include "ost/object_cache.h"
#include "ost/service.h"

namespace sfs::ost {

struct Outcome {
  Status status;     // the backend's own error, unmapped
  size_t bytes = 0;  // moved by a read or write
  // What a truncate, punch or destroy freed on the disk (the object's
  // allocation before it less after; 0 when it failed, or overlapped
  // another free of the object), and when it began (before its system call).
  uint64_t freed = 0;
  nrs::TimePoint freed_from{};
};

// The frees (truncate, punch, destroy) of one OST in progress, per object.
// Two at once on one object each see the other's blocks go between their
// own before and after, so neither may be credited: the estimate of free
// space must never be high (resource/free_space.h). Thread-safe; mu_ is a
// leaf held only around the map.
class FreeTracker {
 public:
  void Begin(uint64_t object_id);
  // True if the free of `object_id` ran alone (no other began or ended
  // on it meanwhile).
  bool End(uint64_t object_id);

 private:
  struct Active {
    int count = 0;
    bool overlapped = false;  // two were in progress at some time
  };
  std::mutex mu_;
  std::unordered_map<uint64_t, Active> active_;  // GUARDED_BY(mu_)
};

// Runs `request` (info.op) on request.object. Reads of a never created
// object or past an object's end are zero-filled holes; sync, punch,
// truncate and seek of a never created object succeed, since there is
// nothing to do. An object the file recorded as created (must_exist) that
// is missing was lost: EIO, whatever the op, and nothing recreates it.
// Changes report the object's allocation (request.allocation); with
// `frees`, truncates, punches and destroys measure what they freed
// (Outcome::freed). Writes and preallocations set request.object_exists.
// REQUIRES: request.object is set and opens its object through `objects`.
Outcome Execute(IoRequest& request, ObjectCache& objects, FreeTracker* frees = nullptr);

// Writes all of [data, data+length) into the pipe, which has room for it
// (a read's reply pipe, ost::IoRequest::pipe).
Status WriteToPipe(int pipe_fd, const char* data, size_t length);
// The zeros of a hole, `length` of them, into the pipe.
Status ZerosToPipe(int pipe_fd, size_t length);

// Zeroes the iovecs from byte `from` on: the part of a read past the
// object's end (a read returns short only there).
void ZeroFrom(std::vector<iovec>& iov, size_t from);

// After a change: the object's allocation, where the caller wants it
// (request.allocation).
void ReportAllocation(IoRequest& request, ObjectFile& file);

// The errno a caller sees for a backend errno: running out of space (or
// quota, which an OST cannot attribute to a user) stays ENOSPC; an object
// offset past what the OST's filesystem allows stays EFBIG (the caller asked
// for it); a change to an OST whose filesystem is read-only stays EROFS;
// everything else is the OST failing, EIO. The original errno goes
// to the log.
int CallerErrno(int backend_errno);

}  // namespace sfs::ost
