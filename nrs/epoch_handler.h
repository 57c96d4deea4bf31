// Seed 002's global epoch handler (EH) as a pure state machine: the local
// request schedulers (LRSs, one per OST) each say when they are ready for
// the next epoch and hand in their policy data; when every participant has
// (or the late ones were evicted), the data is reduced with the policy's
// `combine` and every ready participant's callback gets the new epoch number
// and the reduced data, so all OSTs start the epoch with the same decision.
//
// States (seed 002 section 5.3):
//   IDLE     no participant. A NextEpoch call makes its caller the first
//            participant (-> WAITING) and asks for the next epoch
//            (-> CLOSING); a lone participant's epoch then starts at once
//            (-> WAITING).
//   WAITING  an epoch runs; nobody has asked for the next one yet.
//   CLOSING  at least one participant asked; the eviction deadline runs
//            from that first call. When every participant has asked, left
//            (LastEpoch) or been evicted, the epoch starts for the ones that
//            asked (-> WAITING), or, when none remain, -> IDLE.
//
// Epoch numbers are 64-bit, start at 1 and only grow (an overflow, after
// 2^63 epochs, is refused with EOVERFLOW rather than wrapping). A caller
// that does not know the current epoch (first call, or after an eviction)
// passes kFirstEpoch and joins; otherwise it must pass the current number.
// A callback is always made, and within finite time: at once with a
// negative number (-errno) when the call is refused (ETIMEDOUT: the caller
// was evicted and must rejoin with kFirstEpoch; EINVAL: a wrong epoch
// number; EALREADY: it already asked; EMSGSIZE: data over kMaxEpochData),
// or when the epoch starts, which is at the latest `timeout` after the
// first caller asked, provided Tick is called (the owner calls it at least
// every timeout/4).
//
// Callbacks are not run here: every call returns the deliveries to make,
// and the caller runs them once it holds no lock (nrs/epoch_hub.h).
//
// Thread safety: NOT thread-safe; a plain data structure with the clock
// passed in (SharedEpochHub serializes it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "common/status.h"
#include "nrs/request.h"

namespace sfs::nrs {

using Epoch = int64_t;
inline constexpr Epoch kFirstEpoch = 0;  // seed 002's EH_FIRST_EPOCH
inline constexpr bool EpochError(Epoch epoch) { return epoch < 0; }
// The most policy data one participant may hand in; the reduction is never
// longer than the longest input.
inline constexpr size_t kMaxEpochData = 4096;

using EpochData = std::vector<uint8_t>;
// Reduces two participants' data. Must be associative and commutative, and
// must accept any bytes (data from a peer is not trusted to be well formed).
using EpochCombine = std::function<EpochData(const EpochData& a, const EpochData& b)>;
// The start of an epoch (epoch > 0, with the reduced data of every
// participant of it) or a refusal (epoch < 0, data null).
using EpochCallback =
    std::function<void(Epoch epoch, std::shared_ptr<const EpochData> reduced)>;
using ParticipantId = uint32_t;

enum class EhState { kIdle, kWaiting, kClosing };

// Where one participant stands.
enum class Standing { kAbsent, kMember, kAsked, kEvicted };
const char* StandingName(Standing standing);  // "absent", "member", "asked", "evicted"

struct EpochDelivery {
  EpochCallback callback;
  Epoch epoch = 0;
  std::shared_ptr<const EpochData> data;
  void Run() const { callback(epoch, data); }
};
using EpochDeliveries = std::vector<EpochDelivery>;

class EpochHandler {
 public:
  EpochHandler(EpochCombine combine, std::chrono::nanoseconds timeout);
  EpochHandler(const EpochHandler&) = delete;
  EpochHandler& operator=(const EpochHandler&) = delete;

  // Seed 002's eh_next_epoch: `who` is ready for the epoch after `epoch`
  // and hands in `data`; `callback` is delivered as described above.
  EpochDeliveries NextEpoch(ParticipantId who, Epoch epoch, EpochData data,
                            EpochCallback callback, TimePoint now);
  // Seed 002's eh_last_epoch: `who` leaves. A pending callback of its gets
  // -ESHUTDOWN. Returns EINVAL (and still lets it go, so a leaving LRS never
  // holds the others up) when `epoch` is not the current one.
  Status LastEpoch(ParticipantId who, Epoch epoch, TimePoint now, EpochDeliveries* out);
  // Evicts `who` now, as if its timeout had passed (its OST stopped
  // answering): a pending callback gets -ETIMEDOUT, and its next call is
  // answered -ETIMEDOUT until it rejoins with kFirstEpoch.
  EpochDeliveries Evict(ParticipantId who, TimePoint now);
  // Evicts every participant that has not asked `timeout` after the first
  // one did, and starts the epoch without them.
  EpochDeliveries Tick(TimePoint now);

  // When Tick has something to do (the eviction deadline), if ever.
  std::optional<TimePoint> deadline() const { return deadline_; }
  void set_timeout(std::chrono::nanoseconds timeout) { timeout_ = timeout; }
  std::chrono::nanoseconds timeout() const { return timeout_; }

  EhState state() const { return state_; }
  // The epoch running now (0 before the first one).
  Epoch epoch() const { return epoch_; }
  Standing StandingOf(ParticipantId who) const;
  size_t participants() const { return members_.size(); }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Member {
    bool asked = false;
    EpochData data;
    EpochCallback callback;
  };
  // Starts the next epoch if nobody is still to ask; IDLE if nobody is left.
  void MaybeStart(EpochDeliveries* out);
  void Remove(ParticipantId who, int err, EpochDeliveries* out);
  static EpochDelivery Refusal(EpochCallback callback, int err);

  const EpochCombine combine_;
  std::chrono::nanoseconds timeout_;
  EhState state_ = EhState::kIdle;
  Epoch epoch_ = 0;
  std::map<ParticipantId, Member> members_;  // ordered: reductions repeat exactly
  std::set<ParticipantId> evicted_;          // evicted and not yet rejoined
  std::optional<TimePoint> deadline_;        // while CLOSING
  uint64_t evictions_ = 0;
};

}  // namespace sfs::nrs
