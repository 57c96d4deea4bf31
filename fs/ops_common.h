// Helpers shared by the FUSE op files. Each op is a Do<Op>() returning a
// Status or Result and a thin adapter that sends exactly one reply
// (libfuse's passthrough_hp.cc pattern). No lock is held while replying.
#pragma once

#include <optional>
#include <sys/stat.h>

#include "common/status.h"
#include "fs/filesystem.h"
#include "fs/fuse_api.h"
#include <atomic>
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

// A metadata request answering `req`, which may wait in the metadata
// service's queue. Once watched (Watch: only a request that goes to the
// queue), an interrupt of `req` takes it back from its policy and answers
// EINTR; if it was not queued yet or is being handed out, it answers EINTR
// instead of running when served. Either way it never runs once its caller
// was interrupted (docs/design.md, "Interrupts").
class InterruptibleMdRequest : public mdt::MdRequest, public Interruptible {
 public:
  // From now on an interrupt of the request reaches it (maybe at once).
  // Returns false if one already did (nothing to submit: it answered
  // EINTR, and the caller deletes it). REQUIRES: not yet submitted.
  bool Watch();
  // Interruptible: under the interrupt table's lock, so Serve (which
  // forgets the request first) has not begun to run it.
  size_t TakeBack() final;
  void EndTakenBack(size_t taken) final;

 protected:
  InterruptibleMdRequest(fuse_req_t req, Filesystem& fs) : req_(req), fs_(fs) {}
  // First in Serve: true if the caller was interrupted before the request
  // ran; it has then answered EINTR and must not run.
  bool EndedByInterrupt();
  Filesystem& fs() { return fs_; }
  fuse_req_t req() const { return req_; }

 private:
  void ReplyEintr();  // and counts the op finished

  const fuse_req_t req_;
  Filesystem& fs_;
  bool watched_ = false;  // by Watch, before the request is submitted
  // Set by TakeBack (under the table's lock), read by Watch and by Serve
  // (after Forget, which takes that lock).
  std::atomic<bool> interrupted_{false};
};

// On a client mount, the calls to the MDS this thread makes while it lives
// carry `who` as their caller (client::CallerScope); nothing elsewhere.
class ClientCallerScope {
 public:
  ClientCallerScope(const Filesystem& fs, const nrs::RequestInfo& who);
  ClientCallerScope(const ClientCallerScope&) = delete;
  ClientCallerScope& operator=(const ClientCallerScope&) = delete;

 private:
  std::optional<client::CallerScope> scope_;
};

// A metadata operation on its way through the metadata service (below),
// classified as `op` on inode `ino` with the caller's uid, gid and job id.
template <class Body>
class FuseMdRequest final : public InterruptibleMdRequest {
 public:
  FuseMdRequest(fuse_req_t req, Filesystem& fs, nrs::Op op, jobstats::JobOp job_op, uint64_t ino,
                Body body)
      : InterruptibleMdRequest(req, fs),
        job_op_(job_op),
        counted_(fuse_req_ctx(req)->pid != 0),
        body_(std::move(body)) {
    info = Caller(req, fs);
    info.op = op;
    info.object_id = ino;
    // info.arrival: stamped by the metadata service (one clock read for
    // arrival and enqueue) or, unscheduled, by ThroughMdt.
    fs.OpStarted();
  }
  // From the stack to the heap when the service cannot serve it at once.
  // Only for a request not yet scheduled (its scheduler state is unset);
  // still one operation (OpStarted is not counted again).
  FuseMdRequest(FuseMdRequest&& unscheduled)
      : InterruptibleMdRequest(unscheduled.req(), unscheduled.fs()),
        job_op_(unscheduled.job_op_),
        counted_(unscheduled.counted_),
        body_(std::move(unscheduled.body_)) {
    info = std::move(unscheduled.info);
  }
  void Serve() override {
    if (EndedByInterrupt()) return;
    {
      const ClientCallerScope caller(fs(), info);
      body_();
    }
    // Counted from arrival, so the time a policy held it shows in job_stats.
    if (counted_ && info.jobid != nullptr) {
      const jobstats::TimePoint now = jobstats::Clock::now();
      fs().meta_job_stats().Record(*info.jobid, job_op_, 0, now - info.arrival, now);
    }
    fs().OpFinished();
  }

 private:
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
// Marks where this thread's operation began, for what a client mount's
// kernel may cache of its reply (Filesystem::AttrTimeout).
class CacheScope {
 public:
  explicit CacheScope(const Filesystem& fs);
  ~CacheScope();
  CacheScope(const CacheScope&) = delete;
  CacheScope& operator=(const CacheScope&) = delete;

 private:
  const uint64_t saved_;
};

template <class Body>
void ThroughMdt(fuse_req_t req, nrs::Op op, jobstats::JobOp job_op, uint64_t ino, Body body,
                bool scheduled = true) {
  Filesystem& fs = Fs(req);
  const CacheScope cache_scope(fs);
  FuseMdRequest<Body> request(req, fs, op, job_op, ino, std::move(body));
  if (fs.mdt() == nullptr || !scheduled) {
    request.info.arrival = nrs::Clock::now();
    return request.Serve();
  }
  if (fs.mdt()->ServeIfAdmitted(request)) return;
  auto queued = std::make_unique<FuseMdRequest<Body>>(std::move(request));
  if (!queued->Watch()) return;  // interrupted already: answered EINTR
  fs.mdt()->Submit(std::move(queued));
}

// Logs a failure in one line (debug for the everyday ENOENT/EEXIST kind,
// warn for bad input, error for I/O failures) and replies with its errno.
void ReplyError(fuse_req_t req, const Status& status, const char* op);

void FillEntry(const meta::Inode& inode, double timeout, fuse_entry_param* entry);
// Both show what an open file has not stored yet (Filesystem::OverlayOpen).
// `parent`: the directory the name is in.
void ReplyEntry(fuse_req_t req, uint64_t parent, const Result<meta::Inode>& inode,
                const char* op);
void ReplyAttr(fuse_req_t req, const Result<meta::Inode>& inode, const char* op);

// Creates a node of any type in `parent` for the caller: set-group-ID
// directories pass on their group, regular files get a new layout.
// `opened`: as Filesystem::MakeNode's.
Result<meta::Inode> MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
                             dev_t rdev, const char* symlink_target,
                             client::MdsClient::Opened* opened = nullptr);

// Names over NAME_MAX never reach the store.
Status CheckName(const char* name);

}  // namespace sfs::fs
