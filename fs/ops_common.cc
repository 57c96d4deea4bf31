#include "fs/ops_common.h"

#include <charconv>
#include <cstring>

#include "common/log.h"
#include "common/text.h"
#include "layout/layout_spec.h"

namespace sfs::fs {

ClientCallerScope::ClientCallerScope(const Filesystem& fs, const nrs::RequestInfo& who) {
  if (fs.is_client()) {
    scope_.emplace(client::MdsCaller{who.uid, who.gid, who.pid, who.jobid ? *who.jobid : ""});
  }
}

nrs::RequestInfo Caller(fuse_req_t req, Filesystem& fs) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  nrs::RequestInfo info;
  info.uid = ctx->uid;
  info.gid = ctx->gid;
  info.pid = static_cast<uint32_t>(ctx->pid);
  info.jobid = fs.jobids().Resolve(ctx->pid, ctx->uid, ctx->gid, fs.settings()->jobid);
  return info;
}

MetaJobCount::MetaJobCount(fuse_req_t req, jobstats::JobOp op)
    : fs_(Fs(req)), op_(op), start_(jobstats::Clock::now()) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (ctx->pid == 0) return;
  jobid_ = fs_.jobids().Resolve(ctx->pid, ctx->uid, ctx->gid, fs_.settings()->jobid);
}

MetaJobCount::MetaJobCount(Filesystem& fs, std::shared_ptr<const std::string> jobid,
                           jobstats::JobOp op)
    : fs_(fs), op_(op), jobid_(std::move(jobid)), start_(jobstats::Clock::now()) {}

MetaJobCount::~MetaJobCount() {
  if (jobid_ == nullptr) return;
  const jobstats::TimePoint now = jobstats::Clock::now();
  fs_.meta_job_stats().Record(*jobid_, op_, 0, now - start_, now);
}

void FillStat(const meta::Inode& inode, struct stat* st) {
  std::memset(st, 0, sizeof(*st));
  st->st_ino = inode.ino;
  st->st_mode = inode.mode;
  st->st_nlink = inode.nlink;
  st->st_uid = inode.uid;
  st->st_gid = inode.gid;
  st->st_rdev = inode.rdev;
  st->st_size = static_cast<off_t>(inode.size);
  st->st_blksize = 1 << 20;
  // What the objects occupy on their OSTs' disks (du, sparse-aware tools).
  st->st_blocks = static_cast<blkcnt_t>((inode.allocated + 511) / 512);
  st->st_atim = timespec{inode.atime.sec, inode.atime.nsec};
  st->st_mtim = timespec{inode.mtime.sec, inode.mtime.nsec};
  st->st_ctim = timespec{inode.ctime.sec, inode.ctime.nsec};
}

bool InterruptibleMdRequest::Watch() {
  watched_ = true;
  fs_.interrupts().Watch(req_, this);  // may call TakeBack at once
  if (!interrupted_.load()) return true;
  // The interrupt came first: answered now, never submitted. (One coming
  // later finds it queued, or makes Serve answer instead of running it.)
  fs_.interrupts().Forget(req_);
  watched_ = false;
  ReplyEintr();
  return false;
}

void InterruptibleMdRequest::ReplyEintr() {
  ReplyError(req_, Status::Error(EINTR, "interrupted by a signal while queued"),
             nrs::OpName(info.op));
  fs_.OpFinished();
}

size_t InterruptibleMdRequest::TakeBack() {
  interrupted_.store(true);
  // Still held by a policy: ends now. Else (not submitted yet, or being
  // handed out) Serve answers EINTR instead of running it.
  return fs_.mdt() != nullptr && fs_.mdt()->Cancel(*this) ? 1 : 0;
}

void InterruptibleMdRequest::EndTakenBack(size_t) {
  // Taken back from the service: ours to answer and delete.
  ReplyEintr();
  delete this;
}

bool InterruptibleMdRequest::EndedByInterrupt() {
  if (!watched_) return false;
  // After this no interrupt reaches the request, and one that came has
  // set interrupted_.
  fs_.interrupts().Forget(req_);
  watched_ = false;
  if (!interrupted_.load()) return false;
  ReplyEintr();
  return true;
}

void ReplyError(fuse_req_t req, const Status& status, const char* op) {
  const int err = status.ok() ? EIO : status.err();
  auto log = Logger("fs");
  // Messages quote names and values as given: one line whatever they hold.
  const std::string message = Printable(status.ToString());
  switch (err) {
    case ENOENT: case EEXIST: case ENODATA: case ENOTEMPTY: case EACCES: case ERANGE: case ENXIO:
    case EINTR:  // the caller's signal, nothing wrong
      log->debug("{}: {}", op, message);
      break;
    case EIO: case ENOSPC: case EROFS: case EFBIG:
      log->error("{}: {}", op, message);
      break;
    default:
      log->warn("{}: {}", op, message);
  }
  fuse_reply_err(req, err);
}

void FillEntry(const meta::Inode& inode, double timeout, fuse_entry_param* entry) {
  std::memset(entry, 0, sizeof(*entry));
  entry->ino = inode.ino;
  entry->generation = 1;  // inode numbers are never reused
  entry->attr_timeout = timeout;
  entry->entry_timeout = timeout;
  FillStat(inode, &entry->attr);
}

void ReplyEntry(fuse_req_t req, uint64_t parent, const Result<meta::Inode>& inode,
                const char* op) {
  if (!inode.ok()) return ReplyError(req, inode.status(), op);
  meta::Inode shown = *inode;
  Fs(req).OverlayOpen(&shown);
  fuse_entry_param entry;
  FillEntry(shown, Fs(req).AttrTimeout(shown.ino), &entry);
  entry.entry_timeout = Fs(req).EntryTimeout(parent, shown.ino);
  fuse_reply_entry(req, &entry);
}

void ReplyAttr(fuse_req_t req, const Result<meta::Inode>& inode, const char* op) {
  if (!inode.ok()) return ReplyError(req, inode.status(), op);
  meta::Inode shown = *inode;
  Fs(req).OverlayOpen(&shown);
  struct stat st;
  FillStat(shown, &st);
  fuse_reply_attr(req, &st, Fs(req).AttrTimeout(shown.ino));
}

Result<meta::Inode> MakeNode(fuse_req_t req, fuse_ino_t parent, const char* name,
                               mode_t mode, dev_t rdev, const char* symlink_target,
                               client::MdsClient::Opened* opened) {
  Filesystem& fs = Fs(req);
  SFS_RETURN_IF_ERROR(CheckName(name));
  const fuse_ctx* ctx = fuse_req_ctx(req);
  Filesystem::Creator who;
  who.uid = ctx->uid;
  who.gid = ctx->gid;
  who.pid = static_cast<uint32_t>(ctx->pid);
  if (S_ISREG(mode)) who.jobid = fs.jobids().Resolve(ctx->pid, ctx->uid, ctx->gid, fs.settings()->jobid);
  return fs.MakeNode(who, parent, name, mode, rdev, symlink_target != nullptr ? symlink_target : "",
                     opened);
}

Status CheckName(const char* name) {
  if (std::strlen(name) > meta::kMaxNameLen) {
    return Status::Error(ENAMETOOLONG, "name longer than 255 bytes: " +
                                           std::string(name, 40) + "...");
  }
  return Status::Ok();
}

}  // namespace sfs::fs
