// The FIFO policy: the baseline every other policy is compared with, and the
// fallback that keeps a head serving whatever the primary refuses.
#include <algorithm>
#include <deque>
#include <memory>
#include <string_view>

#include "nrs/policy.h"

namespace sfs::nrs {
namespace {

class FifoPolicy final : public Policy {
 public:
  std::string_view Name() const override { return "fifo"; }

  bool Enqueue(Request* request, TimePoint now) override {
    queue_.push_back(request);
    return true;  // the fallback must never refuse, so FIFO never does
  }

  Pick Dequeue(TimePoint now) override {
    if (queue_.empty()) return Pick::Empty();
    Request* next = queue_.front();
    queue_.pop_front();
    return Pick::Of(next);
  }

  bool Remove(Request* request, TimePoint now) override {
    auto it = std::find(queue_.begin(), queue_.end(), request);
    if (it == queue_.end()) return false;
    queue_.erase(it);
    return true;
  }

  size_t Queued() const override { return queue_.size(); }
  bool ServesArrivalAtOnce() const override { return true; }

 private:
  std::deque<Request*> queue_;  // borrowed requests, arrival order
};

}  // namespace

std::unique_ptr<Policy> NewFifoPolicy() { return std::make_unique<FifoPolicy>(); }

}  // namespace sfs::nrs
