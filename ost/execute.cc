#include "ost/execute.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>

namespace sfs::ost {

// Past a short read's end, and all of a read of a missing object (from 0).
void ZeroFrom(std::vector<iovec>& iov, size_t from) {
  for (iovec& v : iov) {
    if (from >= v.iov_len) {
      from -= v.iov_len;
      continue;
    }
    std::memset(static_cast<char*>(v.iov_base) + from, 0, v.iov_len - from);
    from = 0;
  }
}

void ReportAllocation(IoRequest& r, ObjectFile& file) {
  if (r.allocation == nullptr) return;
  auto allocated = file.Allocated();
  if (allocated.ok()) r.allocation->store(*allocated, std::memory_order_relaxed);
}

namespace {

// What a missing object means: a hole if it was never created, else data
// that was lost, which must never read as zeros.
Status Missing(const IoRequest& r, const Status& open_status) {
  if (!r.must_exist) return Status::Ok();
  return Status::Error(EIO, fmt::format("object {:#x} of inode {} stripe {} is missing although "
                                        "it was written: lost ({})",
                                        r.object->object_id(), r.ino, r.tag,
                                        open_status.message()));
}

// The object file for a request. Objects the file recorded as created are
// never created again (a lost one stays an error); a change reopens a file
// opened read-only while its filesystem was read-only, in case it is
// writable by now (if not, the change fails with EROFS in the object file).
Result<std::shared_ptr<ObjectFile>> Open(IoRequest& r, ObjectCache& objects, bool change,
                                         bool create) {
  create = create && !r.must_exist;
  auto file = r.object->Get(create);
  if (file.ok() && change && (*file)->read_only()) {
    objects.Forget(r.object->object_id());
    file = r.object->Get(create);
  }
  return file;
}

// A read into r.pipe: spliced where the object file allows it, else copied.
Result<size_t> ObjectToPipe(IoRequest& r, ObjectFile& file) {
  auto moved = file.SpliceTo(r.pipe, r.info.offset, r.info.length);
  if (moved.ok() || moved.err() != ENOTSUP) return moved;
  std::unique_ptr<char[]> copy(new char[r.info.length]);
  const iovec whole{copy.get(), r.info.length};
  auto got = file.ReadV(&whole, 1, r.info.offset);
  if (!got.ok()) return got;
  SFS_RETURN_IF_ERROR(WriteToPipe(r.pipe, copy.get(), *got));
  return got;
}

// Reads into r.pipe when it has one, else into r.iov; either way holes
// past the object's end (all of a never created object) read as zeros.
Outcome Read(IoRequest& r, ObjectCache& objects) {
  auto file = Open(r, objects, /*change=*/false, /*create=*/false);
  size_t got = 0;
  if (file.ok()) {
    auto read = r.pipe >= 0 ? ObjectToPipe(r, **file)
                            : (*file)->ReadV(r.iov.data(), static_cast<int>(r.iov.size()),
                                             r.info.offset);
    if (!read.ok()) return {read.status(), 0};
    got = *read;
  } else if (file.err() != ENOENT) {
    return {file.status(), 0};
  } else if (Status lost = Missing(r, file.status()); !lost.ok()) {
    return {lost, 0};
  }
  if (r.pipe < 0) {
    ZeroFrom(r.iov, got);
    return {Status::Ok(), r.info.length};
  }
  Status zeroed = ZerosToPipe(r.pipe, r.info.length - got);
  return {zeroed, zeroed.ok() ? r.info.length : 0};
}

// Ops on an object: `create` makes a missing object (write, preallocate);
// without it a missing object that was never created is a hole and there
// is nothing to do.
template <class Fn>
Outcome OnObject(IoRequest& r, ObjectCache& objects, bool create, Fn fn) {
  const bool change = nrs::Changes(r.info.op);
  auto file = Open(r, objects, change, create);
  if (!file.ok()) {
    // A create that fails with ENOENT means the OST directory is gone.
    if (file.err() != ENOENT || (create && !r.must_exist)) return {file.status(), 0};
    return {Missing(r, file.status()), 0};
  }
  if (create) r.object_exists = true;
  Outcome outcome = fn(**file);
  if (outcome.status.ok() && change) ReportAllocation(r, **file);
  return outcome;
}

// A truncate or punch (`fn`) that measures what it freed: the object's
// allocation before, less after, with no other free of it in between.
template <class Fn>
Outcome Freeing(IoRequest& r, ObjectCache& objects, FreeTracker* frees, Fn fn) {
  if (frees == nullptr) return OnObject(r, objects, /*create=*/false, fn);
  const uint64_t id = r.object->object_id();
  frees->Begin(id);
  uint64_t before = 0;
  nrs::TimePoint from{};
  Outcome outcome = OnObject(r, objects, /*create=*/false, [&](ObjectFile& f) -> Outcome {
    auto allocated = f.Allocated();
    if (allocated.ok()) before = *allocated;
    from = nrs::Clock::now();
    Outcome done = fn(f);
    if (!done.status.ok() || !allocated.ok()) return done;
    auto after = f.Allocated();
    if (after.ok() && *after < before) done.freed = before - *after;
    return done;
  });
  if (!frees->End(id)) outcome.freed = 0;
  outcome.freed_from = from;
  return outcome;
}

// Removes the object, measuring what it freed as Freeing does: all its
// allocation (nothing holds it open once its file is gone).
Outcome Destroy(IoRequest& r, ObjectCache& objects, FreeTracker* frees) {
  const uint64_t id = r.object->object_id();
  objects.Forget(id);
  if (frees == nullptr) return {objects.backend().Remove(id), 0};
  frees->Begin(id);
  auto before = objects.backend().Allocated(id);
  Outcome outcome;
  outcome.freed_from = nrs::Clock::now();
  outcome.status = objects.backend().Remove(id);
  if (outcome.status.ok() && before.ok()) outcome.freed = *before;
  if (!frees->End(id)) outcome.freed = 0;
  return outcome;
}

Outcome Seek(IoRequest& r, ObjectCache& objects) {
  return OnObject(r, objects, /*create=*/false, [&](ObjectFile& f) -> Outcome {
    auto found = f.Seek(r.info.offset, r.whence);
    if (!found.ok()) return {found.status(), 0};
    r.seek_result = *found;
    return {Status::Ok(), 0};
  });
}

}  // namespace

// Writes all of [data, data+length) into the pipe, which has room for it.
Status WriteToPipe(int pipe_fd, const char* data, size_t length) {
  while (length > 0) {
    ssize_t put = write(pipe_fd, data, length);
    if (put < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read reply pipe");
    }
    data += put;
    length -= static_cast<size_t>(put);
  }
  return Status::Ok();
}

// The zeros of a hole, `length` of them, into the pipe.
Status ZerosToPipe(int pipe_fd, size_t length) {
  static constexpr char kZeros[4096] = {};  // immutable
  while (length > 0) {
    const size_t now = std::min(length, sizeof(kZeros));
    SFS_RETURN_IF_ERROR(WriteToPipe(pipe_fd, kZeros, now));
    length -= now;
  }
  return Status::Ok();
}


void FreeTracker::Begin(uint64_t object_id) {
  std::lock_guard<std::mutex> lock(mu_);
  Active& active = active_[object_id];
  if (++active.count > 1) active.overlapped = true;
}

bool FreeTracker::End(uint64_t object_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = active_.find(object_id);
  const bool alone = !it->second.overlapped;
  if (--it->second.count == 0) active_.erase(it);
  return alone;
}

Outcome Execute(IoRequest& r, ObjectCache& objects, FreeTracker* frees) {
  switch (r.info.op) {
    case nrs::Op::kRead:
      return Read(r, objects);
    case nrs::Op::kWrite:
      return OnObject(r, objects, /*create=*/true, [&](ObjectFile& f) -> Outcome {
        Status s = f.WriteV(r.iov.data(), static_cast<int>(r.iov.size()), r.info.offset);
        return {s, s.ok() ? r.info.length : 0};
      });
    case nrs::Op::kTruncate:
      // An object shorter than its share reads as a hole, so a missing one
      // is never created just to be cut or extended.
      return Freeing(r, objects, frees, [&](ObjectFile& f) -> Outcome {
        return {f.Truncate(r.truncate_size), 0};
      });
    case nrs::Op::kPunch:
      return Freeing(r, objects, frees, [&](ObjectFile& f) -> Outcome {
        return {f.Punch(r.info.offset, r.info.length), 0};
      });
    case nrs::Op::kAllocate:
      return OnObject(r, objects, /*create=*/true, [&](ObjectFile& f) -> Outcome {
        return {f.Allocate(r.info.offset, r.info.length, r.keep_size), 0};
      });
    case nrs::Op::kSync:
      return OnObject(r, objects, /*create=*/false, [&](ObjectFile& f) -> Outcome {
        return {f.Sync(r.data_only), 0};
      });
    case nrs::Op::kSeek:
      return Seek(r, objects);
    case nrs::Op::kDestroy:
      return Destroy(r, objects, frees);
    default:
      break;  // a metadata op: not an OST's
  }
  return {Status::Error(EINVAL, "ost: unknown request op"), 0};
}

int CallerErrno(int backend_errno) {
  switch (backend_errno) {
    case ENOSPC:
    case EDQUOT:
      return ENOSPC;
    case EFBIG:
      return EFBIG;
    case EROFS:
      return EROFS;
    default:
      return EIO;
  }
}

}  // namespace sfs::ost
