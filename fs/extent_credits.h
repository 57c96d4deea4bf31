// Extent credits on the data path (issue 11; resource/): every read,
// write, preallocation and punch holds a credit over its byte range from
// before its first part is submitted until its op is gone, so I/O that
// overlaps keeps the order it was admitted in while each OST's NRS
// reorders what does not (docs/design.md, "Resources and credits").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "client/remote_extent.h"
#include "resource/shared_manager.h"

namespace sfs::fs {

struct OpenFile;
class MultiPartOp;

// A held extent credit; Put when the last reference goes. It keeps its
// file (and so the file's manager) alive: an op replies before it is
// deleted, and the kernel may release the last handle in between.
//
// Seed 000's nrs_priority: when another request must wait for this credit
// (resource::CreditManager::OnBlocking), the op using it is raised
// (MultiPartOp::Raise: its parts still queued on their OSTs move to the
// high-priority heads), so the waiter waits for one service time rather
// than for this op's throttle. Lock order: mu_, then the op's lock, then
// an OST's.
class HeldExtent {
 public:
  explicit HeldExtent(std::shared_ptr<OpenFile> file);
  ~HeldExtent();
  HeldExtent(const HeldExtent&) = delete;
  HeldExtent& operator=(const HeldExtent&) = delete;

  // The credit's ticket, once granted (before any user is set).
  void Granted(resource::Ticket ticket) { ticket_ = ticket; }
  // Another request waits for this credit: raises the user now, or the
  // next one set. Any thread.
  void Blocking();
  // `op` uses the credit from now on (an op passes it to a follow-up); it
  // is raised at once if a request already waits. ClearUser(op) when the
  // op goes, unless another took over. Any thread.
  void SetUser(MultiPartOp* op);
  void ClearUser(const MultiPartOp* op);
  // The file's credit at the MDS (a client mount), acquired for this I/O:
  // released with this, after the mount's own.
  void KeepRemote(std::shared_ptr<client::RemoteExtent> remote) { remote_ = std::move(remote); }

 private:
  const std::shared_ptr<OpenFile> file_;
  resource::Ticket ticket_ = 0;  // 0: never granted, nothing to put
  std::shared_ptr<client::RemoteExtent> remote_;  // set before the credit is shared
  std::mutex mu_;
  MultiPartOp* user_ = nullptr;  // GUARDED_BY(mu_)
  bool blocking_ = false;        // GUARDED_BY(mu_)
};

// Runs `start` with the credit over [offset, offset + length) of `file`
// in `mode`, taken through `owner` (a handle's, or the root): now, on this
// thread, or once the I/O it clashes with is done, on the thread that
// finishes that I/O (outside any FUSE callback scope). `before_waiting`
// runs first if it has to wait. Without extent credits (mount option
// extent_credits=off) `start` runs now with a null credit. The credit
// passed to `start` is a HeldExtent (MultiPartOp::set_credit relies on it).
void WithExtent(const std::shared_ptr<OpenFile>& file, resource::OwnerId owner, uint64_t offset, uint64_t length,
                resource::Mode mode, std::function<void(std::shared_ptr<void>)> start,
                const std::function<void()>& before_waiting);

}  // namespace sfs::fs
