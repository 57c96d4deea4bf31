#include "mds/replies.h"

namespace sfs::mds {

uint64_t ReplyLedger::Heard(uint64_t client, uint64_t oldest, Clock::time_point now) {
  std::lock_guard lock(mu_);
  Client& known = clients_[client];
  known.heard = std::max(known.heard, now);
  if (oldest < known.dropped_below + kDropEvery) return 0;
  known.dropped_below = oldest;
  return oldest;
}

void ReplyLedger::Begin(uint64_t client, uint64_t request) {
  std::unique_lock lock(mu_);
  const auto key = std::make_pair(client, request);
  ended_.wait(lock, [&] { return running_.count(key) == 0 && dropping_.count(client) == 0; });
  running_.insert(key);
}

void ReplyLedger::Dropped(uint64_t client) {
  {
    std::lock_guard lock(mu_);
    dropping_.erase(client);
  }
  ended_.notify_all();
}

void ReplyLedger::End(uint64_t client, uint64_t request) {
  {
    std::lock_guard lock(mu_);
    running_.erase(std::make_pair(client, request));
  }
  ended_.notify_all();
}

std::vector<uint64_t> ReplyLedger::Gone(const std::vector<uint64_t>& with_records,
                                        Clock::time_point now) {
  std::vector<uint64_t> gone;
  std::lock_guard lock(mu_);
  for (uint64_t client : with_records) {
    auto it = clients_.find(client);
    const Clock::time_point heard = it != clients_.end() ? it->second.heard : started_;
    if (now - heard < window_) continue;
    // A call of it that runs still may write a record.
    const auto running = running_.lower_bound({client, 0});
    if (running != running_.end() && running->first == client) continue;
    gone.push_back(client);
    dropping_.insert(client);
    if (it != clients_.end()) clients_.erase(it);
  }
  // Clients without records are forgotten once silent for a window too.
  std::erase_if(clients_, [&](const auto& entry) { return now - entry.second.heard >= window_; });
  return gone;
}

}  // namespace sfs::mds
