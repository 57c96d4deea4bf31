#include "fs/nrs_control.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fmt/format.h>

#include "common/log.h"
#include "common/text.h"
#include "fs/nrs_heads.h"
#include "fs/nrs_settings.h"
#include "fs/settings_keys.h"

namespace sfs::fs {
namespace {

// The OST index of "ost<N>.nrs_policies", or -1 when `name` is not one.
int64_t OstOfName(std::string_view name) { return OstOfSettingName(name, ".nrs_policies"); }

constexpr const char* kWeightKey = "nrs_crrn_weight";

constexpr const char* kTunableNames[] = {
    "nrs_crrn_quantum",    "nrs_orr_quantum", "nrs_orr_supported", "nrs_tbf_default_rate",
    "nrs_tbf_class_limit", "nrs_delay_pct",   "nrs_delay_min",     "nrs_delay_max",
    "nrs_hp_ratio",        "nrs_hp_ops",      "nrs_tbf_scope",     "nrs_epoch_ms",
    "nrs_epoch_max_ms",    "nrs_eh_timeout"};

// Tunables that mean something only with several schedulers: a rate shared
// with the other OSTs, the epoch handler's timeout.
bool OnlyForOsts(std::string_view name) {
  return name == "nrs_tbf_scope" || name == "nrs_eh_timeout";
}

bool IsTunable(NrsControl::Scope scope, std::string_view name) {
  if (scope == NrsControl::Scope::kMdt && OnlyForOsts(name)) return false;
  return std::find(std::begin(kTunableNames), std::end(kTunableNames), name) !=
         std::end(kTunableNames);
}

}  // namespace

NrsControl::NrsControl(Scope scope, meta::MetaStore* meta, std::vector<nrs::Target*> targets,
                       const nrs::PolicyRegistry* registry, nrs::EpochHub* epochs)
    : scope_(scope), meta_(meta), registry_(registry), epochs_(epochs) {
  std::lock_guard<std::mutex> lock(mu_);
  targets_ = std::move(targets);
  for (size_t head = 0; head < kHeads; head++) {
    state_.specs[head].assign(targets_.size(), "fifo");
    state_.rules[head] = nrs::TbfRuleSet::Empty();
  }
  state_.weights = nrs::CrrnWeights::Empty();
  // The metadata service is one target: a filesystem-wide share would be
  // whole, and handing its lost tokens back to itself each epoch would let
  // a class back from idle burst beyond its depth. Seed 001's bucket.
  if (scope_ == Scope::kMdt) state_.tunables.tbf_scope = nrs::TbfScope::kOst;
}

bool NrsControl::Handles(Scope scope, std::string_view name) {
  if (scope == Scope::kMdt) {
    if (name.substr(0, kMdtPrefix.size()) != kMdtPrefix) return false;
    name.remove_prefix(kMdtPrefix.size());
  }
  return name == "nrs_policies" || name == "nrs_tbf_rule" || name == kWeightKey ||
         name == "nrs_stats" || IsTunable(scope, name) ||
         (scope == Scope::kOsts && OstOfName(name) >= 0);
}

std::string_view NrsControl::Unprefixed(std::string_view name) const {
  if (scope_ == Scope::kMdt && name.substr(0, kMdtPrefix.size()) == kMdtPrefix) {
    name.remove_prefix(kMdtPrefix.size());
  }
  return name;
}

std::string NrsControl::TargetLabel(size_t target) const {
  return scope_ == Scope::kMdt ? "mdt" : fmt::format("ost{}", target);
}

std::string NrsControl::PolicyKey(size_t head, size_t target) const {
  return fmt::format("{}.nrs_policies.{}", TargetLabel(target), nrs::HeadName(kHeadOf[head]));
}

std::string NrsControl::Key(std::string_view name) const {
  return scope_ == Scope::kMdt ? std::string(kMdtPrefix) + std::string(name) : std::string(name);
}

nrs::Tunables NrsControl::TunablesFor(const State& state, size_t head) const {
  nrs::Tunables tunables = state.tunables;
  tunables.tbf_rules = state.rules[head];
  tunables.crrn_weights = state.weights;
  return tunables;
}

Status NrsControl::Check(const State& next) const {
  for (size_t head = 0; head < kHeads; head++) {
    const nrs::Tunables tunables = TunablesFor(next, head);
    // One dry run per distinct spec is enough: OSTs share the tunables.
    std::vector<std::string> tried;
    for (const std::string& spec : next.specs[head]) {
      if (std::find(tried.begin(), tried.end(), spec) != tried.end()) continue;
      tried.push_back(spec);
      if (scope_ == Scope::kMdt && (spec == "orr" || spec.rfind("orr ", 0) == 0)) {
        return Status::Error(EINVAL, "mdt.nrs_policies: orr orders data requests by object "
                                     "offset; the metadata service has none");
      }
      auto policy = registry_->Create(spec, tunables);
      if (!policy.ok()) return policy.status();
    }
  }
  if (next.tunables.delay_min > next.tunables.delay_max) {
    return Status::Error(EINVAL, fmt::format("{} ({}) is above {} ({})", Key("nrs_delay_min"),
                                             FormatDuration(next.tunables.delay_min),
                                             Key("nrs_delay_max"),
                                             FormatDuration(next.tunables.delay_max)));
  }
  return Status::Ok();
}

std::map<std::string, std::string> NrsControl::Persisted(const State& state) const {
  std::map<std::string, std::string> out;
  for (size_t head = 0; head < kHeads; head++) {
    for (size_t target = 0; target < targets_.size(); target++)
      out[PolicyKey(head, target)] = state.specs[head][target];
    out[Key(fmt::format("nrs_tbf_rule.{}", nrs::HeadName(kHeadOf[head])))] =
        state.rules[head]->Serialize();
  }
  out[Key(kWeightKey)] = state.weights->Serialize();
  const nrs::Tunables& t = state.tunables;
  auto put = [&](std::string_view name, std::string value) {
    if (IsTunable(scope_, name)) out[Key(name)] = std::move(value);
  };
  put("nrs_crrn_quantum", std::to_string(t.crrn_quantum));
  put("nrs_orr_quantum", std::to_string(t.orr_quantum));
  put("nrs_orr_supported", nrs::OrrSupportedName(t.orr_supported));
  put("nrs_tbf_default_rate", std::to_string(t.tbf_default_rate));
  put("nrs_tbf_class_limit", std::to_string(t.tbf_idle_class_limit));
  put("nrs_delay_pct", std::to_string(t.delay_pct));
  put("nrs_delay_min", FormatDuration(t.delay_min));
  put("nrs_delay_max", FormatDuration(t.delay_max));
  put("nrs_hp_ratio", std::to_string(state.hp_ratio));
  put("nrs_hp_ops", nrs::OpSetName(state.hp_ops));
  put("nrs_tbf_scope", nrs::TbfScopeName(t.tbf_scope));
  put("nrs_epoch_ms", std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(state.epoch_length).count()));
  put("nrs_epoch_max_ms", std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.epoch_max).count()));
  put("nrs_eh_timeout", FormatDuration(state.eh_timeout));
  return out;
}

Status NrsControl::Commit(State next) {
  // REQUIRES: mu_ held.
  SFS_RETURN_IF_ERROR(Check(next));
  SFS_RETURN_IF_ERROR(meta_->PutSettings(Persisted(next)));
  Publish(state_, next);
  state_ = std::move(next);
  return Status::Ok();
}

void NrsControl::Publish(const State& previous, const State& next) {
  if (epochs_ != nullptr) epochs_->SetTimeout(next.eh_timeout);
  for (size_t target = 0; target < targets_.size(); target++) {
    nrs::Target& service = *targets_[target];
    service.SetHighPriority(next.hp_ops, next.hp_ratio);
    service.SetEpochLength(next.epoch_length);
    for (size_t head = 0; head < kHeads; head++) {
      const nrs::Head which = kHeadOf[head];
      const nrs::Tunables tunables = TunablesFor(next, head);
      const std::string& spec = next.specs[head][target];
      if (spec == previous.specs[head][target]) {
        service.Retune(which, tunables);
        continue;
      }
      if (spec == "fifo") {
        service.StopPolicy(which);
        continue;
      }
      auto policy = registry_->Create(spec, tunables);
      if (!policy.ok()) {
        // Check() built this very spec a moment ago, so this is a bug.
        Logger("nrs")->error("{} {}: starting '{}' failed after validation: {}",
                             TargetLabel(target), nrs::HeadName(which), spec,
                             policy.status().ToString());
        continue;
      }
      service.StartPolicy(which, std::move(policy).value());
    }
  }
}

std::string NrsControl::MostRun(const std::vector<std::string>& specs) {
  std::string best = "fifo";
  size_t best_count = 0;
  for (size_t i = 0; i < specs.size(); i++) {
    const size_t count = static_cast<size_t>(std::count(specs.begin(), specs.end(), specs[i]));
    if (count > best_count) {
      best = specs[i];
      best_count = count;
    }
  }
  return best;
}

Status NrsControl::AddTarget(nrs::Target* target) {
  std::lock_guard<std::mutex> lock(mu_);
  if (scope_ != Scope::kOsts) return Status::Error(EINVAL, "the metadata service is one target");
  State previous = state_;
  State next = state_;
  for (size_t head = 0; head < kHeads; head++) {
    next.specs[head].push_back(MostRun(state_.specs[head]));
    // What a new service runs before it is told anything.
    previous.specs[head].push_back("fifo");
  }
  targets_.push_back(target);
  // Check is not needed (these very specs run already); stored, then
  // published to every target (the others are retuned with what they had).
  if (Status stored = meta_->PutSettings(Persisted(next)); !stored.ok()) {
    targets_.pop_back();
    return stored;
  }
  Publish(previous, next);
  state_ = std::move(next);
  return Status::Ok();
}

Status NrsControl::Load() {
  auto stored = meta_->AllSettings();
  if (!stored.ok()) return stored.status();
  std::lock_guard<std::mutex> lock(mu_);
  State next = state_;
  const State previous = state_;
  auto log = Logger("nrs");
  auto value_of = [&](const std::string& key) -> const std::string* {
    auto it = stored->find(key);
    return it == stored->end() ? nullptr : &it->second;
  };
  for (const char* name : kTunableNames) {
    if (!IsTunable(scope_, name)) continue;
    const std::string* value = value_of(Key(name));
    if (value == nullptr) continue;
    State trial = next;
    Status applied = ParseTunable(name, *value, &trial);
    if (applied.ok()) {
      next = std::move(trial);
    } else {
      log->error("stored setting {}='{}' is invalid, using the default: {}", Key(name), *value,
                 applied.ToString());
    }
  }
  if (const std::string* text = value_of(Key(kWeightKey))) {
    auto weights = nrs::CrrnWeights::Deserialize(*text);
    if (weights.ok()) {
      next.weights = *weights;
    } else {
      log->error("stored CRR-N weight rules ({}) are invalid, starting without them: {}",
                 Key(kWeightKey), weights.status().ToString());
    }
  }
  for (size_t head = 0; head < kHeads; head++) {
    if (const std::string* text =
            value_of(Key(fmt::format("nrs_tbf_rule.{}", nrs::HeadName(kHeadOf[head]))))) {
      auto rules = nrs::TbfRuleSet::Deserialize(*text);
      if (rules.ok()) {
        next.rules[head] = *rules;
      } else {
        log->error("stored TBF rules of the {} {} head are invalid, starting without them: {}",
                   scope_ == Scope::kMdt ? "metadata" : "OSTs'", nrs::HeadName(kHeadOf[head]),
                   rules.status().ToString());
      }
    }
    // A target with no spec of its own (an OST whose addition was cut short
    // before its spec was stored) runs what most run, as AddTarget says.
    std::vector<bool> unstored(targets_.size(), false);
    for (size_t target = 0; target < targets_.size(); target++) {
      const std::string* spec = value_of(PolicyKey(head, target));
      if (spec == nullptr) {
        unstored[target] = true;
        continue;
      }
      auto policy = registry_->Create(*spec, TunablesFor(next, head));
      if (policy.ok()) {
        next.specs[head][target] = nrs::PolicyRegistry::Canonical(*spec);
      } else {
        log->error("stored policy '{}' of {} ({} head) cannot start, using fifo: {}", *spec,
                   TargetLabel(target), nrs::HeadName(kHeadOf[head]),
                   policy.status().ToString());
      }
    }
    std::vector<std::string> stored_specs;
    for (size_t target = 0; target < targets_.size(); target++) {
      if (!unstored[target]) stored_specs.push_back(next.specs[head][target]);
    }
    const std::string most = MostRun(stored_specs);
    for (size_t target = 0; target < targets_.size(); target++) {
      if (unstored[target]) next.specs[head][target] = most;
    }
  }
  Publish(previous, next);
  state_ = std::move(next);
  return Status::Ok();
}

Status NrsControl::Set(std::string_view full_name, std::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string_view name = Unprefixed(full_name);
  if (name == "nrs_policies" || (scope_ == Scope::kOsts && OstOfName(name) >= 0)) {
    return SetPolicies(name, value);
  }
  if (name == "nrs_tbf_rule") return SetRule(value);
  if (name == kWeightKey) return SetWeight(value);
  if (IsTunable(scope_, name)) {
    State next = state_;
    SFS_RETURN_IF_ERROR(ParseTunable(name, value, &next));
    const nrs::OpSet data = nrs::OpBit(nrs::Op::kRead) | nrs::OpBit(nrs::Op::kWrite);
    const bool data_hp =
        scope_ == Scope::kOsts && (next.hp_ops & data) != 0 && (state_.hp_ops & data) == 0;
    SFS_RETURN_IF_ERROR(Commit(std::move(next)));
    // Allowed, but worth a line: it turns the ratio into a priority for data.
    if (data_hp) Logger("nrs")->info("nrs_hp_ops now includes data ops: {}", value);
    return Status::Ok();
  }
  if (name == "nrs_stats") return Status::Error(EINVAL, Key(name) + " is read-only");
  return Status::Error(EINVAL, "unknown NRS setting " + std::string(full_name));
}

Status NrsControl::SetPolicies(std::string_view name, std::string_view value) {
  const int64_t only_ost = scope_ == Scope::kOsts ? OstOfName(name) : -1;
  if (only_ost >= static_cast<int64_t>(targets_.size())) {
    return Status::Error(ENOENT, fmt::format("there is no OST {} (this filesystem has {})",
                                             only_ost, targets_.size()));
  }
  auto setting = ParsePolicySetting(value);
  if (!setting.ok()) return setting.status();
  State next = state_;
  for (size_t head = 0; head < kHeads; head++) {
    if (!setting->heads.Includes(head)) continue;
    for (size_t target = 0; target < targets_.size(); target++) {
      if (only_ost < 0 || static_cast<size_t>(only_ost) == target) {
        next.specs[head][target] = setting->spec;
      }
    }
  }
  return Commit(std::move(next));
}

Status NrsControl::SetRule(std::string_view value) {
  const RuleSetting setting = ParseRuleSetting(value);
  State next = state_;
  for (size_t head = 0; head < kHeads; head++) {
    if (!setting.heads.Includes(head)) continue;
    auto rules = next.rules[head]->Apply(setting.command);
    if (!rules.ok()) return rules.status();
    next.rules[head] = *rules;
  }
  return Commit(std::move(next));
}

Status NrsControl::SetWeight(std::string_view value) {
  auto weights = state_.weights->Apply(Trim(value));
  if (!weights.ok()) return weights.status();
  State next = state_;
  next.weights = *weights;
  return Commit(std::move(next));
}

Status NrsControl::ParseTunable(std::string_view name, std::string_view value, State* state) {
  nrs::Tunables& t = state->tunables;
  const std::string n(name);
  if (name == "nrs_crrn_quantum" || name == "nrs_orr_quantum") {
    auto q = ParseCount(n, value, 1, 65535);
    if (!q.ok()) return q.status();
    (name == "nrs_crrn_quantum" ? t.crrn_quantum : t.orr_quantum) = static_cast<uint32_t>(*q);
  } else if (name == "nrs_orr_supported") {
    auto s = ParseOrrSupported(value);
    if (!s.ok()) return s.status();
    t.orr_supported = *s;
  } else if (name == "nrs_tbf_default_rate") {
    auto r = ParseCount(n, value, 1, 1'000'000'000);
    if (!r.ok()) return r.status();
    t.tbf_default_rate = *r;
  } else if (name == "nrs_tbf_class_limit") {
    auto l = ParseCount(n, value, 1, 10'000'000);
    if (!l.ok()) return l.status();
    t.tbf_idle_class_limit = *l;
  } else if (name == "nrs_delay_pct") {
    auto p = ParseCount(n, value, 0, 100);
    if (!p.ok()) return p.status();
    t.delay_pct = static_cast<uint32_t>(*p);
  } else if (name == "nrs_delay_min" || name == "nrs_delay_max") {
    auto d = ParseDuration(n, value);
    if (!d.ok()) return d.status();
    (name == "nrs_delay_min" ? t.delay_min : t.delay_max) = *d;
  } else if (name == "nrs_hp_ratio") {
    auto r = ParseCount(n, value, 1, 1000);
    if (!r.ok()) return r.status();
    state->hp_ratio = static_cast<uint32_t>(*r);
  } else if (name == "nrs_hp_ops") {
    auto ops = nrs::ParseOpSet(Trim(value));
    if (!ops.ok()) return Status::Error(EINVAL, "nrs_hp_ops: " + ops.status().message());
    state->hp_ops = *ops;
  } else if (name == "nrs_tbf_scope") {
    const std::string_view scope = Trim(value);
    if (scope == "fs") {
      t.tbf_scope = nrs::TbfScope::kFs;
    } else if (scope == "ost") {
      t.tbf_scope = nrs::TbfScope::kOst;
    } else {
      return Status::Error(EINVAL, "nrs_tbf_scope must be fs or ost, not '" + std::string(scope) +
                                       "'");
    }
  } else if (name == "nrs_epoch_ms") {
    auto ms = ParseCount(n, value, 1, 10000);
    if (!ms.ok()) return ms.status();
    state->epoch_length = std::chrono::milliseconds(*ms);
  } else if (name == "nrs_epoch_max_ms") {
    auto ms = ParseCount(n, value, 1, 10000);
    if (!ms.ok()) return ms.status();
    t.epoch_max = std::chrono::milliseconds(*ms);
  } else if (name == "nrs_eh_timeout") {
    auto d = ParseDuration(n, value);
    if (!d.ok()) return d.status();
    if (*d < std::chrono::milliseconds(10)) {
      return Status::Error(EINVAL, "nrs_eh_timeout must be at least 10ms, not '" +
                                       std::string(Trim(value)) + "'");
    }
    state->eh_timeout = *d;
  } else {
    return Status::Error(EINVAL, "unknown NRS setting " + n);
  }
  return Status::Ok();
}

Result<std::string> NrsControl::Get(std::string_view full_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string_view name = Unprefixed(full_name);
  if (name == "nrs_policies") return PoliciesReport(0, targets_.size());
  if (const int64_t ost = scope_ == Scope::kOsts ? OstOfName(name) : -1; ost >= 0) {
    if (ost >= static_cast<int64_t>(targets_.size())) {
      return Status::Error(ENODATA, fmt::format("there is no OST {}", ost));
    }
    return PoliciesReport(ost, ost + 1);
  }
  if (name == "nrs_tbf_rule") return RulesReport();
  if (name == kWeightKey) return state_.weights->Serialize();
  if (name == "nrs_stats") return StatsReport();
  if (IsTunable(scope_, name)) return Persisted(state_).at(Key(name));
  return Status::Error(ENODATA, "no NRS setting " + std::string(full_name));
}

}  // namespace sfs::fs
