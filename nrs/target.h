// What the settings layer (fs/nrs_control.h) drives on a service that runs
// NRS heads: an OST's (ost::Service) or the metadata service's
// (mdt::Service). The same policies, rules and tunables apply to either;
// each service serializes these calls with its own lock.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "nrs/nrs.h"
#include "nrs/policy.h"
#include "nrs/scheduler.h"
#include "nrs/tunables.h"

namespace sfs::nrs {

class Target {
 public:
  virtual ~Target() = default;

  // Switches the primary policy of one head while requests run (see
  // nrs::Scheduler); requests a throttling policy held are looked at again.
  virtual void StartPolicy(Head head, std::unique_ptr<Policy> policy) = 0;
  virtual void StopPolicy(Head head) = 0;
  // New tunables for the policies of one head (validated by the caller).
  virtual void Retune(Head head, const Tunables& tunables) = 0;
  virtual void SetHighPriority(OpSet ops, uint32_t ratio) = 0;
  // Epochs from the next one on last this long (nrs_epoch_ms).
  virtual void SetEpochLength(std::chrono::nanoseconds length) = 0;

  virtual std::vector<nrs::PolicyStatus> PolicyStatus(Head head,
                                                      const std::vector<std::string>& registered,
                                                      bool with_classes = true) const = 0;
  virtual nrs::HeadStats HeadStats(Head head) const = 0;
  // Why a change of settings cannot reach this target (empty: it can). A
  // settings layer refuses a change it could not apply to all its targets.
  virtual std::string SettingsUnreachable() const { return {}; }
};

}  // namespace sfs::nrs
