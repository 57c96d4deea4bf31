#include "ost/execute.h"

#include <algorithm>
#include <cstring>

namespace sfs::ost {
namespace {

// Zeroes the iovecs from byte `from` on: the part of a read past the
// object's end, or all of it for a missing object.
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

// The object for a change. A file opened read-only while its filesystem was
// read-only is opened again, in case that filesystem is writable by now;
// if it still is not, the change fails with EROFS in the object file.
Result<std::shared_ptr<ObjectFile>> Writable(IoRequest& r, ObjectCache& objects, bool create) {
  auto file = r.object->Get(create);
  if (!file.ok() || !(*file)->read_only()) return file;
  objects.Forget(r.object->object_id());
  return r.object->Get(create);
}

Outcome Read(IoRequest& r) {
  auto file = r.object->Get(/*create=*/false);
  size_t got = 0;
  if (file.ok()) {
    auto read = (*file)->ReadV(r.iov.data(), static_cast<int>(r.iov.size()), r.info.offset);
    if (!read.ok()) return {read.status(), 0};
    got = *read;
  } else if (file.err() != ENOENT) {
    return {file.status(), 0};
  }
  ZeroFrom(r.iov, got);
  return {Status::Ok(), r.info.length};
}

Outcome Write(IoRequest& r, ObjectCache& objects) {
  auto file = Writable(r, objects, /*create=*/true);
  if (!file.ok()) return {file.status(), 0};
  Status s = (*file)->WriteV(r.iov.data(), static_cast<int>(r.iov.size()), r.info.offset);
  if (!s.ok()) return {s, 0};
  return {Status::Ok(), r.info.length};
}

// Ops on the object file as a whole. Without `create`, a missing object
// means there is nothing to do, which is success.
template <class Fn>
Outcome OnObject(IoRequest& r, ObjectCache& objects, bool create, Fn fn) {
  auto file = Writable(r, objects, create);
  if (!file.ok()) {
    if (!create && file.err() == ENOENT) return {Status::Ok(), 0};
    return {file.status(), 0};
  }
  return {fn(**file), 0};
}

}  // namespace

Outcome Execute(IoRequest& r, ObjectCache& objects) {
  switch (r.info.op) {
    case nrs::Op::kRead:
      return Read(r);
    case nrs::Op::kWrite:
      return Write(r, objects);
    case nrs::Op::kTruncate:
      // Truncating a never-written object to 0 must not create it.
      return OnObject(r, objects, r.truncate_size > 0,
                      [&](ObjectFile& f) { return f.Truncate(r.truncate_size); });
    case nrs::Op::kPunch:
      return OnObject(r, objects, false,
                      [&](ObjectFile& f) { return f.Punch(r.info.offset, r.info.length); });
    case nrs::Op::kAllocate:
      return OnObject(r, objects, true, [&](ObjectFile& f) {
        return f.Allocate(r.info.offset, r.info.length, r.keep_size);
      });
    case nrs::Op::kSync:
      return OnObject(r, objects, false, [&](ObjectFile& f) { return f.Sync(r.data_only); });
    case nrs::Op::kDestroy:
      objects.Forget(r.object->object_id());
      return {objects.backend().Remove(r.object->object_id()), 0};
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
