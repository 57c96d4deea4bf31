#include "tools/stripefs/quota_cmds.h"

#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "tools/stripefs/cli_util.h"

namespace sfs::cli {
namespace {

constexpr const char* kSetUsage =
    "usage: stripefs setquota -u|-g|-p ID [-b BSOFT] [-B BHARD] [-i ISOFT] [-I IHARD] PATH\n"
    "       stripefs setquota -t [-b BLOCK_GRACE] [-i INODE_GRACE] PATH";
constexpr const char* kQuotaUsage = "usage: stripefs quota [-u|-g|-p ID] [--json] PATH";

// The root of the filesystem PATH lies on: settings live there. Walks up
// while the parent is on the same device.
std::optional<std::string> MountRootOf(const std::string& path, std::string* error) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) {
    *error = path + ": " + strerror(errno);
    return std::nullopt;
  }
  std::string at(resolved);
  free(resolved);
  struct stat here;
  if (stat(at.c_str(), &here) != 0) {
    *error = at + ": " + strerror(errno);
    return std::nullopt;
  }
  if (!S_ISDIR(here.st_mode)) at = at.substr(0, std::max<size_t>(at.rfind('/'), 1));
  while (at != "/") {
    const std::string parent = at.substr(0, std::max<size_t>(at.rfind('/'), 1));
    struct stat up;
    if (stat(parent.c_str(), &up) != 0 || up.st_dev != here.st_dev) break;
    at = parent;
  }
  return at;
}

bool ParseId(const std::string& text, uint32_t* id) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *id);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

// "bsoft=1 bhard=2 ... bgrace=- igrace=-" into its fields.
std::map<std::string, std::string> Fields(const std::string& line) {
  std::map<std::string, std::string> fields;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t end = line.find_first_of(" \n", pos);
    if (end == std::string::npos) end = line.size();
    const std::string word = line.substr(pos, end - pos);
    const size_t eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    pos = end + 1;
  }
  return fields;
}

uint64_t Number(const std::map<std::string, std::string>& fields, const char* name) {
  auto it = fields.find(name);
  if (it == fields.end()) return 0;
  return std::strtoull(it->second.c_str(), nullptr, 10);
}

// Seconds of grace as "6d23h", "expired" or "-".
std::string Grace(const std::string& field) {
  if (field.empty() || field == "-" || field == "expired") return field.empty() ? "-" : field;
  uint64_t left = std::strtoull(field.c_str(), nullptr, 10);
  const uint64_t days = left / 86400, hours = left % 86400 / 3600, minutes = left % 3600 / 60;
  if (days > 0) return fmt::format("{}d{}h", days, hours);
  if (hours > 0) return fmt::format("{}h{}m", hours, minutes);
  return fmt::format("{}m{}s", minutes, left % 60);
}

struct Who {
  char letter;
  uint32_t id;
};

const char* TypeName(char letter) {
  return letter == 'u' ? "user" : letter == 'g' ? "group" : "project";
}

}  // namespace

int SetQuota(const std::vector<std::string>& args) {
  std::optional<Who> who;
  bool grace = false;
  std::map<std::string, std::string> limits;  // name in the setting -> value
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-t") {
      grace = true;
      continue;
    }
    if (arg == "-u" || arg == "-g" || arg == "-p" || arg == "-b" || arg == "-B" || arg == "-i" ||
        arg == "-I") {
      if (i + 1 >= args.size()) return Fail("setquota: " + arg + " wants a value\n" + kSetUsage);
      const std::string& value = args[++i];
      if (arg == "-u" || arg == "-g" || arg == "-p") {
        uint32_t id = 0;
        if (who || !ParseId(value, &id)) {
          return Fail("setquota: one id, a number from 0 to 4294967295, not '" + value + "'\n" +
                      kSetUsage);
        }
        who = Who{arg[1], id};
        continue;
      }
      const std::string name = arg == "-b" ? "bsoft" : arg == "-B" ? "bhard"
                               : arg == "-i" ? "isoft" : "ihard";
      limits[name] = value;
      continue;
    }
    if (int failed = TakeMountpoint("setquota", arg, kSetUsage, &path)) return failed;
  }
  if (path.empty() || grace == who.has_value() || limits.empty()) return Fail(kSetUsage);
  std::string error;
  auto root = MountRootOf(path, &error);
  if (!root) return Fail("setquota: " + error);
  std::string name, value;
  if (grace) {
    if (limits.count("bhard") || limits.count("ihard")) return Fail(kSetUsage);
    name = "quota_grace";
    if (limits.count("bsoft")) value += "bgrace=" + limits["bsoft"] + " ";
    if (limits.count("isoft")) value += "igrace=" + limits["isoft"];
  } else {
    name = fmt::format("quota.{}.{}", who->letter, who->id);
    for (const auto& [limit, amount] : limits) value += limit + "=" + amount + " ";
  }
  const std::string attr = "user.stripefs." + name;
  if (setxattr(root->c_str(), attr.c_str(), value.data(), value.size(), 0) != 0) {
    return Fail(Explain("setquota " + name, errno));
  }
  return 0;
}

int Quota(const std::vector<std::string>& args) {
  std::vector<Who> whos;
  bool json = false;
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "-u" || arg == "-g" || arg == "-p") {
      uint32_t id = 0;
      if (i + 1 >= args.size() || !ParseId(args[i + 1], &id)) {
        return Fail("quota: " + arg + " wants an id, a number from 0 to 4294967295\n" + kQuotaUsage);
      }
      ++i;
      whos.push_back({arg[1], id});
    } else if (int failed = TakeMountpoint("quota", arg, kQuotaUsage, &path)) {
      return failed;
    }
  }
  if (path.empty()) return Fail(kQuotaUsage);
  if (whos.empty()) {
    whos.push_back({'u', static_cast<uint32_t>(getuid())});
    whos.push_back({'g', static_cast<uint32_t>(getgid())});
  }
  std::string error;
  auto root = MountRootOf(path, &error);
  if (!root) return Fail("quota: " + error);
  std::string out = json ? "[" : "";
  for (size_t n = 0; n < whos.size(); ++n) {
    const Who& who = whos[n];
    const std::string name = fmt::format("quota.{}.{}", who.letter, who.id);
    std::string line;
    if (!ReadXattr(*root, "user.stripefs." + name, "quota " + name, &line, &error)) {
      return Fail(error);
    }
    const auto f = Fields(line);
    const uint64_t bused = Number(f, "bused"), iused = Number(f, "iused");
    const uint64_t bsoft = Number(f, "bsoft"), bhard = Number(f, "bhard");
    const uint64_t isoft = Number(f, "isoft"), ihard = Number(f, "ihard");
    const std::string bgrace = f.count("bgrace") ? f.at("bgrace") : "-";
    const std::string igrace = f.count("igrace") ? f.at("igrace") : "-";
    if (json) {
      auto grace_json = [](const std::string& g) {
        if (g == "-") return std::string("null");
        if (g == "expired") return std::string("0");
        return g;
      };
      out += fmt::format(
          "{}{{\"type\":\"{}\",\"id\":{},\"filesystem\":\"{}\","
          "\"bytes\":{{\"used\":{},\"soft\":{},\"hard\":{},\"grace_left\":{}}},"
          "\"inodes\":{{\"used\":{},\"soft\":{},\"hard\":{},\"grace_left\":{}}}}}",
          n ? "," : "", TypeName(who.letter), who.id, *root, bused, bsoft, bhard,
          grace_json(bgrace), iused, isoft, ihard, grace_json(igrace));
      continue;
    }
    // As lfs quota: kilobytes; '*' marks usage above a limit.
    auto over = [](uint64_t used, uint64_t soft, uint64_t hard) {
      return (soft && used > soft) || (hard && used > hard) ? "*" : "";
    };
    out += fmt::format("Disk quotas for {} {}:\n", TypeName(who.letter), who.id);
    out += fmt::format("{:>20} {:>12} {:>10} {:>10} {:>8} {:>10} {:>10} {:>10} {:>8}\n",
                       "Filesystem", "kbytes", "quota", "limit", "grace", "files", "quota",
                       "limit", "grace");
    out += fmt::format("{:>20} {:>12} {:>10} {:>10} {:>8} {:>10} {:>10} {:>10} {:>8}\n", *root,
                       std::to_string((bused + 1023) / 1024) + over(bused, bsoft, bhard),
                       (bsoft + 1023) / 1024, (bhard + 1023) / 1024, Grace(bgrace),
                       std::to_string(iused) + over(iused, isoft, ihard), isoft, ihard,
                       Grace(igrace));
  }
  if (json) out += "]\n";
  fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace sfs::cli
