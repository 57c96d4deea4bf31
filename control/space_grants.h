// Free-space grants of the mount's OSTs (issue 11, resource/free_space.h):
// a write or preallocation is granted room for every byte of every part
// before any part is submitted, and refused with ENOSPC, having started
// nothing, when one of its OSTs cannot take its share. OSTs on one backing
// filesystem share one pool (ost::SpaceInfo::device), so room is counted
// once. Each pool follows its OSTs' background space samples
// (ost::Service::LastSpace), looked at when a grant is asked for. A pool
// counts what was written since its sample as used; space freed by a
// truncate, punch or destroy is credited at once (Freed, from the OSTs'
// measure of it), so what a delete gave back is granted again without
// waiting for a sample. A grant it refuses still asks the OST for a fresh
// sample and waits for it a little (kFreshSampleWait) before refusing
// (space freed by other programs, or a free taken as shown by a sample
// that ran beside it).
//
// Thread safety: every method may be called from any thread; mu_ guards
// the pools and is a leaf (held only around arithmetic; the samples are
// read before it is taken). waiter_mu_ guards the asks handed to the
// waiter thread (ReserveSoon); no other lock is taken under it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/status.h"
#include "ost/service.h"
#include "resource/free_space.h"

namespace sfs::control {

class SpaceGrants;

// Room granted to one op on its OSTs, given back (as written, until the
// next samples show it) when the op is gone, to whoever granted it.
class SpaceHold {
 public:
  SpaceHold() = default;
  virtual ~SpaceHold() = default;
  SpaceHold(const SpaceHold&) = delete;
  SpaceHold& operator=(const SpaceHold&) = delete;
};

// Where the data path asks for room: the mount's own SpaceGrants (the
// one-process mount, the MDS), or a client's grants from the MDS
// (client/room_grants.h). Every method from any thread.
class SpaceGate {
 public:
  using Granted = Result<std::shared_ptr<SpaceHold>>;
  virtual ~SpaceGate() = default;
  // Room for every OST of `per_ost` (OST index, bytes; an OST may appear
  // more than once), all or none. ENOSPC naming the OST otherwise; a
  // caller that may not wait (`may_wait` false: an OST service thread) is
  // refused at once where room would need a wait, and asks ReserveSoon.
  virtual Granted Reserve(const std::vector<std::pair<uint32_t, uint64_t>>& per_ost,
                          bool may_wait) = 0;
  // The same for a caller that must not wait: `done` runs with the answer,
  // at once or on a thread of the gate's own.
  virtual void ReserveSoon(std::vector<std::pair<uint32_t, uint64_t>> per_ost,
                           std::function<void(Granted)> done) = 0;
  // OST `ost` freed `bytes` in a change begun at `from`
  // (ost::Service::SetSpaceFreedListener): room to grant again.
  virtual void Freed(uint32_t ost, uint64_t bytes, std::chrono::steady_clock::time_point from) = 0;
};

// A hold of this mount's own grants.
class LocalSpaceHold final : public SpaceHold {
 public:
  LocalSpaceHold(SpaceGrants* grants, std::vector<std::pair<uint64_t, uint64_t>> pool_bytes)
      : grants_(grants), pool_bytes_(std::move(pool_bytes)) {}
  ~LocalSpaceHold() override;

 private:
  SpaceGrants* const grants_;
  const std::vector<std::pair<uint64_t, uint64_t>> pool_bytes_;  // pool key, bytes
};

class SpaceGrants final : public SpaceGate {
 public:
  using Clock = resource::FreeSpace::Clock;
  // `sample_of(ost)`: the OST's latest background sample;
  // `request_sample(ost)` asks its sampler for a new one;
  // `destroys_in_flight(ost)`: destroys not finished yet that may free
  // room there (ost::Service::DestroysInFlight, and files removed while
  // open, destroyed at their last close).
  SpaceGrants(std::function<ost::SpaceSample(uint32_t)> sample_of,
              std::function<void(uint32_t)> request_sample,
              std::function<uint64_t(uint32_t)> destroys_in_flight)
      : sample_of_(std::move(sample_of)),
        request_sample_(std::move(request_sample)),
        destroys_in_flight_(std::move(destroys_in_flight)) {}
  ~SpaceGrants() { StopWaiter(); }
  SpaceGrants(const SpaceGrants&) = delete;
  SpaceGrants& operator=(const SpaceGrants&) = delete;

  // How long a refused grant waits for a fresh sample of its OST, and for
  // the destroys in flight there (an unlink replies before its objects
  // are gone): a healthy disk answers in milliseconds; a hung one is
  // refused.
  static constexpr std::chrono::milliseconds kFreshSampleWait{250};

  // Grants every OST of `per_ost` its bytes (`per_ost`: OST index, bytes;
  // an OST may appear more than once), all or none; a read-only OST is
  // skipped (it refuses the write itself, EROFS). ENOSPC naming the OST
  // otherwise, after waiting for a fresh sample and the destroys in flight
  // only if `may_wait` (a FUSE worker may; an OST service thread must not
  // hold up its queue).
  Result<std::shared_ptr<SpaceHold>> Reserve(
      const std::vector<std::pair<uint32_t, uint64_t>>& per_ost, bool may_wait) override;

  // Reserve for a caller that must not wait (an OST service thread that
  // admits the op its finished one let through): `done` runs at once with
  // the answer of one try when it grants or refuses for anything but
  // room. A refusal for room is not final there (the estimate may only be
  // low, a free that ran beside a sample): the ask goes to the grants' own
  // waiter thread, which runs Reserve(per_ost, true) and then `done`, so
  // the op waits as one from a FUSE worker does and the service thread
  // goes on with its queue.
  void ReserveSoon(std::vector<std::pair<uint32_t, uint64_t>> per_ost,
                   std::function<void(Granted)> done) override;
  // Answers every ask the waiter holds (with one more try each) and stops
  // it; later asks are answered at once. Before the OSTs go (the answers
  // launch ops).
  void StopWaiter();

  // Its pool grants them again.
  void Freed(uint32_t ost, uint64_t bytes, Clock::time_point from) override;

  // Bytes granted and not yet returned, over every pool (for tests).
  uint64_t granted();

 private:
  friend class LocalSpaceHold;
  void Return(const std::vector<std::pair<uint64_t, uint64_t>>& pool_bytes);
  Clock::time_point LastFreed(uint32_t ost);
  // One try; on refusal, `short_ost` is the OST whose pool was short.
  Result<std::shared_ptr<SpaceHold>> TryReserve(
      const std::vector<std::pair<uint32_t, uint64_t>>& per_ost, uint32_t* short_ost);

  const std::function<ost::SpaceSample(uint32_t)> sample_of_;
  const std::function<void(uint32_t)> request_sample_;
  const std::function<uint64_t(uint32_t)> destroys_in_flight_;

  struct Ask {
    std::vector<std::pair<uint32_t, uint64_t>> per_ost;
    std::function<void(Granted)> done;
  };
  void WaiterLoop();
  std::mutex waiter_mu_;
  std::condition_variable asked_;
  std::deque<Ask> asks_;        // GUARDED_BY(waiter_mu_)
  bool waiter_stop_ = false;    // GUARDED_BY(waiter_mu_)
  std::thread waiter_;          // started by the first ask; GUARDED_BY(waiter_mu_)

  std::mutex mu_;
  // By pool key: the backing filesystem's device, or (OST | 1 << 63)
  // while its device is not known.
  std::map<uint64_t, resource::FreeSpace> pools_;  // GUARDED_BY(mu_)
  // By OST: when its latest Freed came (Reserve asks for a sample after it).
  std::map<uint32_t, Clock::time_point> last_freed_;  // GUARDED_BY(mu_)
};

}  // namespace sfs::control
