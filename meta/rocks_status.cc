#include "meta/rocks_status.h"

#include <string>

namespace sfs::meta {
namespace {

int ErrnoOf(const rocksdb::Status& s) {
  if (s.IsNotFound()) return ENOENT;
  // Some Env implementations report a full disk as a plain IOError carrying
  // strerror(ENOSPC) instead of the NoSpace subcode.
  if (s.IsNoSpace()) return ENOSPC;
  if (s.IsIOError() && s.ToString().find("No space") != std::string::npos) return ENOSPC;
  if (s.IsCorruption()) return EIO;
  if (s.IsInvalidArgument()) return EINVAL;
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) return EAGAIN;
  return EIO;
}

}  // namespace

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::Ok();
  std::string message(context);
  message += ": ";
  message += s.ToString();
  return Status::Error(ErrnoOf(s), std::move(message));
}

}  // namespace sfs::meta
