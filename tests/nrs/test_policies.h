// Policies that exist only to exercise nrs::Scheduler: one that refuses some
// requests and one that throttles with "nothing until t".
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "nrs/policy.h"
#include "nrs/scheduler.h"

namespace sfs::nrs::testing {

// Takes requests with an even object_id and refuses odd ones; serves newest
// first so its order can be told apart from the fallback FIFO's.
class EvenLifoPolicy final : public Policy {
 public:
  // `served` (borrowed, may be null) counts Served() calls.
  explicit EvenLifoPolicy(int* served = nullptr) : served_(served) {}
  std::string_view Name() const override { return "evenlifo"; }
  bool Enqueue(Request* request, TimePoint now) override {
    if (request->info.object_id % 2 != 0) return false;
    stack_.push_back(request);
    return true;
  }
  Pick Dequeue(TimePoint now) override {
    if (stack_.empty()) return Pick::Empty();
    Request* r = stack_.back();
    stack_.pop_back();
    return Pick::Of(r);
  }
  void Served(Request* request, TimePoint now) override {
    if (served_ != nullptr) ++*served_;
  }
  size_t Queued() const override { return stack_.size(); }
  std::string Describe() const override { return "parity=even"; }

 private:
  int* served_;
  std::vector<Request*> stack_;
};

// Holds every request until `release`, then serves them in arrival order.
class HoldPolicy final : public Policy {
 public:
  explicit HoldPolicy(TimePoint release) : release_(release) {}
  std::string_view Name() const override { return "hold"; }
  bool Enqueue(Request* request, TimePoint now) override {
    request->policy_data = this;  // the scheduler must clear it on dequeue
    queue_.push_back(request);
    return true;
  }
  Pick Dequeue(TimePoint now) override {
    if (queue_.empty()) return Pick::Empty();
    if (now < release_) return Pick::Until(release_);
    Request* r = queue_.front();
    queue_.pop_front();
    return Pick::Of(r);
  }
  size_t Queued() const override { return queue_.size(); }

 private:
  TimePoint release_;
  std::deque<Request*> queue_;
};

// The status entries matching a name and role, so tests do not depend on
// the position of an entry.
inline std::vector<PolicyStatus> Entries(const std::vector<PolicyStatus>& all,
                                         std::string_view name, PolicyState state) {
  std::vector<PolicyStatus> out;
  for (const PolicyStatus& s : all) {
    if (s.name == name && s.state == state) out.push_back(s);
  }
  return out;
}

inline PolicyStatus FallbackOf(const std::vector<PolicyStatus>& all) {
  for (const PolicyStatus& s : all) {
    if (s.fallback) return s;
  }
  return {};
}

inline PolicyStatus PrimaryOf(const std::vector<PolicyStatus>& all) {
  for (const PolicyStatus& s : all) {
    if (s.primary) return s;
  }
  return {};
}

}  // namespace sfs::nrs::testing
