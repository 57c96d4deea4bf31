// Delay (Lustre nrs_delay.c), for fault testing: delay_pct percent of the
// requests may start only after a uniform random wait in [delay_min,
// delay_max]; the others may start at once. Requests are served in order of
// their start time (arrival order among equal times), so a held request never
// blocks one that is due.
//
// Unlike Lustre, which hands the requests it does not delay to the fallback
// policy, this one keeps them, so every request is served in one start-time
// order: the scheduler asks the primary first, so in the fallback a request
// that was not delayed would also wait behind every delayed one come due.
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <string_view>

#include "nrs/heap_remove.h"
#include "nrs/policy.h"

namespace sfs::nrs {
namespace {

using std::chrono::nanoseconds;

// Lustre's bound for nrs_delay_max (65535 s); it also keeps now + delay far
// from overflowing a TimePoint.
constexpr nanoseconds kMaxDelay = std::chrono::seconds(65535);

struct Entry {
  TimePoint start;
  uint64_t serial;  // arrival order among equal start times
  Request* request;

  // priority_queue is a max-heap: "less" means "served later".
  bool operator<(const Entry& o) const {
    if (start != o.start) return start > o.start;
    return serial > o.serial;
  }
};

uint64_t SeedOf(uint64_t random_seed) {
  return random_seed != 0 ? random_seed
                          : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
}

// Whole milliseconds print as integers ("10"), anything finer to the
// microsecond ("0.500").
std::string Millis(nanoseconds d) {
  char text[32];
  if (d.count() % 1000000 == 0) {
    std::snprintf(text, sizeof(text), "%lld", static_cast<long long>(d.count() / 1000000));
  } else {
    std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(d.count()) / 1e6);
  }
  return text;
}

class DelayPolicy final : public Policy {
 public:
  explicit DelayPolicy(const Tunables& tunables)
      : seed_(tunables.random_seed), random_(SeedOf(tunables.random_seed)) {
    Take(tunables);
  }

  std::string_view Name() const override { return "delay"; }

  bool Enqueue(Request* request, TimePoint now) override {
    TimePoint start = now;
    if (pct_ == 100 || (pct_ > 0 && percent_(random_) < pct_)) start += nanoseconds(wait_(random_));
    heap_.push(Entry{start, next_serial_++, request});
    return true;
  }

  Pick Dequeue(TimePoint now) override {
    if (heap_.empty()) return Pick::Empty();
    const Entry& top = heap_.top();
    if (top.start > now) return Pick::Until(top.start);
    Request* request = top.request;
    heap_.pop();
    return Pick::Of(request);
  }

  // Its delay is not waited out: the request is wanted now.
  bool Remove(Request* request, TimePoint now) override {
    return RemoveFromHeap(heap_, [request](const Entry& e) { return e.request == request; })
        .has_value();
  }

  size_t Queued() const override { return heap_.size(); }

  // New settings apply to requests enqueued from now on; held requests keep
  // their start times. The generator is reseeded only when the seed itself
  // changed, so an unrelated setting does not replay the same delays.
  void Retune(const Tunables& tunables, TimePoint now) override {
    Take(tunables);
    if (tunables.random_seed != seed_) {
      seed_ = tunables.random_seed;
      random_.seed(SeedOf(seed_));
    }
  }

  std::string Describe() const override {
    return "pct=" + std::to_string(pct_) + " min_ms=" + Millis(nanoseconds(wait_.min())) +
           " max_ms=" + Millis(nanoseconds(wait_.max()));
  }

 private:
  void Take(const Tunables& tunables) {
    pct_ = tunables.delay_pct;
    wait_ = std::uniform_int_distribution<int64_t>(tunables.delay_min.count(),
                                                   tunables.delay_max.count());
  }

  uint32_t pct_ = 0;
  uint64_t seed_;  // as configured; 0 = from std::random_device
  std::mt19937_64 random_;
  std::uniform_int_distribution<uint32_t> percent_{0, 99};
  std::uniform_int_distribution<int64_t> wait_;  // nanoseconds
  uint64_t next_serial_ = 0;
  std::priority_queue<Entry> heap_;
};

}  // namespace

Result<std::unique_ptr<Policy>> NewDelayPolicy(std::string_view args, const Tunables& tunables) {
  if (!args.empty()) {
    return Status::Error(EINVAL,
                         "NRS policy 'delay' takes no arguments, got '" + std::string(args) + "'");
  }
  if (tunables.delay_pct > 100) {
    return Status::Error(EINVAL, "NRS policy 'delay': delay_pct " +
                                     std::to_string(tunables.delay_pct) + " is over 100");
  }
  if (tunables.delay_min < nanoseconds::zero()) {
    return Status::Error(EINVAL, "NRS policy 'delay': delay_min is negative");
  }
  if (tunables.delay_min > tunables.delay_max) {
    return Status::Error(EINVAL, "NRS policy 'delay': delay_min " + Millis(tunables.delay_min) +
                                     " ms is over delay_max " + Millis(tunables.delay_max) + " ms");
  }
  if (tunables.delay_max > kMaxDelay) {
    return Status::Error(EINVAL, "NRS policy 'delay': delay_max is over 65535 s");
  }
  return std::unique_ptr<Policy>(std::make_unique<DelayPolicy>(tunables));
}

}  // namespace sfs::nrs
