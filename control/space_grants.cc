#include "control/space_grants.h"

#include <algorithm>
#include <thread>

#include <pthread.h>

#include <fmt/format.h>

namespace sfs::control {
namespace {

constexpr uint64_t kUnknownDevice = 1ULL << 63;

// The pool an OST's sample puts it in.
uint64_t PoolKey(uint32_t ost, const ost::SpaceSample& sample) {
  return sample.space && sample.space->device != 0 ? sample.space->device : (kUnknownDevice | ost);
}

// Never granted: the backing filesystem's own blocks for the objects'
// inodes, directories and extent trees. 1 % of it, from 64 KiB to 64 MiB.
uint64_t MarginOf(const ost::SpaceInfo& space) {
  const uint64_t total = space.total_blocks * space.block_size;
  return std::clamp<uint64_t>(total / 100, 64 << 10, 64 << 20);
}

}  // namespace

LocalSpaceHold::~LocalSpaceHold() { grants_->Return(pool_bytes_); }

Result<std::shared_ptr<SpaceHold>> SpaceGrants::Reserve(
    const std::vector<std::pair<uint32_t, uint64_t>>& per_ost, bool may_wait) {
  uint32_t short_ost = 0;
  auto held = TryReserve(per_ost, &short_ost);
  if (held.ok() || held.err() != ENOSPC || !may_wait) return held;
  // Maybe only the estimate is short: space freed by other programs since
  // the sample (a fresh one shows it), or by destroys still running (each
  // is credited as it finishes). Tried again until a sample asked after
  // the last free there ended is in and no destroy is left on the short
  // OST: a free that ran beside a sample may be in neither the sample nor
  // the credits (resource/free_space.h).
  const auto started = Clock::now();
  auto asked = started;
  request_sample_(short_ost);
  for (auto waited = Clock::duration::zero(); waited < kFreshSampleWait;
       waited = Clock::now() - started) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    // Credited since the sample was asked: try it now, and ask again.
    const bool credited = LastFreed(short_ost) > asked;
    if (credited) {
      asked = Clock::now();
      request_sample_(short_ost);
    }
    const bool freeing = destroys_in_flight_(short_ost) > 0;
    const ost::SpaceSample sample = sample_of_(short_ost);
    const bool fresh = sample.at && *sample.at > asked;
    if (!fresh && !freeing && !credited) continue;
    const uint32_t was_short = short_ost;
    held = TryReserve(per_ost, &short_ost);
    if (held.ok() || held.err() != ENOSPC) return held;
    if (short_ost != was_short) {
      asked = Clock::now();  // another OST's pool is short now: its own sample
      request_sample_(short_ost);
    } else if (fresh && !freeing) {
      return held;
    }
  }
  return held;
}

void SpaceGrants::ReserveSoon(std::vector<std::pair<uint32_t, uint64_t>> per_ost,
                              std::function<void(Granted)> done) {
  uint32_t short_ost = 0;
  Granted held = TryReserve(per_ost, &short_ost);
  if (held.ok() || held.err() != ENOSPC) return done(std::move(held));
  {
    std::lock_guard<std::mutex> lock(waiter_mu_);
    if (!waiter_stop_) {
      if (!waiter_.joinable()) {
        waiter_ = std::thread([this] {
          pthread_setname_np(pthread_self(), "space-waiter");
          WaiterLoop();
        });
      }
      asks_.push_back(Ask{std::move(per_ost), std::move(done)});
      asked_.notify_one();
      return;
    }
  }
  done(std::move(held));  // stopping: no one waits any more
}

void SpaceGrants::WaiterLoop() {
  for (;;) {
    Ask ask;
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(waiter_mu_);
      asked_.wait(lock, [&] { return waiter_stop_ || !asks_.empty(); });
      if (asks_.empty()) return;
      ask = std::move(asks_.front());
      asks_.pop_front();
      stopping = waiter_stop_;
    }
    // Asks wait one after the other: each waits at most kFreshSampleWait,
    // and they wait for the same samples.
    ask.done(Reserve(ask.per_ost, /*may_wait=*/!stopping));
  }
}

void SpaceGrants::StopWaiter() {
  std::thread waiter;
  {
    std::lock_guard<std::mutex> lock(waiter_mu_);
    waiter_stop_ = true;
    waiter = std::move(waiter_);
  }
  asked_.notify_all();
  if (waiter.joinable()) waiter.join();
}

Result<std::shared_ptr<SpaceHold>> SpaceGrants::TryReserve(
    const std::vector<std::pair<uint32_t, uint64_t>>& per_ost, uint32_t* short_ost) {
  // Bytes per pool, and each pool's freshest sample, read before the lock.
  struct Want {
    uint64_t bytes = 0;
    uint32_t ost = 0;  // one of its OSTs, to name in an error
    std::optional<ost::SpaceSample> sample;
  };
  std::map<uint64_t, Want> wants;
  for (const auto& [ost, bytes] : per_ost) {
    if (bytes == 0) continue;
    ost::SpaceSample sample = sample_of_(ost);
    // A read-only OST refuses the write itself (EROFS), as before grants:
    // no room to count there.
    if (sample.space && sample.space->read_only) continue;
    const uint64_t key = PoolKey(ost, sample);
    Want& want = wants[key];
    want.bytes += bytes;
    want.ost = ost;
    if (sample.space && sample.at &&
        (!want.sample || !want.sample->at || *sample.at > *want.sample->at)) {
      want.sample = std::move(sample);
    }
  }
  if (wants.empty()) return std::shared_ptr<SpaceHold>();
  std::vector<std::pair<uint64_t, uint64_t>> granted;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [key, want] : wants) {
    auto [it, added] = pools_.try_emplace(key, 0);
    resource::FreeSpace& pool = it->second;
    if (want.sample) {
      const ost::SpaceInfo& space = *want.sample->space;
      pool.set_margin(MarginOf(space));
      // The daemon is root: root's free blocks are what its writes can use.
      pool.Sample(space.free_blocks * space.block_size, *want.sample->at, want.sample->until);
    }
    if (!pool.Get(want.bytes)) {
      *short_ost = want.ost;
      const auto left = pool.left();
      for (const auto& [taken_key, bytes] : granted) pools_.at(taken_key).Cancel(bytes);
      return Status::Error(ENOSPC, fmt::format("OST {} has no room for {} more bytes ({} left "
                                               "beyond writes in flight and a margin)",
                                               want.ost, want.bytes, std::max<int64_t>(0, left.value_or(0))));
    }
    granted.emplace_back(key, want.bytes);
  }
  return std::shared_ptr<SpaceHold>(std::make_shared<LocalSpaceHold>(this, std::move(granted)));
}

void SpaceGrants::Return(const std::vector<std::pair<uint64_t, uint64_t>>& pool_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  // Read under the lock: the pools' marks must see completions in time
  // order (resource/free_space.h).
  const auto now = Clock::now();
  for (const auto& [key, bytes] : pool_bytes) pools_.at(key).Put(bytes, now);
}

void SpaceGrants::Freed(uint32_t ost, uint64_t bytes, Clock::time_point from) {
  const ost::SpaceSample sample = sample_of_(ost);  // before the lock, as TryReserve
  if (sample.space && sample.space->read_only) return;
  std::lock_guard<std::mutex> lock(mu_);
  last_freed_[ost] = Clock::now();
  // A pool not made yet has no sample: it grants everything anyway.
  auto it = pools_.find(PoolKey(ost, sample));
  if (it != pools_.end()) it->second.Freed(bytes, from);
}

SpaceGrants::Clock::time_point SpaceGrants::LastFreed(uint32_t ost) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = last_freed_.find(ost);
  return it == last_freed_.end() ? Clock::time_point{} : it->second;
}

uint64_t SpaceGrants::granted() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t sum = 0;
  for (const auto& [key, pool] : pools_) sum += pool.granted();
  return sum;
}

}  // namespace sfs::control
