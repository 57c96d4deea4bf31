// What a local request scheduler (one OST's NRS) talks to for its epochs
// (seed 002): eh_next_epoch and eh_last_epoch, with callbacks run by the
// hub once it holds no lock of its own, possibly on the calling thread
// before NextEpoch returns, possibly on another participant's thread.
//
//   LocalEpochHub   completes every call at once with the caller's own
//                   data: policies that do not coordinate, a lone OST, tests.
//   SharedEpochHub  one EpochHandler (nrs/epoch_handler.h) for all OSTs of
//                   a filesystem, behind a mutex; Tick must be called at
//                   least every timeout/4 so evictions happen on time.
//
// Thread safety: every method may be called from any thread. Callbacks run
// with no hub lock held; a callback may call the hub again.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "nrs/epoch_handler.h"

namespace sfs::nrs {

class EpochHub {
 public:
  EpochHub() = default;
  EpochHub(const EpochHub&) = delete;
  EpochHub& operator=(const EpochHub&) = delete;
  virtual ~EpochHub() = default;

  virtual const char* Name() const = 0;  // "local", "shared"
  virtual void NextEpoch(ParticipantId who, Epoch epoch, EpochData data,
                         EpochCallback callback) = 0;
  virtual void LastEpoch(ParticipantId who, Epoch epoch) = 0;
  // Evicts `who` at once (its OST stopped answering); see EpochHandler::Evict.
  virtual void Evict(ParticipantId who) {}
  virtual void Tick(TimePoint now) {}
  virtual Standing StandingOf(ParticipantId who) const = 0;
  virtual void SetTimeout(std::chrono::nanoseconds timeout) {}
};

// Each participant's epochs count on their own: 1, 2, 3 ...
class LocalEpochHub final : public EpochHub {
 public:
  const char* Name() const override { return "local"; }
  void NextEpoch(ParticipantId who, Epoch epoch, EpochData data, EpochCallback callback) override;
  void LastEpoch(ParticipantId who, Epoch epoch) override;
  Standing StandingOf(ParticipantId who) const override;

 private:
  mutable std::mutex mu_;
  std::map<ParticipantId, Epoch> epochs_;  // GUARDED_BY(mu_): each one's current epoch
};

class SharedEpochHub final : public EpochHub {
 public:
  SharedEpochHub(EpochCombine combine, std::chrono::nanoseconds timeout);
  const char* Name() const override { return "shared"; }
  void NextEpoch(ParticipantId who, Epoch epoch, EpochData data, EpochCallback callback) override;
  void LastEpoch(ParticipantId who, Epoch epoch) override;
  void Evict(ParticipantId who) override;
  void Tick(TimePoint now) override;
  Standing StandingOf(ParticipantId who) const override;
  void SetTimeout(std::chrono::nanoseconds timeout) override;

  Epoch epoch() const;
  uint64_t evictions() const;

 private:
  mutable std::mutex mu_;  // a leaf: never held while a callback runs
  EpochHandler handler_;   // GUARDED_BY(mu_)
};

}  // namespace sfs::nrs
