#include "fs/jobid.h"

#include <fcntl.h>
#include <unistd.h>

#include <string_view>

#include <cctype>

namespace sfs::fs {
namespace {

// Reads a small /proc file whole; empty on any failure (the process may
// have exited, which is normal for readahead issued on its behalf).
std::string ReadSmallFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string data;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    data.append(buf, static_cast<size_t>(n));
    if (data.size() > (1 << 20)) break;  // environments are far smaller
  }
  close(fd);
  return data;
}

std::string Hostname(bool short_name) {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  std::string host(buf);
  if (short_name) host = host.substr(0, host.find('.'));
  return host;
}

// The value of `var` in a NUL-separated environment block, or "".
std::string EnvValue(std::string_view environ, const std::string& var) {
  const std::string prefix = var + "=";
  while (!environ.empty()) {
    size_t end = environ.find('\0');
    std::string_view entry = environ.substr(0, end);
    if (entry.substr(0, prefix.size()) == prefix) return std::string(entry.substr(prefix.size()));
    if (end == std::string_view::npos) break;
    environ.remove_prefix(end + 1);
  }
  return {};
}

}  // namespace

bool ValidJobidVar(const std::string& var) {
  // An environment variable name as POSIX shells take it, [A-Za-z_][A-Za-z0-9_]*
  // (ASCII: isalnum would follow the locale). The special values
  // procname_uid, nodelocal and disable are such names too.
  if (var.empty() || var.size() > 64) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(var[0])) return false;
  for (char c : var) {
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool ValidJobidName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (size_t i = 0; i < name.size(); i++) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (std::isspace(c) || std::iscntrl(c)) return false;
    if (c != '%') continue;
    if (i + 1 >= name.size()) return false;
    if (std::string_view("eugphHj%").find(name[++i]) == std::string_view::npos) return false;
  }
  return true;
}

std::shared_ptr<const std::string> JobIds::Resolve(pid_t pid, uid_t uid, gid_t gid,
                                                   const JobidConfig& config) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(pid);
    if (it != cache_.end() && it->second.expires > now && it->second.config == config) {
      return it->second.jobid;
    }
  }
  // Derived outside the lock: reading /proc is the slow part. Every class
  // and statistics label copies the job id, so a runaway one is cut (Lustre
  // keeps 32 bytes): a variable's value, and a template's expansion too (a
  // 64-byte template of %e and %h codes expands to far more).
  std::string derived = Derive(pid, uid, gid, config);
  if (derived.size() > kMaxJobidLength) derived.resize(kMaxJobidLength);
  auto jobid = std::make_shared<const std::string>(std::move(derived));
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kMaxEntries) cache_.clear();
  cache_[pid] = Entry{jobid, now + kTtl, config};
  return jobid;
}

void JobIds::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  cache_.clear();
}

std::string JobIds::Derive(pid_t pid, uid_t uid, gid_t gid, const JobidConfig& config) const {
  if (config.var == "disable") return {};
  const std::string dir = proc_root_ + "/" + std::to_string(pid);
  if (config.var == "procname_uid") return Expand("%e.%u", pid, uid, gid, dir, {});
  std::string value;
  if (config.var != "nodelocal") {
    value = EnvValue(ReadSmallFile(dir + "/environ"), config.var);
    if (value.size() > kMaxJobidLength) value.resize(kMaxJobidLength);  // also as %j
    if (!value.empty()) return value;
  }
  return Expand(config.name, pid, uid, gid, dir, value);
}

std::string JobIds::Expand(const std::string& name, pid_t pid, uid_t uid, gid_t gid,
                           const std::string& dir, const std::string& var_value) const {
  std::string out;
  for (size_t i = 0; i < name.size(); i++) {
    if (name[i] != '%' || i + 1 >= name.size()) {
      out += name[i];
      continue;
    }
    switch (name[++i]) {
      case 'e': {
        std::string comm = ReadSmallFile(dir + "/comm");
        while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
        out += comm.empty() ? "unknown" : comm;
        break;
      }
      case 'u': out += std::to_string(uid); break;
      case 'g': out += std::to_string(gid); break;
      case 'p': out += std::to_string(pid); break;
      case 'h': out += Hostname(false); break;
      case 'H': out += Hostname(true); break;
      case 'j': out += var_value; break;
      default: out += name[i]; break;  // "%%" and anything ValidJobidName let through
    }
  }
  return out;
}

}  // namespace sfs::fs
