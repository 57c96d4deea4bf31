// The fault-injecting wrapper. Faults are plain atomics so a test may flip
// them while service threads are mid-call; a call sees either the old or the
// new setting, which is all a failure test needs.
//
// Kinds: "writes" covers every call that changes an object (WriteV,
// Truncate, Punch, Allocate, Remove); "reads" covers ReadV, Size, Allocated
// and Seek. Hang() makes every call, Space included, wait until it is
// cleared, as calls into a stopped disk do.
#include <fmt/format.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "ost/backend.h"

namespace sfs::ost {
namespace {

class FaultControl : public FaultInjector {
 public:
  void FailWrites(int err) override { writes.store(err, std::memory_order_relaxed); }
  void FailReads(int err) override { reads.store(err, std::memory_order_relaxed); }
  void FailOpens(int err) override { opens.store(err, std::memory_order_relaxed); }
  void FailSyncs(int err) override { syncs.store(err, std::memory_order_relaxed); }
  void Hang(bool hang) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      hanging = hang;
    }
    thawed.notify_all();
  }
  size_t Hung() const override {
    std::lock_guard<std::mutex> lock(mu);
    return waiting;
  }
  // Called first by every call: waits while hanging.
  void WaitWhileHung() {
    std::unique_lock<std::mutex> lock(mu);
    if (!hanging) return;
    waiting++;
    thawed.wait(lock, [&] { return !hanging; });
    waiting--;
  }

  mutable std::mutex mu;  // guards hanging and waiting
  std::condition_variable thawed;
  bool hanging = false;
  size_t waiting = 0;
  std::atomic<int> writes{0};
  std::atomic<int> reads{0};
  std::atomic<int> opens{0};
  std::atomic<int> syncs{0};
};

// Non-ok when `fault` is set; the message names the injected call. Waits
// first while the backend hangs.
Status Injected(FaultControl& control, const std::atomic<int>& fault, const char* what,
                uint64_t id) {
  control.WaitWhileHung();
  int err = fault.load(std::memory_order_relaxed);
  if (err == 0) return Status::Ok();
  return Status::Error(err, fmt::format("ost fault: injected {} failure, object {:#x}", what, id));
}

class FaultObjectFile : public ObjectFile {
 public:
  FaultObjectFile(std::unique_ptr<ObjectFile> inner, std::shared_ptr<FaultControl> control,
                  uint64_t id)
      : inner_(std::move(inner)), control_(std::move(control)), id_(id) {}

  Result<size_t> ReadV(const iovec* iov, int count, uint64_t offset) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->reads, "read", id_));
    return inner_->ReadV(iov, count, offset);
  }
  Result<size_t> SpliceTo(int pipe_fd, uint64_t offset, size_t length) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->reads, "read", id_));
    return inner_->SpliceTo(pipe_fd, offset, length);
  }
  Status WriteV(const iovec* iov, int count, uint64_t offset) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->writes, "write", id_));
    return inner_->WriteV(iov, count, offset);
  }
  Status Sync(bool data_only) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->syncs, "sync", id_));
    return inner_->Sync(data_only);
  }
  Status Truncate(uint64_t size) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->writes, "truncate", id_));
    return inner_->Truncate(size);
  }
  Status Punch(uint64_t offset, uint64_t length) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->writes, "punch", id_));
    return inner_->Punch(offset, length);
  }
  Status Allocate(uint64_t offset, uint64_t length, bool keep_size) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->writes, "allocate", id_));
    return inner_->Allocate(offset, length, keep_size);
  }
  Result<uint64_t> Size() override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->reads, "size", id_));
    return inner_->Size();
  }
  Result<uint64_t> Allocated() override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->reads, "allocated", id_));
    return inner_->Allocated();
  }
  Result<std::optional<uint64_t>> Seek(uint64_t offset, int whence) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->reads, "seek", id_));
    return inner_->Seek(offset, whence);
  }
  bool read_only() const override { return inner_->read_only(); }

 private:
  const std::unique_ptr<ObjectFile> inner_;
  const std::shared_ptr<FaultControl> control_;
  const uint64_t id_;
};

class FaultBackend : public Backend {
 public:
  FaultBackend(std::unique_ptr<Backend> inner, std::shared_ptr<FaultControl> control)
      : inner_(std::move(inner)), control_(std::move(control)) {}

  Result<std::unique_ptr<ObjectFile>> Open(uint64_t id, bool create) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->opens, "open", id));
    auto opened = inner_->Open(id, create);
    if (!opened.ok()) return opened.status();
    return std::unique_ptr<ObjectFile>(
        new FaultObjectFile(std::move(opened).value(), control_, id));
  }
  Status Remove(uint64_t id) override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->writes, "remove", id));
    return inner_->Remove(id);
  }
  Result<SpaceInfo> Space() override {
    control_->WaitWhileHung();
    return inner_->Space();
  }
  Result<ObjectListing> ListObjects() override {
    SFS_RETURN_IF_ERROR(Injected(*control_, control_->reads, "list", 0));
    return inner_->ListObjects();
  }
  std::string Describe() const override { return inner_->Describe() + " (faulty)"; }

 private:
  const std::unique_ptr<Backend> inner_;
  const std::shared_ptr<FaultControl> control_;
};

}  // namespace

std::unique_ptr<Backend> NewFaultBackend(std::unique_ptr<Backend> inner,
                                         std::shared_ptr<FaultInjector>* control) {
  auto shared = std::make_shared<FaultControl>();
  if (control != nullptr) *control = shared;
  return std::make_unique<FaultBackend>(std::move(inner), std::move(shared));
}

}  // namespace sfs::ost
