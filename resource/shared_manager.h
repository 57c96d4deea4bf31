// A CreditManager for threads: one lock around it, the clock injected, and
// the call-backs (grants of queued requests, revocation notices) run by
// the calling thread after it let go of the lock, so a call-back may call
// back in.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>

#include "resource/manager.h"

namespace sfs::resource {

class SharedCreditManager {
 public:
  using Now = std::function<Clock::time_point()>;

  SharedCreditManager(std::unique_ptr<CreditType> type, Tunables tunables, Now now);
  SharedCreditManager(const SharedCreditManager&) = delete;
  SharedCreditManager& operator=(const SharedCreditManager&) = delete;

  OwnerId AddOwner(std::string name);
  void RemoveOwner(OwnerId owner);
  // As CreditManager::Get. A queued request's Done runs on the thread whose
  // Put or RemoveOwner let it in; an OnBlocking on the thread of the Get
  // (or Put) that had to wait for it.
  CreditManager::GetResult Get(OwnerId owner, const Credit& wanted, GetFlags flags,
                               CreditManager::Done done, CreditManager::OnBlocking blocking);
  void Put(Ticket ticket);
  OwnerStats Stats(OwnerId owner) const;
  // Live sub-owners, without the lock: a hint (it may change at once).
  size_t owners() const { return owners_.load(std::memory_order_relaxed); }

 private:
  void Run(CreditManager::Callbacks callbacks);

  const Now now_;
  mutable std::mutex mu_;
  CreditManager manager_;  // GUARDED_BY(mu_)
  std::atomic<size_t> owners_{0};  // manager_.owners(), written under mu_
};

}  // namespace sfs::resource
