#include "tools/stripefs/cli_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <sys/xattr.h>

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
    case EDQUOT:
      return text + " (over a quota: stripefs quota PATH shows usage and limits)";
    case ENOTSUP:
      return text + " (is this on a stripefs mount?)";
    default:
      return text;
  }
}

bool ReadXattr(const std::string& path, const std::string& name, const std::string& what,
               std::string* value, std::string* error) {
  for (int attempt = 0; attempt < 5; attempt++) {
    const ssize_t size = getxattr(path.c_str(), name.c_str(), nullptr, 0);
    if (size < 0) {
      *error = Explain(what, errno);
      return false;
    }
    value->resize(static_cast<size_t>(size) + 4096);
    const ssize_t got = getxattr(path.c_str(), name.c_str(), value->data(), value->size());
    if (got >= 0) {
      value->resize(static_cast<size_t>(got));
      return true;
    }
    if (errno != ERANGE) {
      *error = Explain(what, errno);
      return false;
    }
  }
  *error = what + ": the value keeps growing";
  return false;
}

int TakeMountpoint(const std::string& command, const std::string& arg, const char* usage,
                   std::string* mountpoint) {
  if (!arg.empty() && arg[0] == '-') {
    return Fail(command + ": unknown option " + arg + "\n" + usage);
  }
  if (!mountpoint->empty()) return Fail(usage);
  *mountpoint = arg;
  return 0;
}

int ReadSetting(const std::string& command, const std::string& mountpoint,
                const std::string& name, const char* usage, std::string* value) {
  if (mountpoint.empty()) return Fail(usage);
  std::string error;
  if (!ReadXattr(mountpoint, "user.stripefs." + name, command + " " + mountpoint, value, &error)) {
    return Fail(error);
  }
  return 0;
}

}  // namespace sfs::cli
