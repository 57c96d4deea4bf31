#include "resource/shared_manager.h"

#include <utility>

namespace sfs::resource {

SharedCreditManager::SharedCreditManager(std::unique_ptr<CreditType> type, Tunables tunables,
                                         Now now)
    : now_(std::move(now)), manager_(std::move(type), tunables) {}

OwnerId SharedCreditManager::AddOwner(std::string name) {
  std::lock_guard<std::mutex> lock(mu_);
  const OwnerId owner = manager_.AddOwner(std::move(name));
  owners_.store(manager_.owners(), std::memory_order_relaxed);
  return owner;
}

void SharedCreditManager::RemoveOwner(OwnerId owner) {
  CreditManager::Callbacks callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    manager_.RemoveOwner(owner, now_());
    owners_.store(manager_.owners(), std::memory_order_relaxed);
    callbacks = manager_.TakeCallbacks();
  }
  Run(std::move(callbacks));
}

CreditManager::GetResult SharedCreditManager::Get(OwnerId owner, const Credit& wanted,
                                                  GetFlags flags, CreditManager::Done done,
                                                  CreditManager::OnBlocking blocking) {
  CreditManager::GetResult result;
  CreditManager::Callbacks callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    result = manager_.Get(owner, wanted, flags, std::move(done), std::move(blocking), now_());
    callbacks = manager_.TakeCallbacks();
  }
  Run(std::move(callbacks));
  return result;
}

void SharedCreditManager::Put(Ticket ticket) {
  CreditManager::Callbacks callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    manager_.Put(ticket, now_());
    callbacks = manager_.TakeCallbacks();
  }
  Run(std::move(callbacks));
}

OwnerStats SharedCreditManager::Stats(OwnerId owner) const {
  std::lock_guard<std::mutex> lock(mu_);
  return manager_.Stats(owner);
}

void SharedCreditManager::Run(CreditManager::Callbacks callbacks) {
  for (auto& callback : callbacks) callback();
}

}  // namespace sfs::resource
