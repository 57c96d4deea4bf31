#include "tools/stripefs/cli_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace sfs::cli {

int Fail(const std::string& message) {
  fprintf(stderr, "stripefs: %s\n", message.c_str());
  return 1;
}

std::string Explain(const std::string& what, int err) {
  std::string text = what + ": " + strerror(err);
  switch (err) {
    case EINVAL:
    case ENOENT:
    case EEXIST:
    case ENOSPC:
      return text + " (the stripefs log says why)";
    case EPERM:
      return text +
             " (settings: only root or the mount's admin_uid; layouts: also the owner;"
             " the stripefs log says why)";
    case ENOTEMPTY:
      return text + " (the file holds data: a layout is set on an empty file)";
    case EBUSY:
      return text + " (the file is open: set its layout before using it)";
    case ENOTSUP:
      return text + " (is this on a stripefs mount?)";
    default:
      return text;
  }
}

}  // namespace sfs::cli
