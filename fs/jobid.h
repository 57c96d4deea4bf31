// The job id of the process behind a request, as Lustre derives it: the
// value of the environment variable named by the `jobid_var` setting
// (default SLURM_JOB_ID), else the `jobid_name` template (default "%e.%u",
// i.e. procname.uid). Special values of jobid_var: "procname_uid" (always
// procname.uid), "nodelocal" (always the jobid_name template) and "disable"
// (no job id). Template codes, as in Lustre: %e executable name, %u uid,
// %g gid, %p pid, %h host name, %H short host name, %j the jobid_var
// variable's value (empty if unset), %% a percent sign.
//
// Reading /proc/<pid>/environ per request would be far too slow, so results
// are cached per pid for kTtl. A pid reused within kTtl may inherit the old
// job id: the same trade-off Lustre's jobid cache makes.
//
// Thread safety: Resolve may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace sfs::fs {

struct JobidConfig {
  std::string var = "SLURM_JOB_ID";
  std::string name = "%e.%u";
  bool operator==(const JobidConfig&) const = default;
};

// True if `var` is an environment variable name ([A-Za-z_][A-Za-z0-9_]*, at
// most 64 bytes) or a special value (procname_uid, nodelocal, disable).
bool ValidJobidVar(const std::string& var);
// False for an unknown %-code, a blank or control character, an empty
// template or one over 64 bytes.
bool ValidJobidName(const std::string& name);

class JobIds {
 public:
  static constexpr size_t kMaxJobidLength = 64;  // longer values are cut
  static constexpr std::chrono::seconds kTtl{30};
  static constexpr size_t kMaxEntries = 65536;

  // `proc_root` is "/proc" except in tests.
  explicit JobIds(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}

  std::shared_ptr<const std::string> Resolve(pid_t pid, uid_t uid, gid_t gid,
                                             const JobidConfig& config);
  // Drops every cached id (after the configuration changes).
  void Clear();

 private:
  std::string Derive(pid_t pid, uid_t uid, gid_t gid, const JobidConfig& config) const;
  std::string Expand(const std::string& name, pid_t pid, uid_t uid, gid_t gid,
                     const std::string& dir, const std::string& var_value) const;

  struct Entry {
    std::shared_ptr<const std::string> jobid;
    std::chrono::steady_clock::time_point expires;
    JobidConfig config;  // the settings it was derived under
  };
  const std::string proc_root_;
  std::mutex mu_;  // guards cache_
  std::unordered_map<pid_t, Entry> cache_;
};

}  // namespace sfs::fs
