#include "oss/epoch_relay.h"

#include <cerrno>

namespace sfs::oss {

EpochRelay::EpochRelay(std::chrono::nanoseconds timeout)
    : own_(nrs::CombineEpochData, timeout) {}

uint64_t EpochRelay::Attach(nrs::ParticipantId who, Send send) {
  nrs::EpochCallback replaced;
  std::optional<nrs::Epoch> own_epoch;
  uint64_t token = 0;
  {
    std::lock_guard lock(mu_);
    token = next_token_++;
    Route& route = routes_[who];
    replaced = std::move(route.pending);
    route = Route{token, std::move(send), {}, nrs::Standing::kAbsent};
    if (auto it = own_epoch_.find(who); it != own_epoch_.end()) {
      own_epoch = it->second;
      own_epoch_.erase(it);
    }
  }
  if (replaced) replaced(-ECONNRESET, nullptr);
  // Out of the own hub (one asking there now is refused when its answer
  // comes: NextEpoch's callback), so its OSTs do not wait for it.
  if (own_epoch && own_.StandingOf(who) == nrs::Standing::kMember) {
    own_.LastEpoch(who, *own_epoch);
  }
  return token;
}

void EpochRelay::Detach(nrs::ParticipantId who, uint64_t token) {
  nrs::EpochCallback pending;
  {
    std::lock_guard lock(mu_);
    auto it = routes_.find(who);
    if (it == routes_.end() || it->second.token != token) return;
    pending = std::move(it->second.pending);
    routes_.erase(it);
  }
  if (pending) pending(-ECONNRESET, nullptr);
}

void EpochRelay::Deliver(nrs::ParticipantId who, uint64_t token, nrs::Epoch epoch,
                         nrs::EpochData data) {
  nrs::EpochCallback pending;
  {
    std::lock_guard lock(mu_);
    auto it = routes_.find(who);
    if (it == routes_.end() || it->second.token != token || !it->second.pending) return;
    pending = std::move(it->second.pending);
    it->second.standing = nrs::EpochError(epoch) ? nrs::Standing::kEvicted : nrs::Standing::kMember;
  }
  if (nrs::EpochError(epoch)) return pending(epoch, nullptr);
  pending(epoch, std::make_shared<const nrs::EpochData>(std::move(data)));
}

void EpochRelay::NextEpoch(nrs::ParticipantId who, nrs::Epoch epoch, nrs::EpochData data,
                           nrs::EpochCallback callback) {
  Send send;
  uint64_t token = 0;
  {
    std::lock_guard lock(mu_);
    if (auto it = routes_.find(who); it != routes_.end()) {
      // Its first call on a new stream: its epoch is the own hub's, which
      // the mount's does not know; it joins there afresh.
      if (it->second.standing == nrs::Standing::kAbsent) epoch = nrs::kFirstEpoch;
      it->second.pending = callback;
      it->second.standing = nrs::Standing::kAsked;
      send = it->second.send;
      token = it->second.token;
    }
  }
  if (send) {
    if (send(Kind::kNext, epoch, data)) return;
    // The stream is gone; Detach is on its way. Refused now, so the
    // scheduler asks again (at the own hub once Detach has run).
    nrs::EpochCallback pending;
    {
      std::lock_guard lock(mu_);
      auto it = routes_.find(who);
      if (it != routes_.end() && it->second.token == token) pending = std::move(it->second.pending);
    }
    if (pending) pending(-ECONNRESET, nullptr);
    return;
  }
  own_.NextEpoch(who, epoch, std::move(data),
                 [this, who, callback = std::move(callback)](
                     nrs::Epoch next, std::shared_ptr<const nrs::EpochData> reduced) {
                   bool moved = false;
                   {
                     std::lock_guard lock(mu_);
                     moved = routes_.count(who) != 0;
                     if (!moved && !nrs::EpochError(next)) own_epoch_[who] = next;
                   }
                   if (moved && !nrs::EpochError(next)) {
                     // A stream came while it asked here: it leaves this
                     // hub and joins the mount's.
                     own_.LastEpoch(who, next);
                     return callback(-EAGAIN, nullptr);
                   }
                   callback(next, std::move(reduced));
                 });
}

void EpochRelay::LastEpoch(nrs::ParticipantId who, nrs::Epoch epoch) {
  Send send;
  {
    std::lock_guard lock(mu_);
    if (auto it = routes_.find(who); it != routes_.end()) {
      it->second.standing = nrs::Standing::kAbsent;
      send = it->second.send;
    } else {
      own_epoch_.erase(who);
    }
  }
  if (send) {
    send(Kind::kLast, epoch, {});
    return;
  }
  own_.LastEpoch(who, epoch);
}

void EpochRelay::Evict(nrs::ParticipantId who) {
  Send send;
  {
    std::lock_guard lock(mu_);
    if (auto it = routes_.find(who); it != routes_.end()) {
      it->second.standing = nrs::Standing::kEvicted;
      send = it->second.send;
    }
  }
  if (send) {
    send(Kind::kEvict, 0, {});
    return;
  }
  own_.Evict(who);
}

nrs::Standing EpochRelay::StandingOf(nrs::ParticipantId who) const {
  {
    std::lock_guard lock(mu_);
    if (auto it = routes_.find(who); it != routes_.end()) return it->second.standing;
  }
  return own_.StandingOf(who);
}

}  // namespace sfs::oss
