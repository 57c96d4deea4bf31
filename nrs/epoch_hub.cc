#include "nrs/epoch_hub.h"

#include <cerrno>
#include <utility>

#include "common/log.h"

namespace sfs::nrs {
namespace {

void Deliver(const EpochDeliveries& deliveries) {
  for (const EpochDelivery& delivery : deliveries) delivery.Run();
}

}  // namespace

void LocalEpochHub::NextEpoch(ParticipantId who, Epoch epoch, EpochData data,
                              EpochCallback callback) {
  Epoch next = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Epoch& current = epochs_[who];
    if (data.size() > kMaxEpochData) {
      next = -EMSGSIZE;
    } else if (epoch != kFirstEpoch && epoch != current) {
      next = -EINVAL;
    } else {
      next = ++current;
    }
  }
  if (EpochError(next)) return callback(next, nullptr);
  callback(next, std::make_shared<const EpochData>(std::move(data)));
}

void LocalEpochHub::LastEpoch(ParticipantId who, Epoch epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  epochs_.erase(who);
}

Standing LocalEpochHub::StandingOf(ParticipantId who) const {
  std::lock_guard<std::mutex> lock(mu_);
  return epochs_.count(who) != 0 ? Standing::kMember : Standing::kAbsent;
}

SharedEpochHub::SharedEpochHub(EpochCombine combine, std::chrono::nanoseconds timeout)
    : handler_(std::move(combine), timeout) {}

void SharedEpochHub::NextEpoch(ParticipantId who, Epoch epoch, EpochData data,
                               EpochCallback callback) {
  EpochDeliveries deliveries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    deliveries =
        handler_.NextEpoch(who, epoch, std::move(data), std::move(callback), Clock::now());
  }
  Deliver(deliveries);
}

void SharedEpochHub::LastEpoch(ParticipantId who, Epoch epoch) {
  EpochDeliveries deliveries;
  Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    status = handler_.LastEpoch(who, epoch, Clock::now(), &deliveries);
  }
  if (!status.ok()) Logger("nrs")->warn("epoch handler: participant {}: {}", who, status.ToString());
  Deliver(deliveries);
}

void SharedEpochHub::Evict(ParticipantId who) {
  EpochDeliveries deliveries;
  bool evicted = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t before = handler_.evictions();
    deliveries = handler_.Evict(who, Clock::now());
    evicted = handler_.evictions() != before;
  }
  if (evicted) {
    Logger("nrs")->warn("epoch handler: participant {} evicted (out of service); the epochs go "
                        "on without it until it rejoins",
                        who);
  }
  Deliver(deliveries);
}

void SharedEpochHub::Tick(TimePoint now) {
  EpochDeliveries deliveries;
  uint64_t evicted = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t before = handler_.evictions();
    deliveries = handler_.Tick(now);
    evicted = handler_.evictions() - before;
  }
  if (evicted > 0) {
    Logger("nrs")->warn("epoch handler: {} participant(s) missed eh_timeout and were evicted; "
                        "the epochs go on without them",
                        evicted);
  }
  Deliver(deliveries);
}

Standing SharedEpochHub::StandingOf(ParticipantId who) const {
  std::lock_guard<std::mutex> lock(mu_);
  return handler_.StandingOf(who);
}

void SharedEpochHub::SetTimeout(std::chrono::nanoseconds timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  handler_.set_timeout(timeout);
}

Epoch SharedEpochHub::epoch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return handler_.epoch();
}

uint64_t SharedEpochHub::evictions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return handler_.evictions();
}

}  // namespace sfs::nrs
