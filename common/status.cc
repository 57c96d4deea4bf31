#include "common/status.h"

#include <cstring>

namespace sfs {

std::string Status::ToString() const {
  if (ok()) return "ok";
  return message_ + " (" + std::strerror(err_) + ")";
}

Status ErrnoStatus(int err, std::string_view context) {
  if (err <= 0) err = EIO;  // a caller that lost errno still reports a failure
  return Status::Error(err, std::string(context));
}

}  // namespace sfs
