#include "fs/extent_credits.h"

#include <mutex>
#include <optional>

#include "common/log.h"
#include "fs/filesystem.h"
#include "fs/io.h"

namespace sfs::fs {

HeldExtent::HeldExtent(std::shared_ptr<OpenFile> file) : file_(std::move(file)) {}

HeldExtent::~HeldExtent() {
  if (ticket_ != 0) file_->extents->Put(ticket_);
  if (remote_ != nullptr) remote_->Release();
}

void HeldExtent::Blocking() {
  std::lock_guard<std::mutex> lock(mu_);
  blocking_ = true;
  if (user_ != nullptr) user_->Raise();
}

void HeldExtent::SetUser(MultiPartOp* op) {
  std::lock_guard<std::mutex> lock(mu_);
  user_ = op;
  if (blocking_) op->Raise();
}

void HeldExtent::ClearUser(const MultiPartOp* op) {
  std::lock_guard<std::mutex> lock(mu_);
  if (user_ == op) user_ = nullptr;
}

namespace {

// A request that had to queue. Its grant may come (on another thread)
// before the submitter has made the op safe to start elsewhere
// (`before_waiting`), so whichever of the two comes second starts it.
struct Waiting {
  std::shared_ptr<HeldExtent> held;
  std::function<void(std::shared_ptr<void>)> start;
  std::mutex mu;
  bool armed = false;                                            // GUARDED_BY(mu)
  std::optional<std::pair<resource::Outcome, resource::Ticket>> early;  // GUARDED_BY(mu)

  void Start(resource::Outcome outcome, resource::Ticket ticket, uint64_t ino) {
    if (outcome == resource::Outcome::kGranted) {
      held->Granted(ticket);
      return start(std::move(held));
    }
    // Only a handle released while one of its ops waited, which the kernel
    // never does (it releases a handle after its last op is answered).
    Logger("fs")->error("inode {}: an extent credit was refused to a waiting op; running it", ino);
    held.reset();
    start(nullptr);
  }
};

// The credit's OnBlocking: weak, since the credit may be put (and its
// HeldExtent gone) between the manager queuing the call and its run.
resource::CreditManager::OnBlocking RaiseOnBlocking(const std::shared_ptr<HeldExtent>& held) {
  return [weak = std::weak_ptr<HeldExtent>(held)] {
    if (auto alive = weak.lock()) alive->Blocking();
  };
}

}  // namespace

void WithExtent(const std::shared_ptr<OpenFile>& file, resource::OwnerId owner, uint64_t offset,
                uint64_t length, resource::Mode mode,
                std::function<void(std::shared_ptr<void>)> start,
                const std::function<void()>& before_waiting) {
  resource::SharedCreditManager* manager = file->extents.get();
  if (manager == nullptr) return start(nullptr);
  // An empty range clashes with nothing; one byte keeps it an extent.
  uint64_t end = offset + std::max<uint64_t>(length, 1);
  if (end < offset) end = resource::kWholeRange;
  const resource::Credit wanted{resource::Kind::kExtent, file->ino, offset, end, mode};
  auto held = std::make_shared<HeldExtent>(file);
  if (file->remote_extent != nullptr) {
    // A client mount: the credit at the MDS first (no other client's I/O
    // meets this one), then this mount's own. Blocks while the MDS takes
    // it back from another client.
    Status remote = file->remote_extent->Acquire(mode != resource::Mode::kRead);
    if (remote.ok()) {
      held->KeepRemote(file->remote_extent);
    } else {
      Logger("fs")->error("inode {}: no extent credit from the MDS ({}); the I/O runs without",
                          file->ino, remote.ToString());
    }
  }
  // A handle alone on its file (lockless mode) is granted from its cached
  // whole-file credit, and so is a reader beside others (reads are granted
  // the whole file while no write waits): asked for without the waiting
  // record to set up first, such a request costs two allocations, its held
  // credit and its OnBlocking. A writer beside others needs the root each
  // time: no try.
  if (owner != resource::kRootOwner &&
      (manager->owners() == 1 || mode == resource::Mode::kRead)) {
    auto cached = manager->Get(owner, wanted, {.non_block_local = true}, nullptr,
                               RaiseOnBlocking(held));
    if (cached.state == resource::CreditManager::State::kGranted) {
      held->Granted(cached.ticket);
      return start(std::move(held));
    }
  }
  auto waiting = std::make_shared<Waiting>();
  waiting->held = held;
  if (file->remote_extent != nullptr) {
    // A client mount: a queued op goes on later on the thread that freed
    // its credit, which serves another request (or none); its calls to
    // the MDS carry this request's caller all the same (root squash, NRS
    // by uid).
    const client::MdsCaller* current = client::CallerScope::Current();
    std::optional<client::MdsCaller> caller;
    if (current != nullptr) caller = *current;
    start = [start = std::move(start), caller = std::move(caller)](std::shared_ptr<void> credit) {
      const client::CallerScope scope(caller);
      start(std::move(credit));
    };
  }
  waiting->start = std::move(start);
  auto done = [waiting, ino = file->ino](resource::Outcome outcome, resource::Ticket ticket) {
    {
      std::lock_guard<std::mutex> lock(waiting->mu);
      if (!waiting->armed) {
        waiting->early.emplace(outcome, ticket);
        return;
      }
    }
    // On the thread of the Put that let it in, maybe a FUSE worker inside
    // its own callback: the op must not be served inline there.
    const NotInFuseCallback outside;
    waiting->Start(outcome, ticket, ino);
  };
  auto result = manager->Get(owner, wanted, {}, std::move(done), RaiseOnBlocking(held));
  held.reset();  // the waiting record has it
  switch (result.state) {
    case resource::CreditManager::State::kGranted:
      return waiting->Start(resource::Outcome::kGranted, result.ticket, file->ino);
    case resource::CreditManager::State::kQueued: {
      before_waiting();
      std::optional<std::pair<resource::Outcome, resource::Ticket>> early;
      {
        std::lock_guard<std::mutex> lock(waiting->mu);
        waiting->armed = true;
        early = waiting->early;
      }
      if (early) waiting->Start(early->first, early->second, file->ino);
      return;
    }
    default:
      Logger("fs")->error("inode {}: extent credit asked through a released handle; running it",
                          file->ino);
      return waiting->Start(resource::Outcome::kError, 0, file->ino);
  }
}

}  // namespace sfs::fs
