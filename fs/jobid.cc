#include "fs/jobid.h"

#include <fcntl.h>
#include <unistd.h>

#include <string_view>

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

}  // namespace

std::shared_ptr<const std::string> JobIds::Resolve(pid_t pid, uid_t uid,
                                                   const std::string& jobid_var) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(pid);
    if (it != cache_.end() && it->second.expires > now && it->second.jobid_var == jobid_var) {
      return it->second.jobid;
    }
  }
  // Derived outside the lock: reading /proc is the slow part.
  auto jobid = std::make_shared<const std::string>(Derive(pid, uid, jobid_var));
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kMaxEntries) cache_.clear();
  cache_[pid] = Entry{jobid, now + kTtl, jobid_var};
  return jobid;
}

void JobIds::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  cache_.clear();
}

std::string JobIds::Derive(pid_t pid, uid_t uid, const std::string& jobid_var) const {
  if (jobid_var == "disable") return {};
  const std::string dir = proc_root_ + "/" + std::to_string(pid);
  if (jobid_var != "procname_uid") {
    const std::string environ = ReadSmallFile(dir + "/environ");
    const std::string prefix = jobid_var + "=";
    std::string_view rest(environ);
    while (!rest.empty()) {
      size_t end = rest.find('\0');
      std::string_view var = rest.substr(0, end);
      if (var.substr(0, prefix.size()) == prefix && var.size() > prefix.size()) {
        return std::string(var.substr(prefix.size()));
      }
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
  std::string comm = ReadSmallFile(dir + "/comm");
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
  if (comm.empty()) comm = "unknown";
  return comm + "." + std::to_string(uid);
}

}  // namespace sfs::fs
