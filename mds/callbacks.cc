#include "mds/callbacks.h"

#include <algorithm>

#include "common/log.h"

namespace sfs::mds {

uint64_t CallbackHub::Attach(SessionId session, CallbackSender* sender) {
  std::vector<std::function<void()>> ready;
  uint64_t generation;
  {
    std::lock_guard lock(mu_);
    auto it = senders_.find(session);
    if (it != senders_.end() && it->second.sender != sender) DetachLocked(session, ready);
    generation = next_generation_++;
    senders_[session] = {sender, generation};
  }
  for (auto& run : ready) run();
  return generation;
}

uint64_t CallbackHub::Generation(SessionId session) const {
  std::lock_guard lock(mu_);
  auto it = senders_.find(session);
  return it == senders_.end() ? 0 : it->second.generation;
}

void CallbackHub::EvictAll() {
  std::lock_guard lock(mu_);
  for (auto& [session, stream] : senders_) stream.sender->Evict();
}

bool CallbackHub::Detach(SessionId session, CallbackSender* sender) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mu_);
    auto it = senders_.find(session);
    if (it == senders_.end()) return true;  // gone already (evicted, or detached before)
    if (it->second.sender != sender) return false;
    DetachLocked(session, ready);
  }
  for (auto& run : ready) run();
  return true;
}

void CallbackHub::DetachLocked(SessionId session, std::vector<std::function<void()>>& ready) {
  senders_.erase(session);
  credits_->DropSession(session);
  std::vector<uint64_t> ids;
  for (const auto& [id, out] : outstanding_) {
    if (out.session == session) ids.push_back(id);
  }
  for (uint64_t id : ids) Settle(id, ready);
}

bool CallbackHub::Attached(SessionId session) const {
  std::lock_guard lock(mu_);
  return senders_.count(session) != 0;
}

void CallbackHub::Settle(uint64_t id, std::vector<std::function<void()>>& ready) {
  auto it = outstanding_.find(id);
  if (it == outstanding_.end()) return;
  auto change = changes_.find(it->second.change);
  outstanding_.erase(it);
  if (change == changes_.end()) return;
  if (--change->second.left == 0) {
    ready.push_back(std::move(change->second.done));
    changes_.erase(change);
  }
}

void CallbackHub::Revoke(const std::map<SessionId, Revocation>& revocations,
                         std::function<void()> done, Clock::time_point now) {
  {
    std::lock_guard lock(mu_);
    const uint64_t number = next_change_++;
    Change& change = changes_[number];
    for (const auto& [session, revocation] : revocations) {
      auto stream = senders_.find(session);
      if (stream == senders_.end()) {
        // No stream: it cannot have cached anything (credits go only to
        // sessions with one); nothing to wait for.
        credits_->DropSession(session);
        continue;
      }
      const uint64_t id = next_id_++;
      outstanding_[id] = {session, number, now + ack_timeout_};
      change.left++;
      sent_++;
      stream->second.sender->Send(id, revocation);
    }
    if (change.left > 0) {
      change.done = std::move(done);
      return;
    }
    changes_.erase(number);
  }
  done();
}

void CallbackHub::Ack(SessionId session, uint64_t id) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mu_);
    auto it = outstanding_.find(id);
    if (it == outstanding_.end() || it->second.session != session) return;
    Settle(id, ready);
  }
  for (auto& run : ready) run();
}

size_t CallbackHub::Tick(Clock::time_point now) {
  std::vector<std::function<void()>> ready;
  size_t evicted = 0;
  {
    std::lock_guard lock(mu_);
    std::vector<SessionId> late;
    for (const auto& [id, out] : outstanding_) {
      if (out.deadline <= now && std::find(late.begin(), late.end(), out.session) == late.end()) {
        late.push_back(out.session);
      }
    }
    if (now - renewed_ >= lease() / 3) {
      renewed_ = now;
      for (auto& [session, stream] : senders_) stream.sender->Renew();
    }
    for (SessionId session : late) {
      Logger("mds")->warn("client session {} did not answer a call-back within {} ms: evicted, "
                          "its cached credits dropped",
                          session,
                          std::chrono::duration_cast<std::chrono::milliseconds>(ack_timeout_).count());
      auto stream = senders_.find(session);
      if (stream != senders_.end()) stream->second.sender->Evict();
      DetachLocked(session, ready);
      evicted++;
    }
  }
  for (auto& run : ready) run();
  return evicted;
}

uint64_t CallbackHub::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

size_t CallbackHub::outstanding() const {
  std::lock_guard lock(mu_);
  return outstanding_.size();
}

}  // namespace sfs::mds
