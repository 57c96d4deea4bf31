// Helpers shared by the FUSE op files. Each op is a Do<Op>() returning a
// Status or Result and a thin adapter that sends exactly one reply
// (libfuse's passthrough_hp.cc pattern). No lock is held while replying.
#pragma once

#include <sys/stat.h>

#include "common/status.h"
#include "fs/filesystem.h"
#include "fs/fuse_api.h"
#include <memory>
#include <utility>

#include "jobstats/job_stats.h"
#include "mdt/service.h"
#include "meta/meta_store.h"
#include "nrs/request.h"

namespace sfs::fs {

// Reserved extended attributes a directory carries for what is made in it.
inline constexpr const char* kLayoutXattrName = "user.stripefs.layout";

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

// A metadata operation on its way through the metadata service (below),
// classified as `op` on inode `ino` with the caller's uid, gid and job id.
template <class Body>
class FuseMdRequest final : public mdt::MdRequest {
 public:
  FuseMdRequest(fuse_req_t req, Filesystem& fs, nrs::Op op, jobstats::JobOp job_op, uint64_t ino,
                Body body)
      : fs_(fs),
        job_op_(job_op),
        counted_(fuse_req_ctx(req)->pid != 0),
        body_(std::move(body)) {
    info = Caller(req, fs);
    info.op = op;
    info.object_id = ino;
    // info.arrival: stamped by the metadata service (one clock read for
    // arrival and enqueue) or, unscheduled, by ThroughMdt.
    fs_.OpStarted();
  }
  // From the stack to the heap when the service cannot serve it at once.
  // Only for a request not yet scheduled (its scheduler state is unset);
  // still one operation (OpStarted is not counted again).
  FuseMdRequest(FuseMdRequest&& unscheduled)
      : fs_(unscheduled.fs_),
        job_op_(unscheduled.job_op_),
        counted_(unscheduled.counted_),
        body_(std::move(unscheduled.body_)) {
    info = std::move(unscheduled.info);
  }
  void Serve() override {
    body_();
    // Counted from arrival, so the time a policy held it shows in job_stats.
    if (counted_ && info.jobid != nullptr) {
      const jobstats::TimePoint now = jobstats::Clock::now();
      fs_.meta_job_stats().Record(*info.jobid, job_op_, 0, now - info.arrival, now);
    }
    fs_.OpFinished();
  }

 private:
  Filesystem& fs_;
  const jobstats::JobOp job_op_;
  const bool counted_;  // a request with a process behind it (see MetaJobCount)
  Body body_;
};

// Runs a metadata operation through the metadata service's NRS heads
// (mdt/service.h), classified as `op` on inode `ino` with the caller's
// uid, gid and job id: at once on this thread when its policy allows (as
// under fifo), else later on another thread, after this returns. So `body`
// owns copies of what it uses (names, struct stat, fuse_file_info) except
// `req`, which stays valid until replied to, and it sends the one reply.
// It is counted in job_stats as MetaJobCount counts, from its arrival.
// Served at once (fifo, or mounted with mdt_nrs=off, or `scheduled`
// false: unscheduled), the request lives on this thread's stack; only one
// a policy queues goes to the heap.
template <class Body>
void ThroughMdt(fuse_req_t req, nrs::Op op, jobstats::JobOp job_op, uint64_t ino, Body body,
                bool scheduled = true) {
  Filesystem& fs = Fs(req);
  FuseMdRequest<Body> request(req, fs, op, job_op, ino, std::move(body));
  if (fs.mdt() == nullptr || !scheduled) {
    request.info.arrival = nrs::Clock::now();
    return request.Serve();
  }
  if (fs.mdt()->ServeIfAdmitted(request)) return;
  fs.mdt()->Submit(std::make_unique<FuseMdRequest<Body>>(std::move(request)));
}

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
