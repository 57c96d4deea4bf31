#include "tools/stripefs/params.h"

#include <sys/xattr.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "tools/stripefs/cli_util.h"

namespace sfs::cli {
namespace {

constexpr const char* kPrefix = "user.stripefs.";

int OstAdd(const std::string& mountpoint, const std::string& dir) {
  // The daemon runs in "/" and takes no symlink: it is given the path as
  // this shell means it, absolute and resolved.
  // An OSS's directory (oss://ADDRESS:PORT/DIR) goes as it is written.
  std::error_code ec;
  std::string path =
      dir.rfind("oss://", 0) == 0
          ? dir
          : std::filesystem::weakly_canonical(std::filesystem::absolute(dir, ec), ec).string();
  if (ec) return Fail("ost add: " + dir + ": " + ec.message());
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const std::string name = std::string(kPrefix) + "ost_add";
  if (setxattr(mountpoint.c_str(), name.c_str(), path.data(), path.size(), 0) != 0) {
    return Fail(Explain("ost add " + path, errno));
  }
  // Its row of ost_df ("ost4 size=... path=/data/ost4") names its index.
  std::string df, error;
  if (!ReadXattr(mountpoint, std::string(kPrefix) + "ost_df", "ost add", &df, &error)) {
    return Fail(error);
  }
  std::string index = "?";
  const std::string tail = " path=" + path;
  for (size_t at = 0; at < df.size();) {
    size_t end = df.find('\n', at);
    if (end == std::string::npos) end = df.size();
    const std::string line = df.substr(at, end - at);
    if (line.size() >= tail.size() && line.compare(line.size() - tail.size(), tail.size(), tail) == 0) {
      index = line.substr(3, line.find(' ') - 3);  // after "ost"
    }
    at = end + 1;
  }
  printf("OST %s added at %s (weight 1, in no pool)\n", index.c_str(), path.c_str());
  return 0;
}

}  // namespace

int SetParam(const std::vector<std::string>& args) {
  if (args.size() < 2) return Fail("usage: stripefs set_param MOUNTPOINT name=value [...]");
  const std::string& mountpoint = args[0];
  for (size_t i = 1; i < args.size(); i++) {
    const size_t eq = args[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail("set_param wants name=value, not '" + args[i] + "'");
    }
    const std::string name = kPrefix + args[i].substr(0, eq);
    const std::string value = args[i].substr(eq + 1);
    if (setxattr(mountpoint.c_str(), name.c_str(), value.data(), value.size(), 0) != 0) {
      return Fail(Explain("set_param " + args[i].substr(0, eq), errno));
    }
  }
  return 0;
}

int GetParam(const std::vector<std::string>& args) {
  if (args.size() < 2) return Fail("usage: stripefs get_param MOUNTPOINT name [...]");
  const std::string& mountpoint = args[0];
  for (size_t i = 1; i < args.size(); i++) {
    const std::string name = kPrefix + args[i];
    std::string value, error;
    if (!ReadXattr(mountpoint, name, "get_param " + args[i], &value, &error)) return Fail(error);
    // lctl's form: one-line values after '=', longer ones below the name.
    const bool multiline =
        value.find('\n') != std::string::npos && value.find('\n') + 1 < value.size();
    if (multiline) {
      printf("%s=\n%s%s", args[i].c_str(), value.c_str(), value.back() == '\n' ? "" : "\n");
    } else {
      while (!value.empty() && value.back() == '\n') value.pop_back();
      printf("%s=%s\n", args[i].c_str(), value.c_str());
    }
  }
  return 0;
}

int Ost(const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "usage: stripefs ost add MOUNTPOINT PATH | ost deactivate|activate MOUNTPOINT N";
  if (args.size() == 3 && args[0] == "add") return OstAdd(args[1], args[2]);
  if (args.size() != 3 || (args[0] != "deactivate" && args[0] != "activate")) return Fail(kUsage);
  const std::string& index = args[2];
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) {
    return Fail("ost " + args[0] + ": an OST is a number, not '" + index + "'");
  }
  const std::string name = std::string(kPrefix) + "ost" + index + ".active";
  const std::string value = args[0] == "activate" ? "1" : "0";
  if (setxattr(args[1].c_str(), name.c_str(), value.data(), value.size(), 0) != 0) {
    return Fail(Explain("ost " + args[0] + " " + index, errno));
  }
  return 0;
}

}  // namespace sfs::cli
