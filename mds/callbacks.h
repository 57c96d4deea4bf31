// The MDS's side of the call-backs (rpc/mds.proto, Callbacks): one stream
// per client session; a change's revocations go out on the holders'
// streams, and the change is answered once every holder acknowledged.
// A holder that does not acknowledge within `ack_timeout` (its machine
// died, its process hangs) is evicted, as seed 003's leases end: its
// credits end, its stream is cut, and the change goes on without it.
//
// Thread safety: every method from any thread. The hub's lock is taken
// before a sender's own (Send, Evict run under it and must not call back);
// `done` call-backs run with no lock held.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "mds/cache_credits.h"

namespace sfs::mds {

// One client's stream.
class CallbackSender {
 public:
  virtual ~CallbackSender() = default;
  virtual void Send(uint64_t id, const Revocation& revocation) = 0;
  // Renews the client's lease (a message with nothing to acknowledge).
  virtual void Renew() = 0;
  // Cuts the stream (the client then knows it lost its credits).
  virtual void Evict() = 0;
};

class CallbackHub {
 public:
  using Clock = std::chrono::steady_clock;

  CallbackHub(std::chrono::nanoseconds ack_timeout, CacheCredits* credits)
      : ack_timeout_(ack_timeout), credits_(credits) {}

  // A stream of `session` is up. One that replaces an earlier stream of
  // the session (still ending) settles what waited for the earlier one and
  // ends the session's credits: the client dropped everything it cached
  // when that stream broke, before it opened this one. Returns the
  // stream's generation (increasing across the hub).
  uint64_t Attach(SessionId session, CallbackSender* sender);
  // The generation of the session's current stream; 0: none.
  uint64_t Generation(SessionId session) const;
  // Cuts every stream (the server stops).
  void EvictAll();
  // `sender`'s stream ended. If it was the session's current one, the
  // session's credits end and what waited for its acknowledgements goes
  // on. True if the session has no stream now (false: a newer stream of
  // it took this one's place, and nothing changed).
  bool Detach(SessionId session, CallbackSender* sender);
  // Whether `session` has a stream (only then is it granted credits).
  bool Attached(SessionId session) const;

  // Sends each session what it must drop; `done` runs once each
  // acknowledged, went or was evicted (at once if there is nothing to
  // wait for), on whichever thread that was.
  void Revoke(const std::map<SessionId, Revocation>& revocations, std::function<void()> done,
              Clock::time_point now);
  void Ack(SessionId session, uint64_t id);
  // Evicts the sessions with an acknowledgement overdue, and renews every
  // stream's lease (seed 003's leases, client side: a client that hears
  // nothing for a lease drops its cache, so one cut off from the MDS stops
  // serving it before the MDS, after ack_timeout, lets a change go on
  // without it). Returns how many were evicted.
  size_t Tick(Clock::time_point now);
  // The lease clients are given: half the acknowledgement timeout; Tick
  // renews it at least every third of it.
  std::chrono::milliseconds lease() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(ack_timeout_ / 2);
  }

  // Revocations sent and acknowledgements outstanding since start.
  uint64_t sent() const;
  size_t outstanding() const;

 private:
  struct Outstanding {
    SessionId session;
    uint64_t change;
    Clock::time_point deadline;
  };
  struct Change {
    size_t left = 0;
    std::function<void()> done;
  };
  // Settles callback `id` (acknowledged or given up); appends what can run.
  void Settle(uint64_t id, std::vector<std::function<void()>>& ready);
  void DetachLocked(SessionId session, std::vector<std::function<void()>>& ready);

  const std::chrono::nanoseconds ack_timeout_;
  CacheCredits* const credits_;
  mutable std::mutex mu_;  // guards everything below
  struct Stream {
    CallbackSender* sender;
    uint64_t generation;
  };
  std::map<SessionId, Stream> senders_;
  uint64_t next_generation_ = 1;
  std::map<uint64_t, Outstanding> outstanding_;  // by callback id
  std::map<uint64_t, Change> changes_;           // by change number
  uint64_t next_id_ = 1;
  uint64_t next_change_ = 1;
  uint64_t sent_ = 0;
  Clock::time_point renewed_{};  // when Tick last renewed the leases
};

}  // namespace sfs::mds
