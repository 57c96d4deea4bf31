// The OST services of a mount: a table that only grows (`stripefs ost
// add`), read without a lock on every I/O. Its slots are allocated once, so
// a reader never sees storage move; a new service is constructed in its
// slot before the count that makes it visible is published (release), and
// readers load the count (acquire) before they look at a slot. Services
// leave only with the table. Internal to fs/.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>

#include "common/status.h"
#include "ost/service.h"

namespace sfs::fs {

class OstTable {
 public:
  explicit OstTable(size_t capacity)
      : capacity_(capacity), slots_(std::make_unique<std::unique_ptr<ost::Service>[]>(capacity)) {}
  OstTable(const OstTable&) = delete;
  OstTable& operator=(const OstTable&) = delete;
  // The services die in reverse order of their addition.
  ~OstTable() { Clear(); }

  size_t size() const { return count_.load(std::memory_order_acquire); }
  size_t capacity() const { return capacity_; }
  // REQUIRES: index < size().
  ost::Service& operator[](size_t index) const { return *slots_[index]; }
  // std::out_of_range past the end: callers check indexes from the store
  // first (Filesystem::LoadLayout), so this is a bug, as with vector::at.
  ost::Service& at(size_t index) const {
    if (index >= size()) throw std::out_of_range("no such OST");
    return *slots_[index];
  }
  // The services published so far; later additions are not in the span.
  std::span<const std::unique_ptr<ost::Service>> All() const { return {slots_.get(), size()}; }

  // Publishes `service` as the next OST (its index must be size()).
  // ENOSPC at capacity.
  Status Add(std::unique_ptr<ost::Service> service) {
    std::lock_guard<std::mutex> lock(add_mu_);
    const size_t next = count_.load(std::memory_order_relaxed);
    if (next >= capacity_) {
      return Status::Error(ENOSPC, "a filesystem has at most " + std::to_string(capacity_) +
                                       " OSTs");
    }
    slots_[next] = std::move(service);
    count_.store(next + 1, std::memory_order_release);
    return Status::Ok();
  }

  // At shutdown, once nothing submits any more: destroys every service
  // (each drains its queue first), last added first.
  void Clear() {
    for (size_t i = count_.exchange(0); i > 0; i--) slots_[i - 1].reset();
  }
  // At shutdown, when service threads are stuck in calls that may never
  // return: the services are left to the process's end.
  void Abandon() {
    for (size_t i = count_.exchange(0); i > 0; i--) (void)slots_[i - 1].release();
  }

 private:
  const size_t capacity_;
  const std::unique_ptr<std::unique_ptr<ost::Service>[]> slots_;  // [0, count_) published
  std::atomic<size_t> count_{0};
  std::mutex add_mu_;  // serializes Add
};

}  // namespace sfs::fs
