#include "client/room_grants.h"

#include <cerrno>
#include <set>
#include <string>

namespace sfs::client {

// One write's room, on one or more grants; spent when the write is gone.
class RoomGrants::Hold final : public control::SpaceHold {
 public:
  Hold(RoomGrants* owner, Taken taken) : owner_(owner), taken_(std::move(taken)) {}
  ~Hold() override { owner_->End(taken_); }

 private:
  RoomGrants* const owner_;
  const Taken taken_;
};

namespace {

std::map<uint32_t, uint64_t> Needed(const std::vector<std::pair<uint32_t, uint64_t>>& per_ost) {
  std::map<uint32_t, uint64_t> need;
  for (const auto& [ost, bytes] : per_ost) {
    if (bytes > 0) need[ost] += bytes;
  }
  return need;
}

Status NoRoom(const std::map<uint32_t, uint64_t>& wanted, const std::string& why) {
  const auto& [ost, bytes] = *wanted.begin();
  return Status::Error(ENOSPC, "OST " + std::to_string(ost) + ": no room for " +
                                   std::to_string(bytes) + " more bytes " + why);
}

}  // namespace

control::SpaceGate::Granted RoomGrants::Give(Taken taken) {
  return std::shared_ptr<control::SpaceHold>(std::make_shared<Hold>(this, std::move(taken)));
}

bool RoomGrants::TryTake(const std::map<uint32_t, uint64_t>& need, Taken* taken,
                         const std::shared_ptr<Grant>& fresh) {
  // The grant `ost` takes from: `fresh` where it has room there, else the
  // OST's current one.
  auto source = [&](uint32_t ost) -> const std::shared_ptr<Grant>* {
    if (fresh != nullptr && fresh->room.count(ost) > 0) return &fresh;
    auto it = current_.find(ost);
    return it != current_.end() ? &it->second : nullptr;
  };
  for (const auto& [ost, bytes] : need) {  // all or nothing: looked at first
    const std::shared_ptr<Grant>* grant = source(ost);
    if (grant == nullptr || (*grant)->room.at(ost) < bytes) return false;
  }
  taken->reserve(need.size());
  for (const auto& [ost, bytes] : need) {
    const std::shared_ptr<Grant>& grant = *source(ost);
    grant->room.at(ost) -= bytes;
    grant->held += bytes;
    taken->emplace_back(grant, bytes);
  }
  return true;
}

std::map<uint32_t, uint64_t> RoomGrants::Short(const std::map<uint32_t, uint64_t>& need) const {
  std::map<uint32_t, uint64_t> wanted;
  for (const auto& [ost, bytes] : need) {
    auto it = current_.find(ost);
    if (it == current_.end() || it->second->room.at(ost) < bytes) wanted[ost] = bytes;
  }
  return wanted;
}

void RoomGrants::Retire(uint32_t ost) {
  auto it = current_.find(ost);
  if (it == current_.end()) return;
  std::shared_ptr<Grant> grant = std::move(it->second);
  current_.erase(it);
  --grant->current;
  MaybeDone(grant);
}

void RoomGrants::MaybeDone(const std::shared_ptr<Grant>& grant) {
  if (grant->current == 0) table_.Done(grant);
}

void RoomGrants::End(const Taken& taken) {
  std::lock_guard lock(mu_);
  for (const auto& [grant, bytes] : taken) grant->held -= bytes;
  for (const auto& [grant, bytes] : taken) {
    if (grant->held != 0) continue;
    if (grant->revoking) {
      table_.Drained();
    } else {
      MaybeDone(grant);
    }
  }
}

control::SpaceGate::Granted RoomGrants::Reserve(
    const std::vector<std::pair<uint32_t, uint64_t>>& per_ost, bool may_wait) {
  const std::map<uint32_t, uint64_t> need = Needed(per_ost);
  if (need.empty()) return std::shared_ptr<control::SpaceHold>();
  // Another write may take the room a grant brought before this one does:
  // asked again, a few times.
  for (int round = 0;; ++round) {
    std::map<uint32_t, uint64_t> wanted;
    std::vector<uint64_t> done;
    uint64_t forgotten = 0;
    {
      std::lock_guard lock(mu_);
      Taken taken;
      if (TryTake(need, &taken, nullptr)) return Give(std::move(taken));
      wanted = Short(need);
      if (!may_wait) return NoRoom(wanted, "granted to this client yet");
      if (round == 3) return NoRoom(wanted, "left: this client's other writes took it");
      for (const auto& [ost, bytes] : wanted) Retire(ost);
      done = table_.TakeDone();
      forgotten = table_.forgotten();
    }
    auto asked = ask_(wanted, done);
    std::lock_guard lock(mu_);
    if (!asked.ok()) {
      // A refusal heard the done grants; an unanswered ask may not have.
      if (asked.err() != ENOSPC) table_.GiveBackDone(done);
      return asked.status();
    }
    if (table_.RevokedEarly(asked->id)) continue;  // the MDS freed it already
    auto grant = std::make_shared<Grant>();
    grant->id = asked->id;
    grant->room = asked->bytes;
    table_.Add(grant);
    if (forgotten == table_.forgotten()) {
      for (const auto& [ost, bytes] : grant->room) {
        Retire(ost);  // another write's newer ask may have put one there
        current_[ost] = grant;
        ++grant->current;
      }
    }
    // After a lost stream (Forget ran meanwhile) the grant serves this write
    // only: the MDS frees it with the stream it was given under.
    Taken taken;
    const bool took = TryTake(need, &taken, grant);
    MaybeDone(grant);  // one no OST takes from and nothing holds
    if (took) return Give(std::move(taken));
  }
}

void RoomGrants::ReserveSoon(std::vector<std::pair<uint32_t, uint64_t>> per_ost,
                             std::function<void(Granted)> done) {
  {
    std::unique_lock lock(mu_);
    Taken taken;
    if (TryTake(Needed(per_ost), &taken, nullptr)) {
      lock.unlock();
      return done(Give(std::move(taken)));
    }
  }
  {
    std::lock_guard lock(asker_mu_);
    if (!asker_stop_) {
      if (!asker_.joinable()) asker_ = std::thread([this] { AskerLoop(); });
      asks_.push_back(PendingAsk{std::move(per_ost), std::move(done)});
      asked_.notify_one();
      return;
    }
  }
  done(Reserve(per_ost, /*may_wait=*/true));
}

void RoomGrants::AskerLoop() {
  for (;;) {
    PendingAsk next;
    {
      std::unique_lock lock(asker_mu_);
      asked_.wait(lock, [&] { return asker_stop_ || !asks_.empty(); });
      if (asks_.empty()) return;
      next = std::move(asks_.front());
      asks_.pop_front();
    }
    next.done(Reserve(next.per_ost, /*may_wait=*/true));
  }
}

void RoomGrants::StopAsker() {
  std::thread asker;
  {
    std::lock_guard lock(asker_mu_);
    asker_stop_ = true;
    asker.swap(asker_);
  }
  asked_.notify_all();
  if (asker.joinable()) asker.join();  // it answers what it holds first
}

void RoomGrants::Revoke(const std::vector<uint64_t>& ids) {
  std::unique_lock lock(mu_);
  table_.Revoke(lock, ids, [&](Grant& grant) {
    for (auto cur = current_.begin(); cur != current_.end();) {
      if (cur->second.get() == &grant) {
        cur = current_.erase(cur);
        --grant.current;
      } else {
        ++cur;
      }
    }
  });
}

void RoomGrants::Forget() {
  std::lock_guard lock(mu_);
  for (auto& [ost, grant] : current_) --grant->current;
  current_.clear();
  table_.Forget();
}

size_t RoomGrants::revoking_for_tests() const {
  std::lock_guard lock(mu_);
  return table_.revoking();
}

size_t RoomGrants::held_grants() const {
  std::lock_guard lock(mu_);
  return table_.size();
}

std::vector<uint64_t> RoomGrants::done_for_tests() const {
  std::lock_guard lock(mu_);
  return table_.done();
}

}  // namespace sfs::client
