// The in-memory backend for unit tests. One mutex guards every object: tests
// want correctness and a capacity limit, not parallel throughput.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "ost/backend.h"

namespace sfs::ost {
namespace {

constexpr uint64_t kMemBlock = 4096;
constexpr uint64_t kMemMaxFiles = 1 << 20;

struct MemObject {
  std::string data;
  bool linked = true;  // removed objects stay readable by open files, like POSIX
};

// Shared by the backend and its open files, so a file may outlive the backend.
struct MemState {
  explicit MemState(uint64_t capacity) : capacity(capacity) {}
  const uint64_t capacity;
  std::mutex mu;      // guards everything below and every MemObject's contents
  uint64_t used = 0;  // bytes of linked objects
  std::map<uint64_t, std::shared_ptr<MemObject>> objects;

  // REQUIRES: mu held. Grows or shrinks `object` to `size`, charging linked
  // objects against the capacity.
  Status Resize(MemObject& object, uint64_t size, uint64_t id) {
    uint64_t old = object.data.size();
    if (object.linked && size > old && size - old > capacity - used) {
      return Status::Error(ENOSPC, fmt::format("ost mem: object {:#x} to {} bytes", id, size));
    }
    object.data.resize(size);
    if (object.linked) used = used - old + size;
    return Status::Ok();
  }
};

class MemObjectFile : public ObjectFile {
 public:
  MemObjectFile(std::shared_ptr<MemState> state, std::shared_ptr<MemObject> object, uint64_t id)
      : state_(std::move(state)), object_(std::move(object)), id_(id) {}

  Result<size_t> ReadV(const iovec* iov, int count, uint64_t offset) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    const std::string& data = object_->data;
    size_t done = 0;
    for (int i = 0; i < count; ++i) {
      if (offset + done >= data.size()) break;
      size_t n = std::min<uint64_t>(iov[i].iov_len, data.size() - (offset + done));
      std::memcpy(iov[i].iov_base, data.data() + offset + done, n);
      done += n;
      if (n < iov[i].iov_len) break;
    }
    return done;
  }

  Status WriteV(const iovec* iov, int count, uint64_t offset) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    uint64_t total = 0;
    for (int i = 0; i < count; ++i) total += iov[i].iov_len;
    if (offset + total > object_->data.size()) {
      SFS_RETURN_IF_ERROR(state_->Resize(*object_, offset + total, id_));
    }
    uint64_t at = offset;
    for (int i = 0; i < count; ++i) {
      std::memcpy(object_->data.data() + at, iov[i].iov_base, iov[i].iov_len);
      at += iov[i].iov_len;
    }
    return Status::Ok();
  }

  Status Sync(bool data_only) override { return Status::Ok(); }

  Status Truncate(uint64_t size) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return state_->Resize(*object_, size, id_);
  }

  Status Punch(uint64_t offset, uint64_t length) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    std::string& data = object_->data;
    if (offset >= data.size()) return Status::Ok();
    uint64_t n = std::min<uint64_t>(length, data.size() - offset);
    std::memset(data.data() + offset, 0, n);
    return Status::Ok();
  }

  Status Allocate(uint64_t offset, uint64_t length, bool keep_size) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    uint64_t end = offset + length;
    if (keep_size || end <= object_->data.size()) {
      // Memory has no reservations; still refuse what could never fit.
      if (end > object_->data.size() &&
          end - object_->data.size() > state_->capacity - state_->used) {
        return Status::Error(ENOSPC, fmt::format("ost mem: allocate object {:#x}", id_));
      }
      return Status::Ok();
    }
    return state_->Resize(*object_, end, id_);
  }

  Result<uint64_t> Size() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return static_cast<uint64_t>(object_->data.size());
  }

  // Memory has no holes: every byte up to the size is data.
  Result<uint64_t> Allocated() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return (object_->data.size() + kMemBlock - 1) / kMemBlock * kMemBlock;
  }
  Result<std::optional<uint64_t>> Seek(uint64_t offset, int whence) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    const uint64_t size = object_->data.size();
    if (offset >= size) return std::optional<uint64_t>();
    return std::optional<uint64_t>(whence == SEEK_DATA ? offset : size);
  }

 private:
  const std::shared_ptr<MemState> state_;
  const std::shared_ptr<MemObject> object_;  // contents GUARDED_BY(state_->mu)
  const uint64_t id_;
};

class MemBackend : public Backend {
 public:
  explicit MemBackend(uint64_t capacity) : state_(std::make_shared<MemState>(capacity)) {}

  Result<std::unique_ptr<ObjectFile>> Open(uint64_t id, bool create) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->objects.find(id);
    if (it == state_->objects.end()) {
      if (!create) {
        return Status::Error(ENOENT, fmt::format("ost mem: open object {:#x}", id));
      }
      it = state_->objects.emplace(id, std::make_shared<MemObject>()).first;
    }
    return std::unique_ptr<ObjectFile>(new MemObjectFile(state_, it->second, id));
  }

  Status Remove(uint64_t id) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    auto it = state_->objects.find(id);
    if (it == state_->objects.end()) return Status::Ok();
    state_->used -= it->second->data.size();
    it->second->linked = false;
    state_->objects.erase(it);
    return Status::Ok();
  }

  Result<SpaceInfo> Space() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    SpaceInfo info;
    info.block_size = kMemBlock;
    info.total_blocks = state_->capacity / kMemBlock;
    info.free_blocks = (state_->capacity - state_->used) / kMemBlock;
    info.avail_blocks = info.free_blocks;
    info.total_files = kMemMaxFiles;
    info.free_files = kMemMaxFiles - std::min<uint64_t>(kMemMaxFiles, state_->objects.size());
    return info;
  }

  Result<ObjectListing> ListObjects() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    ObjectListing listing;
    for (const auto& [id, object] : state_->objects) {
      listing.objects.push_back({id, object->data.size()});
    }
    return listing;
  }

  std::string Describe() const override { return "mem"; }

 private:
  const std::shared_ptr<MemState> state_;
};

}  // namespace

std::unique_ptr<Backend> NewMemBackend(uint64_t capacity_bytes) {
  return std::make_unique<MemBackend>(capacity_bytes);
}

}  // namespace sfs::ost
