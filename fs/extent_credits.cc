#include "fs/extent_credits.h"

#include <mutex>
#include <optional>

#include "common/log.h"
#include "fs/filesystem.h"
#include "fs/io.h"

namespace sfs::fs {

HeldExtent::HeldExtent(std::shared_ptr<OpenFile> file, resource::Ticket ticket)
    : file_(std::move(file)), ticket_(ticket) {}

HeldExtent::~HeldExtent() { file_->extents->Put(ticket_); }

namespace {

// A request that had to queue. Its grant may come (on another thread)
// before the submitter has made the op safe to start elsewhere
// (`before_waiting`), so whichever of the two comes second starts it.
struct Waiting {
  std::shared_ptr<OpenFile> file;
  std::function<void(std::shared_ptr<void>)> start;
  std::mutex mu;
  bool armed = false;                                            // GUARDED_BY(mu)
  std::optional<std::pair<resource::Outcome, resource::Ticket>> early;  // GUARDED_BY(mu)

  void Start(resource::Outcome outcome, resource::Ticket ticket) {
    if (outcome == resource::Outcome::kGranted) {
      return start(std::make_shared<HeldExtent>(file, ticket));
    }
    // Only a handle released while one of its ops waited, which the kernel
    // never does (it releases a handle after its last op is answered).
    Logger("fs")->error("inode {}: an extent credit was refused to a waiting op; running it",
                        file->ino);
    start(nullptr);
  }
};

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
  // A handle alone on its file (lockless mode) is granted from its cached
  // whole-file credit, and so is a reader beside others (reads are granted
  // the whole file while no write waits): asked for without a call-back to
  // set up first, such a request costs no allocation but its held
  // credit's. A writer beside others needs the root each time: no try.
  if (owner != resource::kRootOwner &&
      (manager->owners() == 1 || mode == resource::Mode::kRead)) {
    auto cached = manager->Get(owner, wanted, {.non_block_local = true}, nullptr, nullptr);
    if (cached.state == resource::CreditManager::State::kGranted) {
      return start(std::make_shared<HeldExtent>(file, cached.ticket));
    }
  }
  auto waiting = std::make_shared<Waiting>();
  waiting->file = file;
  waiting->start = std::move(start);
  auto done = [waiting](resource::Outcome outcome, resource::Ticket ticket) {
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
    waiting->Start(outcome, ticket);
  };
  auto result = manager->Get(owner, wanted, {}, std::move(done), nullptr);
  switch (result.state) {
    case resource::CreditManager::State::kGranted:
      return waiting->Start(resource::Outcome::kGranted, result.ticket);
    case resource::CreditManager::State::kQueued: {
      before_waiting();
      std::optional<std::pair<resource::Outcome, resource::Ticket>> early;
      {
        std::lock_guard<std::mutex> lock(waiting->mu);
        waiting->armed = true;
        early = waiting->early;
      }
      if (early) waiting->Start(early->first, early->second);
      return;
    }
    default:
      Logger("fs")->error("inode {}: extent credit asked through a released handle; running it",
                          file->ino);
      return waiting->Start(resource::Outcome::kError, 0);
  }
}

}  // namespace sfs::fs
