#include "fs/space_grants.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

namespace sfs::fs {
namespace {

constexpr uint64_t kUnknownDevice = 1ULL << 63;

// Never granted: the backing filesystem's own blocks for the objects'
// inodes, directories and extent trees. 1 % of it, from 64 KiB to 64 MiB.
uint64_t MarginOf(const ost::SpaceInfo& space) {
  const uint64_t total = space.total_blocks * space.block_size;
  return std::clamp<uint64_t>(total / 100, 64 << 10, 64 << 20);
}

}  // namespace

SpaceHold::~SpaceHold() { grants_->Return(pool_bytes_); }

Result<std::shared_ptr<SpaceHold>> SpaceGrants::Reserve(
    const std::vector<std::pair<uint32_t, uint64_t>>& per_ost, bool may_wait) {
  uint32_t short_ost = 0;
  auto held = TryReserve(per_ost, &short_ost);
  if (held.ok() || held.err() != ENOSPC || !may_wait) return held;
  // Maybe only the estimate is short (space freed since the sample): one
  // fresh sample decides.
  const auto asked = Clock::now();
  request_sample_(short_ost);
  for (auto waited = Clock::duration::zero(); waited < kFreshSampleWait;
       waited = Clock::now() - asked) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const ost::SpaceSample sample = sample_of_(short_ost);
    if (sample.at && *sample.at > asked) return TryReserve(per_ost, &short_ost);
  }
  return held;
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
    const uint64_t key =
        sample.space && sample.space->device != 0 ? sample.space->device : (kUnknownDevice | ost);
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
      pool.Sample(space.free_blocks * space.block_size, *want.sample->at);
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
  return std::make_shared<SpaceHold>(this, std::move(granted));
}

void SpaceGrants::Return(const std::vector<std::pair<uint64_t, uint64_t>>& pool_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  // Read under the lock: the pools' marks must see completions in time
  // order (resource/free_space.h).
  const auto now = Clock::now();
  for (const auto& [key, bytes] : pool_bytes) pools_.at(key).Put(bytes, now);
}

uint64_t SpaceGrants::granted() {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t sum = 0;
  for (const auto& [key, pool] : pools_) sum += pool.granted();
  return sum;
}

}  // namespace sfs::fs
