// The job id of the process behind a request, as Lustre derives it: the
// value of the environment variable named by the `jobid_var` setting
// (default SLURM_JOB_ID), else "procname.uid". Special values of jobid_var:
// "procname_uid" (always procname.uid) and "disable" (no job id).
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

class JobIds {
 public:
  static constexpr std::chrono::seconds kTtl{30};
  static constexpr size_t kMaxEntries = 65536;

  // `proc_root` is "/proc" except in tests.
  explicit JobIds(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}

  std::shared_ptr<const std::string> Resolve(pid_t pid, uid_t uid, const std::string& jobid_var);
  // Drops every cached id (after jobid_var changes).
  void Clear();

 private:
  std::string Derive(pid_t pid, uid_t uid, const std::string& jobid_var) const;

  struct Entry {
    std::shared_ptr<const std::string> jobid;
    std::chrono::steady_clock::time_point expires;
    std::string jobid_var;  // the setting it was derived under
  };
  const std::string proc_root_;
  std::mutex mu_;  // guards cache_
  std::unordered_map<pid_t, Entry> cache_;
};

}  // namespace sfs::fs
