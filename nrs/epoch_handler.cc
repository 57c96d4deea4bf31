#include "nrs/epoch_handler.h"

#include <cerrno>
#include <limits>
#include <utility>

namespace sfs::nrs {

const char* StandingName(Standing standing) {
  switch (standing) {
    case Standing::kAbsent: return "absent";
    case Standing::kMember: return "member";
    case Standing::kAsked: return "asked";
    case Standing::kEvicted: return "evicted";
  }
  return "?";
}

EpochHandler::EpochHandler(EpochCombine combine, std::chrono::nanoseconds timeout)
    : combine_(std::move(combine)), timeout_(timeout) {}

EpochDelivery EpochHandler::Refusal(EpochCallback callback, int err) {
  return EpochDelivery{std::move(callback), -static_cast<Epoch>(err), nullptr};
}

Standing EpochHandler::StandingOf(ParticipantId who) const {
  auto it = members_.find(who);
  if (it != members_.end()) return it->second.asked ? Standing::kAsked : Standing::kMember;
  return evicted_.count(who) != 0 ? Standing::kEvicted : Standing::kAbsent;
}

EpochDeliveries EpochHandler::NextEpoch(ParticipantId who, Epoch epoch, EpochData data,
                                        EpochCallback callback, TimePoint now) {
  EpochDeliveries out;
  if (data.size() > kMaxEpochData) {
    out.push_back(Refusal(std::move(callback), EMSGSIZE));
    return out;
  }
  auto it = members_.find(who);
  if (epoch == kFirstEpoch) {
    if (it != members_.end() && it->second.asked) {
      out.push_back(Refusal(std::move(callback), EALREADY));
      return out;
    }
    // Joins (or rejoins after an eviction); a member that lost track of
    // the epoch number is welcome too.
    evicted_.erase(who);
    it = members_.try_emplace(who).first;
  } else if (it == members_.end()) {
    out.push_back(Refusal(std::move(callback), evicted_.count(who) != 0 ? ETIMEDOUT : EINVAL));
    return out;
  } else if (it->second.asked) {
    out.push_back(Refusal(std::move(callback), EALREADY));
    return out;
  } else if (epoch != epoch_) {
    out.push_back(Refusal(std::move(callback), EINVAL));
    return out;
  }
  Member& member = it->second;
  member.asked = true;
  member.data = std::move(data);
  member.callback = std::move(callback);
  if (state_ != EhState::kClosing) {
    // IDLE -> WAITING (the first participant) -> CLOSING (it asked).
    state_ = EhState::kClosing;
    deadline_ = now + timeout_;
  }
  MaybeStart(&out);
  return out;
}

void EpochHandler::MaybeStart(EpochDeliveries* out) {
  if (state_ != EhState::kClosing) return;
  if (members_.empty()) {
    state_ = EhState::kIdle;
    deadline_.reset();
    return;
  }
  for (const auto& [id, member] : members_) {
    if (!member.asked) return;
  }
  if (epoch_ == std::numeric_limits<Epoch>::max()) {
    // Never wraps: everyone is told, and stays where it is.
    for (auto& [id, member] : members_) {
      member.asked = false;
      out->push_back(Refusal(std::move(member.callback), EOVERFLOW));
    }
    state_ = EhState::kWaiting;
    deadline_.reset();
    return;
  }
  std::optional<EpochData> reduced;
  for (const auto& [id, member] : members_) {
    reduced = reduced.has_value() ? combine_(*reduced, member.data) : member.data;
  }
  auto shared = std::make_shared<const EpochData>(std::move(*reduced));
  epoch_++;
  for (auto& [id, member] : members_) {
    member.asked = false;
    member.data.clear();
    out->push_back(EpochDelivery{std::move(member.callback), epoch_, shared});
    member.callback = nullptr;
  }
  state_ = EhState::kWaiting;
  deadline_.reset();
}

void EpochHandler::Remove(ParticipantId who, int err, EpochDeliveries* out) {
  auto it = members_.find(who);
  if (it == members_.end()) return;
  if (it->second.asked) out->push_back(Refusal(std::move(it->second.callback), err));
  members_.erase(it);
}

Status EpochHandler::LastEpoch(ParticipantId who, Epoch epoch, TimePoint now,
                               EpochDeliveries* out) {
  const bool known = members_.count(who) != 0;
  const Epoch current = epoch_;  // the one `who` runs, before the barrier may move on
  evicted_.erase(who);
  Remove(who, ESHUTDOWN, out);
  MaybeStart(out);
  if (known && epoch != current) {
    return Status::Error(EINVAL, "last_epoch with epoch " + std::to_string(epoch) +
                                     " while epoch " + std::to_string(current) + " runs");
  }
  return Status::Ok();
}

EpochDeliveries EpochHandler::Evict(ParticipantId who, TimePoint now) {
  EpochDeliveries out;
  if (members_.count(who) == 0) return out;
  Remove(who, ETIMEDOUT, &out);
  evicted_.insert(who);
  evictions_++;
  MaybeStart(&out);
  return out;
}

EpochDeliveries EpochHandler::Tick(TimePoint now) {
  EpochDeliveries out;
  if (state_ != EhState::kClosing || !deadline_.has_value() || now < *deadline_) return out;
  std::vector<ParticipantId> late;
  for (const auto& [id, member] : members_) {
    if (!member.asked) late.push_back(id);
  }
  for (ParticipantId id : late) {
    members_.erase(id);
    evicted_.insert(id);
    evictions_++;
  }
  MaybeStart(&out);
  return out;
}

}  // namespace sfs::nrs
