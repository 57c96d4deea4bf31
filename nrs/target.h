// What the settings layer (control/nrs_control.h) drives on a service that runs
// NRS heads: an OST's (ost::Service) or the metadata service's
// (mdt::Service). The same policies, rules and tunables apply to either;
// each service serializes these calls with its own lock.
#pragma once

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "nrs/nrs.h"
#include "nrs/policy.h"
#include "nrs/registry.h"
#include "nrs/scheduler.h"
#include "nrs/tunables.h"

namespace sfs::nrs {

// Everything the settings layer decides for one target, whole: what a
// remote target sends to its server (client/remote_ost.h) and what the
// server applies to its own (oss/server.h). Index 0 is the regular head,
// 1 the high-priority one.
struct TargetSettings {
  // Canonical policy spec per head (PolicyRegistry::Canonical); "fifo" =
  // the fallback alone.
  std::array<std::string, 2> specs{"fifo", "fifo"};
  // Per head, with its TBF rules and CRR-N weights (never null once the
  // settings layer made them).
  std::array<Tunables, 2> tunables;
  OpSet hp_ops = kDefaultHpOps;
  uint32_t hp_ratio = kDefaultHpRatio;
  std::chrono::nanoseconds epoch_length = std::chrono::milliseconds(50);
  // The filesystem's epoch handler's (nrs_eh_timeout): a server gives it
  // to the hub its targets share.
  std::chrono::nanoseconds eh_timeout = std::chrono::seconds(1);
};

class Target;
// What Target::Apply does unless a target overrides it: the calls below,
// a policy started only on a head whose spec changed (else retuned).
// `registry` built every spec of `next` before (the caller's check), so a
// failure here is a bug, logged.
void ApplySettings(Target& target, const TargetSettings& previous, const TargetSettings& next,
                   const PolicyRegistry& registry);

class Target {
 public:
  virtual ~Target() = default;

  // The settings layer's way in: `next` replaces `previous` (what this
  // target was last given). A remote target sends `next` to its server.
  virtual void Apply(const TargetSettings& previous, const TargetSettings& next,
                     const PolicyRegistry& registry) {
    ApplySettings(*this, previous, next, registry);
  }

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
