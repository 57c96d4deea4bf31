// CRR-N (Lustre nrs_crr.c): batched round robin over clients, a client being
// a job id or a uid. Each request is tagged on arrival with the round and the
// batch it belongs to and served from one heap ordered by (round, batch,
// arrival), so the work per request is O(log queued) however many clients
// there are.
//
// A client's batch holds at most `quantum` requests; the next request of a
// client whose batch is full opens a batch in the following round. A client
// with nothing queued has no claim on any round: its next request opens a
// batch at the end of the round being served now, so idling banks no credit.
// Batches are numbered in the order they open, which orders them within a
// round.
#include <cerrno>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nrs/policy.h"

namespace sfs::nrs {
namespace {

// Records of clients with nothing queued are kept for reuse (no allocation
// per request when a client's queue keeps draining), and swept once they
// outnumber both this floor and the busy clients: memory stays within twice
// the busy records plus the floor (a record is under 100 bytes).
constexpr size_t kIdleClientFloor = 16384;

struct Client {
  uint64_t round = 0;   // round of the open batch
  uint64_t batch = 0;   // number of the open batch
  uint32_t left = 0;    // requests the open batch may still take
  uint32_t queued = 0;  // requests held; 0 = idle record
};

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
  explicit CrrnPolicy(const Tunables& tunables) : quantum_(tunables.crrn_quantum) {}

  std::string_view Name() const override { return "crrn"; }

  bool Enqueue(Request* request, TimePoint now) override {
    Client& client = clients_[By::KeyOf(*request)];
    if (client.queued == 0 && client.batch != 0) idle_--;  // a kept idle record
    // A client joins the round being served only if it has had no batch in
    // it: one whose queue ran dry mid-round goes on with its open batch or
    // waits for the next round, so clients that keep re-arriving cannot keep
    // a round alive and starve a backlogged one (Lustre's cc_round check).
    if (client.batch == 0 || client.round < round_) {
      OpenBatch(client, round_);
    } else if (client.left == 0) {
      OpenBatch(client, client.round + 1);
    }
    client.left--;
    client.queued++;
    request->policy_data = &client;
    heap_.push(Entry{client.round, client.batch, next_serial_++, request});
    return true;
  }

  Pick Dequeue(TimePoint now) override {
    if (heap_.empty()) return Pick::Empty();
    const Entry top = heap_.top();
    heap_.pop();
    // Like Lustre, the round being served is that of the next request, so a
    // client arriving after the last batch of a round joins the next one.
    round_ = heap_.empty() ? top.round : heap_.top().round;

    auto* client = static_cast<Client*>(top.request->policy_data);
    if (--client->queued == 0) {
      idle_++;
      if (idle_ > kIdleClientFloor && idle_ > clients_.size() - idle_) SweepIdle();
    }
    return Pick::Of(top.request);
  }

  size_t Queued() const override { return heap_.size(); }

  // A new quantum sizes batches opened from now on; open batches keep the
  // allowance they started with (Lustre's cc_quantum).
  void Retune(const Tunables& tunables, TimePoint now) override {
    quantum_ = tunables.crrn_quantum;
  }

  std::string ClassOf(const Request& request) const override { return By::Label(request); }

  std::string Describe() const override {
    return "quantum=" + std::to_string(quantum_) + " client=" + std::string(By::kName) +
           " clients=" + std::to_string(clients_.size() - idle_);
  }

 private:
  void OpenBatch(Client& client, uint64_t round) {
    client.round = round;
    client.batch = ++last_batch_;  // never 0, which marks a fresh record
    client.left = quantum_;
  }

  void SweepIdle() {
    std::erase_if(clients_, [](const auto& kv) { return kv.second.queued == 0; });
    idle_ = 0;
  }

  uint32_t quantum_;
  uint64_t round_ = 0;  // the round being served
  uint64_t last_batch_ = 0;
  uint64_t next_serial_ = 0;
  // Element addresses are stable, so queued requests point at their client.
  std::unordered_map<typename By::Key, Client> clients_;
  size_t idle_ = 0;  // records in clients_ with nothing queued
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
