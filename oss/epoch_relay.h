// The epoch hub an OSS's OSTs join (seed 002 across processes): the OSTs
// of one filesystem on this server ask it for their epochs as they would
// ask the mount's hub in its own process. For an OST whose mount opened an
// Epochs stream (rpc/oss.proto), the call is relayed to the mount, whose
// hub coordinates every OST of the filesystem, local and remote; for the
// others a hub of this server's own (a SharedEpochHub shared by its OSTs
// of that filesystem) answers, so TBF with nrs_tbf_scope=fs still holds
// among them while no mount is connected.
//
// A participant's first call on a new stream joins the mount's hub afresh
// (kFirstEpoch: its epoch number was the own hub's). It moves back by
// being refused once: a call
// pending on a stream that ends is answered with -ECONNRESET, one pending
// at the own hub when a stream arrives with -EAGAIN, and its scheduler
// joins afresh (kFirstEpoch) where it is routed now (ost/service.h:
// "Evicted ... or any other refusal: join afresh").
//
// Thread safety: every method from any thread. Callbacks and Send run with
// no lock of the relay held. Send is called for one participant by one
// thread at a time (its scheduler asks once at a time), but callers may
// race with Detach: Send must stay callable after Detach (and fail).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "nrs/epoch_data.h"
#include "nrs/epoch_hub.h"

namespace sfs::oss {

class EpochRelay final : public nrs::EpochHub {
 public:
  enum class Kind { kNext, kLast, kEvict };
  // Writes one call on the stream; false if the stream is gone.
  using Send = std::function<bool(Kind kind, nrs::Epoch epoch, const nrs::EpochData& data)>;

  explicit EpochRelay(std::chrono::nanoseconds timeout);

  // `who`'s calls go to `send` from now on; returns a token for Deliver
  // and Detach (a newer Attach for `who` replaces this one).
  uint64_t Attach(nrs::ParticipantId who, Send send);
  // The stream ended: `who` is routed to the own hub again.
  void Detach(nrs::ParticipantId who, uint64_t token);
  // The mount's answer to `who`'s pending NEXT (ignored if none, or if the
  // stream of `token` is no longer `who`'s).
  void Deliver(nrs::ParticipantId who, uint64_t token, nrs::Epoch epoch, nrs::EpochData data);

  const char* Name() const override { return "relay"; }
  void NextEpoch(nrs::ParticipantId who, nrs::Epoch epoch, nrs::EpochData data,
                 nrs::EpochCallback callback) override;
  void LastEpoch(nrs::ParticipantId who, nrs::Epoch epoch) override;
  void Evict(nrs::ParticipantId who) override;
  void Tick(nrs::TimePoint now) override { own_.Tick(now); }
  nrs::Standing StandingOf(nrs::ParticipantId who) const override;
  void SetTimeout(std::chrono::nanoseconds timeout) override { own_.SetTimeout(timeout); }

 private:
  struct Route {
    uint64_t token = 0;
    Send send;
    nrs::EpochCallback pending;  // a NEXT the mount has not answered
    nrs::Standing standing = nrs::Standing::kAbsent;
  };

  nrs::SharedEpochHub own_;
  mutable std::mutex mu_;  // guards routes_, next_token_ and own_epoch_
  std::map<nrs::ParticipantId, Route> routes_;
  uint64_t next_token_ = 1;
  // The epoch the own hub last started for each participant in it, to
  // leave it cleanly when the participant moves to a stream.
  std::map<nrs::ParticipantId, nrs::Epoch> own_epoch_;
};

}  // namespace sfs::oss
