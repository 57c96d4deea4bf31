// CRR-N (Lustre nrs_crr.c): batched round robin over clients, a client being
// a job id or a uid. Each request is tagged on arrival with the round and the
// batch it belongs to and served from one heap ordered by (round, batch,
// arrival), so the work per request is O(log queued) however many clients
// there are.
//
// Rounds and batches are nrs/batch_rounds.h's: a client's batch holds at most
// `quantum` x its weight requests (as they were when the batch opened; the
// weight from the request that opened it, nrs/crrn_weights.h), the next one
// opens a batch in the following round, and idling banks no credit.
#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nrs/batch_rounds.h"
#include "nrs/crrn_weights.h"
#include "nrs/heap_remove.h"
#include "nrs/policy.h"

namespace sfs::nrs {
namespace {

struct Entry {
  uint64_t round;
  uint64_t batch;
  uint64_t serial;  // arrival order within a batch
  Request* request;

  // priority_queue is a max-heap: "less" means "served later".
  bool operator<(const Entry& o) const {
    if (round != o.round) return round > o.round;
    if (batch != o.batch) return batch > o.batch;
    return serial > o.serial;
  }
};

const std::string& JobidOf(const Request& request) {
  static const std::string kNone;
  return request.info.jobid != nullptr ? *request.info.jobid : kNone;
}

// ByJobid and ByUid say what a client is.
struct ByJobid {
  using Key = std::string;
  static const std::string& KeyOf(const Request& r) { return JobidOf(r); }
  static std::string Label(const Request& r) { return "jobid=" + JobidOf(r); }
  static constexpr std::string_view kName = "jobid";
};

struct ByUid {
  using Key = uint32_t;
  static uint32_t KeyOf(const Request& r) { return r.info.uid; }
  static std::string Label(const Request& r) { return "uid=" + std::to_string(r.info.uid); }
  static constexpr std::string_view kName = "uid";
};

template <class By>
class CrrnPolicy final : public Policy {
 public:
  explicit CrrnPolicy(const Tunables& tunables)
      : quantum_(tunables.crrn_quantum), weights_(WeightsOf(tunables)) {}

  std::string_view Name() const override { return "crrn"; }

  bool Enqueue(Request* request, TimePoint now) override {
    const auto tag = rounds_.Add(By::KeyOf(*request), quantum_ * weights_->WeightOf(request->info));
    request->policy_data = tag.record;
    heap_.push(Entry{tag.round, tag.batch, next_serial_++, request});
    return true;
  }

  Pick Dequeue(TimePoint now) override {
    if (heap_.empty()) return Pick::Empty();
    const Entry top = heap_.top();
    heap_.pop();
    // Like Lustre, the round being served is that of the next request, so a
    // client arriving after the last batch of a round joins the next one.
    rounds_.Remove(static_cast<typename Rounds::Record*>(top.request->policy_data),
                   heap_.empty() ? top.round : heap_.top().round);
    return Pick::Of(top.request);
  }

  // The request keeps its place in its client's batch counted, as if
  // served: raising it gives the client no extra turn.
  bool Remove(Request* request, TimePoint now) override {
    auto removed = RemoveFromHeap(heap_, [request](const Entry& e) { return e.request == request; });
    if (!removed) return false;
    rounds_.Remove(static_cast<typename Rounds::Record*>(request->policy_data),
                   heap_.empty() ? removed->round : heap_.top().round);
    return true;
  }

  size_t Queued() const override { return heap_.size(); }

  // A new quantum sizes batches opened from now on; open batches keep the
  // allowance they started with (Lustre's cc_quantum).
  void Retune(const Tunables& tunables, TimePoint now) override {
    quantum_ = tunables.crrn_quantum;
    weights_ = WeightsOf(tunables);
  }

  std::string ClassOf(const Request& request) const override { return By::Label(request); }

  std::string Describe() const override {
    std::string out = "quantum=" + std::to_string(quantum_) + " client=" +
                      std::string(By::kName) + " clients=" + std::to_string(rounds_.busy());
    if (!weights_->rules().empty()) {
      out += " weight_rules=" + std::to_string(weights_->rules().size());
    }
    return out;
  }

 private:
  using Rounds = BatchRounds<typename By::Key>;

  static std::shared_ptr<const CrrnWeights> WeightsOf(const Tunables& tunables) {
    return tunables.crrn_weights != nullptr ? tunables.crrn_weights : CrrnWeights::Empty();
  }

  uint32_t quantum_;
  // Shared, immutable; replaced whole by Retune.
  std::shared_ptr<const CrrnWeights> weights_;
  uint64_t next_serial_ = 0;
  Rounds rounds_{Rounds::Full::kAtOpeningQuantum};
  std::priority_queue<Entry> heap_;
};

}  // namespace

Result<std::unique_ptr<Policy>> NewCrrnPolicy(std::string_view args, const Tunables& tunables) {
  if (tunables.crrn_quantum == 0) {
    return Status::Error(EINVAL, "NRS policy 'crrn': quantum must be at least 1");
  }
  if (args.empty() || args == ByJobid::kName) {
    return std::unique_ptr<Policy>(std::make_unique<CrrnPolicy<ByJobid>>(tunables));
  }
  if (args == ByUid::kName) {
    return std::unique_ptr<Policy>(std::make_unique<CrrnPolicy<ByUid>>(tunables));
  }
  return Status::Error(EINVAL, "NRS policy 'crrn' schedules clients by 'jobid' or 'uid', got '" +
                                   std::string(args) + "'");
}

}  // namespace sfs::nrs
