#include "tools/stripefs/layout_cmds.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "tools/stripefs/cli_util.h"

namespace sfs::cli {
namespace {

constexpr const char* kLayout = "user.stripefs.layout";

// The attribute's value, or nullopt-like empty with errno set.
bool GetXattr(const std::string& path, const std::string& name, std::string* value) {
  value->assign(64 * 1024, '\0');
  const ssize_t n = getxattr(path.c_str(), name.c_str(), value->data(), value->size());
  if (n < 0) return false;
  value->resize(static_cast<size_t>(n));
  return true;
}

}  // namespace

int SetStripe(const std::vector<std::string>& args) {
  std::string spec, path;
  for (size_t i = 0; i < args.size(); i++) {
    const std::string& arg = args[i];
    auto next = [&]() -> const std::string* { return i + 1 < args.size() ? &args[++i] : nullptr; };
    const char* key = arg == "-c" || arg == "--stripe-count"  ? "stripe_count"
                      : arg == "-S" || arg == "--stripe-size" ? "stripe_size"
                      : arg == "-p" || arg == "--pool"        ? "pool"
                      : arg == "-o" || arg == "--ost"         ? "osts"
                                                              : nullptr;
    if (key != nullptr) {
      const std::string* value = next();
      if (value == nullptr) return Fail("missing value after " + arg);
      spec += (spec.empty() ? "" : " ") + std::string(key) + "=" + *value;
    } else if (path.empty() && !arg.empty() && arg[0] != '-') {
      path = arg;
    } else {
      return Fail("usage: stripefs setstripe [-c COUNT] [-S SIZE] [-p POOL] [-o OST,...] PATH");
    }
  }
  if (path.empty()) return Fail("setstripe needs a PATH");
  struct stat st;
  bool created = false;
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Fail(Explain(path, errno));
    // mknod, not open+close: a close returns before the filesystem has seen
    // the release, so the file could still count as open (EBUSY) when the
    // layout arrives.
    if (mknod(path.c_str(), S_IFREG | 0666, 0) != 0) return Fail(Explain("create " + path, errno));
    if (stat(path.c_str(), &st) != 0) return Fail(Explain(path, errno));
    created = true;
  }
  if (setxattr(path.c_str(), kLayout, spec.data(), spec.size(), 0) != 0) {
    const int err = errno;
    // Do not leave an empty file with the wrong layout behind, but only if
    // the name still is that same empty file: someone may have taken over.
    struct stat now;
    if (created && stat(path.c_str(), &now) == 0 && now.st_ino == st.st_ino &&
        now.st_dev == st.st_dev && now.st_size == 0) {
      unlink(path.c_str());
    }
    return Fail(Explain("setstripe " + path, err));
  }
  return 0;
}

int GetStripe(const std::vector<std::string>& args) {
  if (args.empty()) return Fail("usage: stripefs getstripe PATH...");
  int rc = 0;
  for (const std::string& path : args) {
    std::string value;
    if (!GetXattr(path, kLayout, &value)) {
      if (errno == ENODATA) {
        printf("%s\n  (no layout of its own: the filesystem default applies)\n", path.c_str());
        continue;
      }
      rc = Fail(Explain("getstripe " + path, errno));
      continue;
    }
    // "stripe_count=2 stripe_size=1048576 pool=fast stripe0=ost1:0x1f ..."
    printf("%s\n", path.c_str());
    std::istringstream words(value);
    std::string word;
    bool header = false;
    while (words >> word) {
      if (word.rfind("stripe", 0) == 0 && word.find("=ost") != std::string::npos) {
        if (!header) printf("  %-8s %-6s %s\n", "stripe", "ost", "object");
        header = true;
        const size_t eq = word.find('='), colon = word.find(':');
        printf("  %-8s %-6s %s\n", word.substr(6, eq - 6).c_str(),
               word.substr(eq + 4, colon - eq - 4).c_str(), word.substr(colon + 1).c_str());
      } else {
        printf("  %s\n", word.c_str());
      }
    }
  }
  return rc;
}

int Pool(const std::vector<std::string>& args) {
  const char* usage =
      "usage: stripefs pool list MOUNTPOINT | pool set MOUNTPOINT NAME OSTS (e.g. 0,2-3) | "
      "pool remove MOUNTPOINT NAME";
  if (args.size() < 2) return Fail(usage);
  const std::string& verb = args[0];
  const std::string& mnt = args[1];
  if (verb == "list" && args.size() == 2) {
    std::string pools, rules, weights;
    if (!GetXattr(mnt, "user.stripefs.pools", &pools)) return Fail(Explain("pool list", errno));
    GetXattr(mnt, "user.stripefs.pool_rules", &rules);
    GetXattr(mnt, "user.stripefs.rtds_weight", &weights);
    printf("pools:\n%s", pools.empty() ? "  (none: new files use every OST)\n" : "");
    std::istringstream lines(pools);
    for (std::string line; std::getline(lines, line);) printf("  %s\n", line.c_str());
    printf("rules (first match wins):\n%s", rules.empty() ? "  (none)\n" : "");
    std::istringstream rule_lines(rules);
    for (std::string line; std::getline(rule_lines, line);) printf("  %s\n", line.c_str());
    printf("weights: %s\n", weights.c_str());
    return 0;
  }
  if (verb == "set" && args.size() == 4) {
    const std::string name = "user.stripefs.pool." + args[2];
    const std::string value = "osts=" + args[3];
    if (setxattr(mnt.c_str(), name.c_str(), value.data(), value.size(), 0) != 0) {
      return Fail(Explain("pool set " + args[2], errno));
    }
    return 0;
  }
  if (verb == "remove" && args.size() == 3) {
    const std::string name = "user.stripefs.pool." + args[2];
    if (removexattr(mnt.c_str(), name.c_str()) != 0)
      return Fail(Explain("pool remove " + args[2], errno));
    return 0;
  }
  return Fail(usage);
}

}  // namespace sfs::cli
