// Helpers shared by the FUSE op files. Each op is a Do<Op>() returning a
// Status or Result and a thin adapter that sends exactly one reply
// (libfuse's passthrough_hp.cc pattern). No lock is held while replying.
#pragma once

#include <sys/stat.h>

#include "common/status.h"
#include "fs/filesystem.h"
#include "fs/fuse_api.h"
#include "jobstats/job_stats.h"
#include "meta/meta_store.h"
#include "nrs/request.h"

namespace sfs::fs {

// Reserved extended attributes a directory carries for what is made in it.
inline constexpr const char* kLayoutXattrName = "user.stripefs.layout";
inline constexpr const char* kProjidXattrName = "user.stripefs.projid";

inline Filesystem& Fs(fuse_req_t req) {
  return *static_cast<Filesystem*>(fuse_req_userdata(req));
}

// Who is asking, for OST requests: uid, gid, pid, job id. (Each request's
// arrival is stamped when it is submitted to its OST.)
nrs::RequestInfo Caller(fuse_req_t req, Filesystem& fs);

void FillStat(const meta::Inode& inode, struct stat* st);

// Counts one metadata operation for the caller's job in the metadata
// service's job_stats (target "mdt") when the scope ends: after the reply
// for operations that reply in their handler, after submission for the
// few that reply later (a truncating setattr answers when its OSTs have);
// the job id is taken at the start, while the request is valid. Failed
// operations count too: the work was done.
class MetaJobCount {
 public:
  // A request with no process behind it (pid 0: the kernel's own, e.g. the
  // release of a directory) is not counted.
  MetaJobCount(fuse_req_t req, jobstats::JobOp op);
  // For the job given (a file's close counts for the job that opened it).
  MetaJobCount(Filesystem& fs, std::shared_ptr<const std::string> jobid, jobstats::JobOp op);
  ~MetaJobCount();
  MetaJobCount(const MetaJobCount&) = delete;
  MetaJobCount& operator=(const MetaJobCount&) = delete;

 private:
  Filesystem& fs_;
  const jobstats::JobOp op_;
  std::shared_ptr<const std::string> jobid_;
  const jobstats::TimePoint start_;
};

// Logs a failure in one line (debug for the everyday ENOENT/EEXIST kind,
// warn for bad input, error for I/O failures) and replies with its errno.
void ReplyError(fuse_req_t req, const Status& status, const char* op);

void FillEntry(const meta::Inode& inode, double timeout, fuse_entry_param* entry);
// Both show what an open file has not stored yet (Filesystem::OverlayOpen).
void ReplyEntry(fuse_req_t req, const Result<meta::Inode>& inode, const char* op);
void ReplyAttr(fuse_req_t req, const Result<meta::Inode>& inode, const char* op);

// Creates a node of any type in `parent` for the caller: set-group-ID
// directories pass on their group, regular files get a new layout.
Result<meta::Inode> MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                             dev_t rdev, const char* symlink_target);

// Names over NAME_MAX never reach the store.
Status CheckName(const char* name);

}  // namespace sfs::fs
