// A file operation cut into one OST request per touched stripe. FUSE threads
// build and submit the parts and return at once; whichever thread finishes
// the last part (an OST service thread, a FUSE worker that served it
// inline, the io_uring queue thread whose ring did it, or the monitor
// failing it) runs Finish(), which sends the one FUSE reply, and the op
// deletes itself.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"
#include "fs/interrupts.h"
#include "layout/layout.h"
#include "nrs/request.h"
#include "ost/service.h"
#include "resource/credit.h"

namespace sfs::control {
class QuotaHold;
class SpaceHold;
}  // namespace sfs::control

namespace sfs::fs {

class Filesystem;

// Marks the calling thread as a FUSE worker inside a read or write
// callback for the scope's life: only there may a lone part be served on
// the calling thread (MultiPartOp::Launch). Follow-up launches from
// completions run on OST service threads, io_uring queue threads or the
// monitor, whose own work a call on another OST's disk must never hold up.
class FuseCallbackScope {
 public:
  FuseCallbackScope();
  ~FuseCallbackScope();
  FuseCallbackScope(const FuseCallbackScope&) = delete;
  FuseCallbackScope& operator=(const FuseCallbackScope&) = delete;
  static bool active();
};

// Clears FuseCallbackScope for the scope's life: for work a FUSE worker
// runs on behalf of another op (a queued op it let in), which must not be
// served inline on it.
class NotInFuseCallback {
 public:
  NotInFuseCallback();
  ~NotInFuseCallback();
  NotInFuseCallback(const NotInFuseCallback&) = delete;
  NotInFuseCallback& operator=(const NotInFuseCallback&) = delete;

 private:
  const bool was_;
};

class MultiPartOp : public ost::IoObserver, public Interruptible {
 public:
  // Submits every part (their observer must be this op) and drops the
  // submitter's own reference; with no parts, finishes on this thread. A
  // lone part may be served on this thread (ost::Service::SubmitOrRun) in a
  // FuseCallbackScope, and the op may then be finished and gone when Launch
  // returns; on an io_uring queue's thread a lone read or write is started
  // on its ring instead (ost::Service::SubmitOrStart) and finished there.
  // The op must not be touched by the caller after Launch.
  void Launch(Filesystem& fs, std::vector<std::unique_ptr<ost::IoRequest>> parts);

  // Before its parts leave the launching thread's hands (queued for a
  // service thread, or kept for a later launch): an op whose parts point
  // into a buffer it borrowed (FUSE's, valid only during the callback)
  // copies it and repoints `part`'s iovecs. Idempotent per part.
  virtual void OwnBuffers(ost::IoRequest& part) {}

  void PartDone(ost::IoRequest& request, const Status& status, size_t bytes) final;

  // Seed 000's nrs_priority: another request waits for this op's credit,
  // so its parts still queued on their OSTs move to the high-priority heads
  // (ost::Service::Raise), now and as they are submitted. Any thread.
  void Raise();

  // Something the op keeps until it is deleted (a growth turn, passed on
  // to a follow-up op that must finish before the next may start).
  void set_turn(std::shared_ptr<void> turn) { turn_ = std::move(turn); }
  const std::shared_ptr<void>& turn() const { return turn_; }
  // The op's extent credit (a fs::HeldExtent from fs/extent_credits.h, or
  // null), held until it is deleted and passed on to a follow-up op that
  // finishes its work. The op becomes the credit's user: raised (Raise)
  // when another request waits for the credit.
  void set_credit(std::shared_ptr<void> credit);
  const std::shared_ptr<void>& credit() const { return credit_; }
  // Its quota reservation (control/quota_control.h), held until it is deleted,
  // and space grant (control/space_grants.h), until its last part is done. The
  // three are set in the total order (credit, quota, space;
  // resource/credit.h), which a debug build checks.
  void set_quota(std::shared_ptr<control::QuotaHold> quota) {
    if (quota != nullptr) order_.Take(resource::Kind::kQuota);
    quota_ = std::move(quota);
  }
  control::QuotaHold* quota() const { return quota_.get(); }
  void set_space(std::shared_ptr<control::SpaceHold> space) {
    if (space != nullptr) order_.Take(resource::Kind::kSpace);
    space_ = std::move(space);
  }

  // Finishes the op with `status` without starting anything (refused
  // before its first part: quota, space). Finish sees refused() true.
  void Refuse(Filesystem& fs, Status status);
  bool refused() const { return refused_; }

  // The op answers `req`, whose caller may be interrupted (a read or a
  // write: FUSE_INTERRUPT). Once Launch has submitted its parts, an
  // interrupt takes back those still queued (ost::Service::Cancel) and, if
  // none had started, the op finishes at once with EINTR, interrupted()
  // true, having run nothing; if one had, the op goes on as if not
  // interrupted. Set before Launch.
  void set_interruptible(fuse_req_t req) { interruptible_ = req; }
  bool interrupted() const { return interrupted_; }

  // Interruptible (fs/interrupts.h).
  size_t TakeBack() final;
  void EndTakenBack(size_t taken) final;

 protected:
  virtual ~MultiPartOp() = default;
  // Sees each part once it is done, before Finish (on the thread that
  // finished it, parts of one op possibly at once): for results a part
  // carries back.
  virtual void OnPart(const ost::IoRequest& part, const Status& status) {}
  // Runs exactly once, after every part is done; `status` is the first
  // failure, if any. Sends the reply. The op is deleted when it returns.
  virtual void Finish(const Status& status) = 0;

 private:
  void Drop();

  Filesystem* fs_ = nullptr;  // set by Launch; counts this op as in flight
  fuse_req_t interruptible_ = nullptr;  // set before Launch
  // In fs_->interrupts() from the end of Launch until Drop's last call.
  // Written before Launch's own Drop, read after the last: pending_ orders them.
  bool watched_ = false;
  // Set by TakeBack before the drops of the parts it took back, read by
  // Finish after the last (ordered by pending_).
  bool interrupted_ = false;
  // Released in the reverse of the order they are taken (credit, turn,
  // quota, space: docs/design.md, "Resources and credits").
  std::shared_ptr<void> credit_;
  std::shared_ptr<void> turn_;
  std::shared_ptr<control::QuotaHold> quota_;
  std::shared_ptr<control::SpaceHold> space_;
  bool refused_ = false;
  resource::CreditOrder order_;  // what the setters above took, in order
  std::atomic<size_t> pending_{0};
  // Guards first_error_, in_flight_, raise_, launched_. Taken after the
  // interrupt table's lock and before an OST's (fs/interrupts.h).
  std::mutex mu_;
  Status first_error_;  // GUARDED_BY(mu_)
  // Parts submitted and not yet done, with their OSTs, for an op that may
  // be raised (it has a credit) or interrupted: a part is alive until its
  // PartDone, which takes it out of here first.
  std::vector<std::pair<ost::Service*, ost::IoRequest*>> in_flight_;  // GUARDED_BY(mu_)
  bool raise_ = false;  // GUARDED_BY(mu_)
  size_t launched_ = 0;  // GUARDED_BY(mu_): parts, once Launch has submitted them all
};

// The stripe objects a request runs against, and (optionally) where their
// per-object state lives: an open file's (OpenFile::created/allocated),
// else the layout's own marks are used and allocations are not reported.
struct Target {
  const layout::Layout* layout;
  const std::vector<std::shared_ptr<ost::ObjectHandle>>* objects;
  uint64_t ino = 0;
  const std::atomic<bool>* created = nullptr;  // per stripe
  std::atomic<uint64_t>* allocated = nullptr;  // per stripe
};

// One request per stripe touched by [offset, offset+length). For kRead and
// kWrite `buffer` holds the file bytes of the extent; for kPunch/kAllocate it
// is null. `who` carries the caller's identity into every part.
std::vector<std::unique_ptr<ost::IoRequest>> ExtentParts(const Target& target, nrs::Op op,
                                                         uint64_t offset, uint64_t length,
                                                         char* buffer,
                                                         const nrs::RequestInfo& who,
                                                         ost::IoObserver* observer);

// A read whose bytes go into pipes, not a buffer: ExtentParts(kRead) with
// no iovecs (the caller gives each part its pipe, ost::IoRequest::pipe),
// and in `pieces` the order in which the parts' bytes make up the extent:
// `pieces[0].length` bytes from part `pieces[0].part`'s pipe, then the
// next piece, and so on. A part whose object bytes are several pieces of
// the extent (the extent wraps the stripe set) appears once per piece.
struct ReplyPiece {
  size_t part = 0;
  uint64_t length = 0;
};
std::vector<std::unique_ptr<ost::IoRequest>> PipedReadParts(const Target& target,
                                                            uint64_t offset, uint64_t length,
                                                            const nrs::RequestInfo& who,
                                                            ost::IoObserver* observer,
                                                            std::vector<ReplyPiece>* pieces);

// One request per stripe: kSync, kDestroy, or kTruncate to `file_size`.
std::vector<std::unique_ptr<ost::IoRequest>> EveryStripe(const Target& target, nrs::Op op,
                                                         uint64_t file_size,
                                                         const nrs::RequestInfo& who,
                                                         ost::IoObserver* observer);

}  // namespace sfs::fs
