// Run-time control of request schedulers: the user.stripefs.nrs_* settings
// on the mount root for the OSTs' (issue 3), and the same settings under
// "mdt." for the metadata service's (mdt/service.h): one NrsControl each. Validates a change completely
// (including building every policy it would start, as a dry run), stores it
// in the metadata store in one write, then publishes it to the services; a
// refused change leaves both the store and the running configuration as
// they were.
//
// Names (after "user.stripefs."), Lustre's where Lustre has one:
//   nrs_policies          "<policy> [args] [reg|hp]" on every OST; no
//                         qualifier = both heads, as in Lustre
//   ost<N>.nrs_policies   the same for OST N
//   nrs_tbf_rule          "[reg|hp] start|change|stop ..." (nrs/tbf_rules.h)
//   nrs_crrn_weight       "start|change|stop ..." (nrs/crrn_weights.h)
//   per head: nrs_crrn_quantum, nrs_orr_quantum, nrs_orr_supported,
//     nrs_tbf_default_rate, nrs_tbf_class_limit, nrs_delay_pct,
//     nrs_delay_min, nrs_delay_max, nrs_epoch_max_ms (how long the epoch
//     policy serves its chosen group first at most, 1..10000, 100),
//     nrs_orr_quantum_bytes (bytes per ORR batch: 0, the default, for no
//     byte bound, or a size) and nrs_crrn_weight
//   per service: nrs_hp_ratio, nrs_hp_ops, nrs_epoch_ms (how long an epoch
//     runs, seed 002, 1..10000, 50)
//   filesystem-wide (OSTs only):
//     nrs_tbf_scope       fs (default: rate= and bps= hold for the whole
//                         filesystem) or ost (each OST alone, as Lustre)
//     nrs_eh_timeout      a scheduler that has not asked for the next epoch
//                         this long after the first one did is evicted
//                         (duration, plain numbers are seconds), 1s; must
//                         exceed every nrs_epoch_ms and nrs_epoch_max_ms
//   nrs_stats             read-only report
// A per-head name takes "ost<N>." (that OST's), "reg." or "hp." (that head
// on every OST) or both ("ost2.hp.nrs_orr_quantum"); a per-service name
// takes "ost<N>."; without a prefix a name sets every OST and head. A set
// writes every value it names, so a later set without a prefix overrides
// earlier per-OST or per-head ones (as nrs_policies does); a weight
// command applies to each set of weight rules it names, all or none.
// Reading shows the value when all it names agree, else one line per OST.
// The metadata service takes every one of these as mdt.<name> (and
// mdt.hp.<name>, mdt.reg.<name>) except ost<N>., nrs_tbf_scope and
// nrs_eh_timeout (it is a lone scheduler: no other to share a rate with,
// no epoch handler), and refuses orr (it orders data requests by object
// offset).
//
// Thread safety: every method may be called from any thread; changes are
// serialized by mu_. Lock order: mu_ before ost::Service::mu_.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "control/nrs_settings.h"
#include "meta/meta_store.h"
#include "nrs/crrn_weights.h"
#include "nrs/epoch_hub.h"
#include "nrs/nrs.h"
#include "nrs/registry.h"
#include "nrs/tbf_rules.h"
#include "nrs/tunables.h"
#include "nrs/target.h"

namespace sfs::control {

class NrsControl {
 public:
  static constexpr std::chrono::milliseconds kDefaultEpochLength = control::kDefaultEpochLength;
  static constexpr std::chrono::seconds kDefaultEhTimeout = control::kDefaultEhTimeout;

  // Which schedulers one NrsControl drives.
  enum class Scope {
    kOsts,  // every OST's (target i is OST i); settings without a prefix
    kMdt,   // the metadata service's (one target); settings under "mdt."
  };
  static constexpr std::string_view kMdtPrefix = "mdt.";

  // Borrows everything; they outlive this object. `epochs` is the hub the
  // OSTs joined (nrs_eh_timeout tunes it); null for the metadata service.
  NrsControl(Scope scope, meta::MetaStore* meta, std::vector<nrs::Target*> targets,
             const nrs::PolicyRegistry* registry, nrs::EpochHub* epochs);

  // Applies the stored configuration to the services (at mount). A stored
  // value that no longer validates is reported and left out (EIO would keep
  // the filesystem from mounting over a scheduler setting).
  Status Load();

  // Whether `name` (with its "mdt." prefix, for the metadata service) is
  // one of this scope's settings.
  static bool Handles(Scope scope, std::string_view name);
  // REQUIRES: Handles(scope, name) for this control's scope.
  Status Set(std::string_view name, std::string_view value);
  // An OST added to the mounted filesystem (kOsts scope; its index the
  // next target's): it runs, on each head, the policy most OSTs run (ties:
  // the lowest-numbered OST's), with the filesystem's TBF rules, and of
  // each per-head or per-service tunable and of the weight rules the value
  // most OSTs have (ties likewise); stored under its own keys like the
  // others.
  Status AddTarget(nrs::Target* target);
  Result<std::string> Get(std::string_view name) const;

 private:
  static constexpr size_t kHeads = 2;
  struct State {
    // Canonical policy spec per head and target; "fifo" = the fallback alone.
    std::array<std::vector<std::string>, kHeads> specs;
    std::array<std::shared_ptr<const nrs::TbfRuleSet>, kHeads> rules;
    // Per head and target; tunables.crrn_weights never null. A per-service
    // value is equal on both heads of a target, a filesystem-wide one in
    // every cell (Set writes them so).
    std::array<std::vector<TunableValues>, kHeads> cells;
  };
  // What a setting name (its prefixes resolved) reaches.
  struct Reach {
    size_t first = 0, end = 0;  // targets [first, end)
    HeadChoice heads;
  };

  nrs::Tunables TunablesFor(const State& state, size_t head, size_t target) const;
  // Builds every policy `next` runs (a dry run): EINVAL if one refuses;
  // also the checks between values (delay min/max, eh timeout/epochs).
  Status Check(const State& next) const;
  // Validates `next`, persists all of it in one write and publishes it.
  Status Commit(State next);
  // Gives every target its part of `next` (Target::Apply: a remote
  // target's server gets it whole, now or when it answers again).
  void Publish(const State& previous, const State& next);
  nrs::TargetSettings SettingsOf(const State& state, size_t target) const;
  std::map<std::string, std::string> Persisted(const State& state) const;

  // The targets and heads `name` reaches: EINVAL when the prefix does not
  // suit its reach, ENOENT (`missing`) for an OST that does not exist.
  Result<Reach> ReachOf(const SettingName& name, TunableReach reach, int missing) const;
  Status SetPolicies(std::string_view name, std::string_view value);
  Status SetRule(std::string_view value);
  Status SetWeight(const SettingName& name, std::string_view value);
  Status SetTunable(const SettingName& name, const TunableName& tunable, std::string_view value);
  // The per-cell text of a setting over `reach`: the value if all agree,
  // else one line per target.
  std::string CellsReport(const Reach& reach,
                          const std::function<std::string(const TunableValues&)>& text) const;
  // A new target's cells: per head, the value most targets have of each.
  std::array<TunableValues, kHeads> MostCommonCells(const State& state) const;
  // Loads the stored tunables and weight rules into `next`.
  void LoadCells(const std::map<std::string, std::string>& stored, State* next) const;

  // The name without this scope's prefix.
  std::string_view Unprefixed(std::string_view name) const;
  // "ost3", or "mdt" for the metadata service.
  std::string TargetLabel(size_t target) const;
  // The stored key of a policy spec ("ost3.nrs_policies.reg",
  // "mdt.nrs_policies.hp"), of a per-head or per-service value
  // ("ost3.nrs_orr_quantum.hp", "ost3.nrs_epoch_ms") and of any other
  // setting (prefixed for the MDT).
  std::string PolicyKey(size_t head, size_t target) const;
  std::string CellKey(std::string_view name, TunableReach reach, size_t head,
                      size_t target) const;
  std::string Key(std::string_view name) const;

  // The spec most targets run on `head` (ties: the lowest target's); what
  // a target without a stored spec of its own runs.
  static std::string MostRun(const std::vector<std::string>& specs);

  std::string PoliciesReport(size_t first, size_t end) const;
  std::string RulesReport() const;
  std::string StatsReport() const;

  const Scope scope_;
  meta::MetaStore* const meta_;
  const nrs::PolicyRegistry* const registry_;
  nrs::EpochHub* const epochs_;

  mutable std::mutex mu_;  // serializes changes; guards state_ and targets_
  std::vector<nrs::Target*> targets_;  // GUARDED_BY(mu_): grows with AddTarget
  State state_;            // GUARDED_BY(mu_): what the services run now
};

}  // namespace sfs::control
