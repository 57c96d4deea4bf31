// Internal to ost/: running one IoRequest against its object, and the single
// place where backend errors are turned into what a caller may see.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "ost/backend.h"
#include "ost/object_cache.h"
#include "ost/service.h"

namespace sfs::ost {

struct Outcome {
  Status status;     // the backend's own error, unmapped
  size_t bytes = 0;  // moved by a read or write
};

// Runs `request` (info.op) on request.object. Reads of a never created
// object or past an object's end are zero-filled holes; sync, punch,
// truncate and seek of a never created object succeed, since there is
// nothing to do. An object the file recorded as created (must_exist) that
// is missing was lost: EIO, whatever the op, and nothing recreates it.
// Changes report the object's allocation (request.allocation).
// REQUIRES: request.object is set and opens its object through `objects`.
Outcome Execute(IoRequest& request, ObjectCache& objects);

// The errno a caller sees for a backend errno: running out of space (or
// quota, which an OST cannot attribute to a user) stays ENOSPC; an object
// offset past what the OST's filesystem allows stays EFBIG (the caller asked
// for it); a change to an OST whose filesystem is read-only stays EROFS;
// everything else is the OST failing, EIO. The original errno goes
// to the log.
int CallerErrno(int backend_errno);

}  // namespace sfs::ost
