// The epoch policy (seed 002's use case; issue 10 item 2): requests are
// grouped by job id or uid; each epoch the epoch handler's reduction of
// every OST's report (nrs/epoch_groups.h) names one group, and every OST
// serves that group's queued requests first, oldest first, so a job's
// striped request is served at about the same time on all its OSTs rather
// than waiting for its unluckiest part. When the chosen group has nothing
// queued here, the other groups are served in arrival order (no bandwidth
// is left idle), and the OST asks for the next epoch at once (EpochDone);
// otherwise it asks after nrs_epoch_max_ms.
//
// Work per request is O(log groups): per-group FIFOs plus an ordered index
// of each group's oldest request; a report is O(kEpochGroupEntries).
//
// Epoch and window: a report carries the epoch this OST is in and the
// window every OST derived from the last reduction; the reduction drops
// data of an older epoch (an OST rejoining, or just switched to this
// policy, reports for epoch 0 or an old one: its groups count again from
// the next epoch).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nrs/epoch_groups.h"
#include "nrs/policy.h"

namespace sfs::nrs {
namespace {

struct ByJobid {
  static constexpr std::string_view kName = "jobid";
  static std::string_view JobidOf(const Request& r) {
    return r.info.jobid != nullptr ? std::string_view(*r.info.jobid) : std::string_view();
  }
  static uint64_t KeyOf(const Request& r) { return EpochGroupKeyOfJobid(JobidOf(r)); }
  static std::string Label(const Request& r) { return "jobid=" + std::string(JobidOf(r)); }
};

struct ByUid {
  static constexpr std::string_view kName = "uid";
  static uint64_t KeyOf(const Request& r) { return EpochGroupKeyOfUid(r.info.uid); }
  static std::string Label(const Request& r) { return "uid=" + std::to_string(r.info.uid); }
};

template <class By>
class EpochPolicy final : public Policy {
 public:
  explicit EpochPolicy(const Tunables& tunables) : epoch_max_(tunables.epoch_max) {}

  std::string_view Name() const override { return "epoch"; }

  bool Enqueue(Request* request, TimePoint now) override {
    const uint64_t key = By::KeyOf(*request);
    auto [it, fresh] = groups_.try_emplace(key);
    Group& group = it->second;
    if (fresh) group.label = By::Label(*request);
    const uint64_t serial = next_serial_++;
    if (group.queue.empty()) fronts_.emplace(serial, key);
    group.queue.push_back(Entry{serial, now, request});
    group.bytes += request->info.length;
    queued_++;
    return true;
  }

  Pick Dequeue(TimePoint now) override {
    if (queued_ == 0) return Pick::Empty();
    auto group = chosen_.has_value() ? groups_.find(*chosen_) : groups_.end();
    const bool chosen_queued = group != groups_.end();
    if (!chosen_queued) group = groups_.find(fronts_.begin()->second);  // the oldest of any group
    Request* request = PopFront(group);
    // Checked on the request served, not on how it was picked.
    order_.Served(chosen_.has_value() && By::KeyOf(*request) == *chosen_, chosen_queued);
    return Pick::Of(request);
  }

  bool Remove(Request* request, TimePoint now) override {
    auto group = groups_.find(By::KeyOf(*request));
    if (group == groups_.end()) return false;
    std::deque<Entry>& queue = group->second.queue;
    auto it = std::find_if(queue.begin(), queue.end(),
                           [request](const Entry& e) { return e.request == request; });
    if (it == queue.end()) return false;
    if (it == queue.begin()) {
      PopFront(group);
    } else {
      group->second.bytes -= request->info.length;
      queued_--;
      queue.erase(it);
    }
    return true;
  }

  size_t Queued() const override { return queued_; }

  // A new nrs_epoch_max_ms counts from the next epoch on.
  void Retune(const Tunables& tunables, TimePoint now) override { epoch_max_ = tunables.epoch_max; }

  std::string ClassOf(const Request& request) const override { return By::Label(request); }

  std::string Describe() const override {
    std::string chosen = "none";
    if (chosen_.has_value()) {
      auto it = groups_.find(*chosen_);
      chosen = it != groups_.end() ? it->second.label : "elsewhere";
    }
    return "group=" + std::string(By::kName) + " groups=" + std::to_string(groups_.size()) +
           " epoch=" + std::to_string(epoch_) + " chosen=" + chosen + " " + order_.Describe() +
           " epoch_max_ms=" +
           std::to_string(
               std::chrono::duration_cast<std::chrono::milliseconds>(epoch_max_).count());
  }

  EpochKind EpochDataKind() const override { return EpochKind::kEpochGroups; }

  std::vector<uint8_t> ReportEpoch(TimePoint now) override {
    // Only the first kEpochGroupEntries groups from the window on survive
    // any reduction (epoch_groups.h), and groups_ is ordered by key: the
    // report walks from the window, wrapping, and costs
    // O(kEpochGroupEntries) however many groups wait here.
    EpochGroups report{1, epoch_, window_, {}};
    report.entries.reserve(std::min(groups_.size(), kEpochGroupEntries));
    auto add = [&](const std::pair<const uint64_t, Group>& item) {
      const Group& group = item.second;
      const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(
          now - group.queue.front().enqueued);
      report.entries.push_back(EpochGroupEntry{
          item.first, group.bytes,
          static_cast<uint32_t>(std::min<size_t>(group.queue.size(), UINT32_MAX)),
          static_cast<uint32_t>(std::clamp<int64_t>(waited.count(), 0, UINT32_MAX))});
    };
    for (auto it = groups_.lower_bound(window_);
         it != groups_.end() && report.entries.size() < kEpochGroupEntries; ++it) {
      add(*it);
    }
    for (auto it = groups_.begin();
         it != groups_.end() && it->first < window_ && report.entries.size() < kEpochGroupEntries;
         ++it) {
      add(*it);
    }
    return EncodeEpochGroups(std::move(report));
  }

  void StartEpoch(Epoch epoch, std::span<const uint8_t> reduced, TimePoint now) override {
    epoch_ = epoch;
    const EpochGroups groups = DecodeEpochGroups(reduced);
    chosen_ = ChooseEpochGroup(groups, epoch);
    window_ = NextEpochGroupWindow(groups, epoch);
    order_.StartEpoch();
  }

  bool EpochDone(TimePoint now) const override {
    // Nothing chosen: done as soon as something waits here, so the next
    // reduction can choose it.
    if (!chosen_.has_value()) return queued_ > 0;
    return groups_.count(*chosen_) == 0;
  }

  std::optional<std::chrono::nanoseconds> EpochLength() const override { return epoch_max_; }

 private:
  struct Entry {
    uint64_t serial;
    TimePoint enqueued;
    Request* request;
  };
  struct Group {
    std::string label;          // for Describe
    std::deque<Entry> queue;    // arrival order; never empty while in groups_
    uint64_t bytes = 0;         // sum of info.length queued
  };

  using Groups = std::map<uint64_t, Group>;

  // REQUIRES: `it` is a group of groups_.
  Request* PopFront(typename Groups::iterator it) {
    Group& group = it->second;
    const Entry front = group.queue.front();
    group.queue.pop_front();
    group.bytes -= front.request->info.length;
    queued_--;
    fronts_.erase(front.serial);
    if (group.queue.empty()) {
      groups_.erase(it);
    } else {
      fronts_.emplace(group.queue.front().serial, it->first);
    }
    return front.request;
  }

  std::chrono::nanoseconds epoch_max_;
  uint64_t next_serial_ = 0;
  size_t queued_ = 0;
  // Groups with requests queued here, ordered by group key.
  Groups groups_;
  // Serial of each group's oldest queued request -> group key.
  std::map<uint64_t, uint64_t> fronts_;
  Epoch epoch_ = kFirstEpoch;
  std::optional<uint64_t> chosen_;  // the group key the last epoch chose
  uint64_t window_ = 0;  // where the groups this OST reports start (epoch_groups.h)
  EpochServeOrder order_;  // served_chosen, order_violations, epochs_chosen_first
};

}  // namespace

Result<std::unique_ptr<Policy>> NewEpochPolicy(std::string_view args, const Tunables& tunables) {
  if (tunables.epoch_max <= std::chrono::nanoseconds::zero()) {
    return Status::Error(EINVAL, "NRS policy 'epoch': nrs_epoch_max_ms must be positive");
  }
  if (args.empty() || args == ByJobid::kName) {
    return std::unique_ptr<Policy>(std::make_unique<EpochPolicy<ByJobid>>(tunables));
  }
  if (args == ByUid::kName) {
    return std::unique_ptr<Policy>(std::make_unique<EpochPolicy<ByUid>>(tunables));
  }
  return Status::Error(EINVAL, "NRS policy 'epoch' groups requests by 'jobid' or 'uid', got '" +
                                   std::string(args) + "'");
}

}  // namespace sfs::nrs
