#include "fs/io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "fs/extent_credits.h"
#include "fs/filesystem.h"
#include "control/quota_control.h"
#include "control/space_grants.h"
#include "ring/fuse_ring.h"

namespace sfs::fs {

namespace {
thread_local bool tls_in_fuse_callback = false;

// A lone read or write part done by an io_uring queue's own thread,
// started on its io_uring (ring::FuseRing::StartIo) once its OST let it in
// (ost::Service::SubmitOrStart) and finished on that thread when it
// completes: no hand-off to an OST thread and back, and the thread never
// waits on the disk (a write ext4 cannot do without waiting is done by
// one of the kernel's io_uring workers).
class RingIo final : public ring::IoCompletion {
 public:
  // Whether it started; if so, it finishes the part later.
  static bool Start(ost::Service& ost, ost::IoRequest& part,
                    std::shared_ptr<ost::ObjectFile> file) {
    auto* io = new RingIo(ost, part, std::move(file));
    if (io->Issue()) return true;
    delete io;
    return false;
  }

  void IoDone(int result) override {
    // Interrupted: again, as the backend (ost/posix_backend.cc) retries
    // EINTR. io_uring itself turns a regular file's EAGAIN into a blocking
    // retry on its workers, so one here is retried, a few times only.
    if ((result == -EINTR || (result == -EAGAIN && ++retries_ <= kEagainRetries)) && Issue()) {
      return;
    }
    if (result > 0) {
      done_ += static_cast<size_t>(result);
      // A read returns short only at the object's end; a write short of
      // its iovecs goes on from where it stopped.
      if (write() && done_ < part_.info.length) {
        Advance(static_cast<size_t>(result));
        if (Issue()) return;
        result = -EIO;
      }
    } else if (result == 0 && write() && done_ < part_.info.length) {
      result = -ENOSPC;  // a write that moves nothing: no room, as the backend says
    }
    Status status;
    if (result < 0) {
      status = Status::Error(
          -result, fmt::format("ost {}: {} of object {:#x} at {} over io_uring: {}", ost_.index(),
                               write() ? "write" : "read", part_.info.object_id,
                               part_.info.offset + done_, strerror(-result)));
    }
    ost_.FinishStarted(&part_, *file_, std::move(status), done_);
    ost_.LetGo(std::move(file_));
    delete this;
  }

 private:
  RingIo(ost::Service& ost, ost::IoRequest& part, std::shared_ptr<ost::ObjectFile> file)
      : ost_(ost), part_(part), file_(std::move(file)), left_(part.iov) {}
  ~RingIo() = default;
  bool write() const { return part_.info.op == nrs::Op::kWrite; }
  bool Issue() {
    return ring::FuseRing::StartIo(
        write() ? ring::FuseRing::Direction::kWrite : ring::FuseRing::Direction::kRead,
        file_->NativeFd(), left_.data() + first_, static_cast<int>(left_.size() - first_),
        part_.info.offset + done_, this);
  }
  // Drops `moved` bytes from the front of what is left.
  void Advance(size_t moved) {
    while (moved > 0 && first_ < left_.size()) {
      iovec& v = left_[first_];
      const size_t now = std::min(moved, v.iov_len);
      v.iov_base = static_cast<char*>(v.iov_base) + now;
      v.iov_len -= now;
      moved -= now;
      if (v.iov_len == 0) ++first_;
    }
  }

  ost::Service& ost_;
  ost::IoRequest& part_;                   // the service's until FinishStarted
  std::shared_ptr<ost::ObjectFile> file_;  // held open while it runs
  std::vector<iovec> left_;                // what is still to move, from first_ on
  size_t first_ = 0;
  size_t done_ = 0;  // bytes moved so far
  static constexpr int kEagainRetries = 3;
  int retries_ = 0;  // of EAGAIN so far
};

}  // namespace

FuseCallbackScope::FuseCallbackScope() { tls_in_fuse_callback = true; }
FuseCallbackScope::~FuseCallbackScope() { tls_in_fuse_callback = false; }
bool FuseCallbackScope::active() { return tls_in_fuse_callback; }

NotInFuseCallback::NotInFuseCallback() : was_(tls_in_fuse_callback) {
  tls_in_fuse_callback = false;
}
NotInFuseCallback::~NotInFuseCallback() { tls_in_fuse_callback = was_; }

void MultiPartOp::Launch(Filesystem& fs, std::vector<std::unique_ptr<ost::IoRequest>> parts) {
  // One reference per part plus the submitter's, so a part finishing before
  // the next is submitted cannot complete the op early.
  fs_ = &fs;
  fs.OpStarted();
  pending_.store(parts.size() + 1, std::memory_order_relaxed);
  if (credit_ != nullptr || interruptible_ != nullptr) {
    // Only an op whose credit someone may wait for can be raised, and only
    // one answering a caller's read or write interrupted.
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_.reserve(parts.size());
    for (auto& part : parts) in_flight_.emplace_back(&fs.ost(part->info.ost), part.get());
  }
  // Served here when its OST can take it at once: no hand-off, and the
  // borrowed buffers need no copy. Not on an io_uring queue's thread: a
  // disk that hangs under the call would stop its whole queue
  // (ring::FuseRing::OnQueueThread), so there the OST's own threads serve,
  // but for a read or write the queue's io_uring does without waiting.
  const bool lone = parts.size() == 1 && FuseCallbackScope::active();
  if (lone && !ring::FuseRing::OnQueueThread()) {
    const uint32_t ost = parts[0]->info.ost;
    fs.ost(ost).SubmitOrRun(std::move(parts[0]),
                            [this](ost::IoRequest& part) { OwnBuffers(part); });
  } else if (lone &&
             (parts[0]->info.op == nrs::Op::kRead || parts[0]->info.op == nrs::Op::kWrite)) {
    ost::Service& service = fs.ost(parts[0]->info.ost);
    service.SubmitOrStart(
        std::move(parts[0]), [this](ost::IoRequest& part) { OwnBuffers(part); },
        [&service](ost::IoRequest& part, std::shared_ptr<ost::ObjectFile> file) {
          return RingIo::Start(service, part, std::move(file));
        });
  } else {
    for (auto& part : parts) {
      OwnBuffers(*part);
      const uint32_t ost = part->info.ost;
      fs.ost(ost).Submit(std::move(part));
    }
  }
  {
    // A raise that came while the parts were being submitted found some
    // not yet queued.
    std::lock_guard<std::mutex> lock(mu_);
    if (raise_) {
      for (auto [service, part] : in_flight_) service->Raise(*part);
    }
    launched_ = parts.size();
    // A part done already (served on this thread): never cancelled, so
    // nothing to watch.
    watched_ = interruptible_ != nullptr && !parts.empty() && in_flight_.size() == parts.size();
  }
  if (watched_) {
    // Once every part is queued or served, so that an interrupt finds the
    // op whole; the submitter's reference keeps it alive through Watch,
    // which may call TakeBack at once (the interrupt came first).
    fs.interrupts().Watch(interruptible_, this);
  }
  Drop();
}

size_t MultiPartOp::TakeBack() {
  std::lock_guard<std::mutex> lock(mu_);
  // A part done: some of the op has run, so it answers when all has.
  if (in_flight_.size() < launched_) return 0;
  size_t taken = 0;
  while (taken < in_flight_.size() && in_flight_[taken].first->Cancel(*in_flight_[taken].second)) {
    taken++;
  }
  if (taken < in_flight_.size()) {
    // One is in service: the op goes on whole, so the parts taken back
    // queue again (keeping their arrival time), raised again if the op
    // was. PartDone waits for mu_, so every part is still alive here.
    for (size_t i = 0; i < taken; i++) {
      auto [service, part] = in_flight_[i];
      service->Submit(std::unique_ptr<ost::IoRequest>(part));
      if (raise_) service->Raise(*part);
    }
    return 0;
  }
  // Nothing started: the parts are ours again (Submit took them released),
  // and no PartDone will come for them.
  for (auto [service, part] : in_flight_) delete part;
  in_flight_.clear();
  interrupted_ = true;
  first_error_ = Status::Error(EINTR, "interrupted by a signal while its requests were queued");
  return taken;
}

void MultiPartOp::EndTakenBack(size_t taken) {
  // One reference per part taken back; the last drop finishes the op.
  for (size_t i = 0; i < taken; i++) Drop();
}

void MultiPartOp::set_credit(std::shared_ptr<void> credit) {
  if (credit != nullptr) {
    order_.Take(resource::Kind::kExtent);
    static_cast<HeldExtent*>(credit.get())->SetUser(this);
  }
  credit_ = std::move(credit);
}

void MultiPartOp::Raise() {
  std::lock_guard<std::mutex> lock(mu_);
  raise_ = true;
  for (auto [service, part] : in_flight_) service->Raise(*part);
}

void MultiPartOp::Refuse(Filesystem& fs, Status status) {
  refused_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first_error_ = std::move(status);
  }
  Launch(fs, {});
}

void MultiPartOp::PartDone(ost::IoRequest& request, const Status& status, size_t) {
  OnPart(request, status);
  // credit_ and interruptible_ are set before Launch and stay until
  // Finish: only with one does in_flight_ hold anything.
  if (!status.ok() || credit_ != nullptr || interruptible_ != nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!status.ok() && first_error_.ok()) first_error_ = status;
    std::erase_if(in_flight_, [&request](const auto& p) { return p.second == &request; });
  }
  Drop();
}

void MultiPartOp::Drop() {
  if (pending_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = first_error_;
  }
  Filesystem* fs = fs_;
  // Before the answer: from now no interrupt may reach the op.
  if (watched_) fs->interrupts().Forget(interruptible_);
  // Every part is done, so what it wrote is on its disks: its grant counts
  // as written from now, before the reply, so a sample taken for the
  // caller's next op is never older than this (resource/free_space.h).
  space_.reset();
  Finish(status);  // may launch a follow-up op, which counts itself first
  // Unless a follow-up took it over, no raise may reach this op any more.
  if (credit_ != nullptr) static_cast<HeldExtent*>(credit_.get())->ClearUser(this);
  delete this;
  fs->OpFinished();
}

namespace {

std::unique_ptr<ost::IoRequest> NewPart(const Target& target, uint32_t stripe, nrs::Op op,
                                        const nrs::RequestInfo& who,
                                        ost::IoObserver* observer) {
  auto request = std::make_unique<ost::IoRequest>();
  request->info = who;
  request->info.arrival = {};  // stamped by Submit: follow-ups reuse `who`
  request->info.op = op;
  request->info.ost = target.layout->objects[stripe].ost;
  request->info.object_id = target.layout->objects[stripe].object_id;
  request->object = (*target.objects)[stripe];
  request->observer = observer;
  request->tag = stripe;
  request->ino = target.ino;
  request->must_exist = target.created != nullptr ? target.created[stripe].load()
                                                  : target.layout->objects[stripe].created;
  if (target.allocated != nullptr) request->allocation = &target.allocated[stripe];
  return request;
}

}  // namespace

std::vector<std::unique_ptr<ost::IoRequest>> ExtentParts(const Target& target, nrs::Op op,
                                                         uint64_t offset, uint64_t length,
                                                         char* buffer,
                                                         const nrs::RequestInfo& who,
                                                         ost::IoObserver* observer) {
  std::vector<std::unique_ptr<ost::IoRequest>> parts;
  const auto extents = buffer != nullptr ? layout::MapExtent(*target.layout, offset, length)
                                          : layout::MapRange(*target.layout, offset, length);
  for (const layout::StripeExtent& extent : extents) {
    auto request = NewPart(target, extent.stripe, op, who, observer);
    request->info.offset = extent.object_offset;
    request->info.length = extent.length;
    if (buffer != nullptr) {
      request->iov.reserve(extent.segments.size());
      for (const layout::Segment& segment : extent.segments) {
        request->iov.push_back(iovec{buffer + segment.buffer_offset, segment.length});
      }
    }
    parts.push_back(std::move(request));
  }
  return parts;
}

std::vector<std::unique_ptr<ost::IoRequest>> PipedReadParts(const Target& target,
                                                            uint64_t offset, uint64_t length,
                                                            const nrs::RequestInfo& who,
                                                            ost::IoObserver* observer,
                                                            std::vector<ReplyPiece>* pieces) {
  std::vector<std::unique_ptr<ost::IoRequest>> parts;
  struct Placed {
    uint64_t extent_offset;
    ReplyPiece piece;
  };
  std::vector<Placed> placed;
  const auto extents = layout::MapExtent(*target.layout, offset, length);
  for (const layout::StripeExtent& extent : extents) {
    auto request = NewPart(target, extent.stripe, nrs::Op::kRead, who, observer);
    request->info.offset = extent.object_offset;
    request->info.length = extent.length;
    for (const layout::Segment& segment : extent.segments) {
      placed.push_back({segment.buffer_offset, ReplyPiece{parts.size(), segment.length}});
    }
    parts.push_back(std::move(request));
  }
  std::sort(placed.begin(), placed.end(),
            [](const Placed& a, const Placed& b) { return a.extent_offset < b.extent_offset; });
  pieces->clear();
  for (const Placed& p : placed) pieces->push_back(p.piece);
  return parts;
}

std::vector<std::unique_ptr<ost::IoRequest>> EveryStripe(const Target& target, nrs::Op op,
                                                         uint64_t file_size,
                                                         const nrs::RequestInfo& who,
                                                         ost::IoObserver* observer) {
  std::vector<std::unique_ptr<ost::IoRequest>> parts;
  for (uint32_t stripe = 0; stripe < target.layout->stripe_count(); ++stripe) {
    auto request = NewPart(target, stripe, op, who, observer);
    if (op == nrs::Op::kTruncate) {
      request->truncate_size = layout::ObjectSizeFor(*target.layout, stripe, file_size);
      request->info.offset = request->truncate_size;
    }
    parts.push_back(std::move(request));
  }
  return parts;
}

}  // namespace sfs::fs
