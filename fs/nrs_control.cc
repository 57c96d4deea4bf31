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

std::string PolicyKey(size_t head, size_t ost) {
  return fmt::format("ost{}.nrs_policies.{}", ost, nrs::HeadName(kHeadOf[head]));
}
constexpr const char* kWeightKey = "nrs_crrn_weight";

std::string RulesKey(size_t head) {
  return fmt::format("nrs_tbf_rule.{}", nrs::HeadName(kHeadOf[head]));
}

constexpr const char* kTunableNames[] = {
    "nrs_crrn_quantum",    "nrs_orr_quantum", "nrs_orr_supported", "nrs_tbf_default_rate",
    "nrs_tbf_class_limit", "nrs_delay_pct",   "nrs_delay_min",     "nrs_delay_max",
    "nrs_hp_ratio",        "nrs_hp_ops",      "nrs_tbf_scope",     "nrs_epoch_ms",
    "nrs_epoch_max_ms",    "nrs_eh_timeout"};

bool IsTunable(std::string_view name) {
  return std::find(std::begin(kTunableNames), std::end(kTunableNames), name) !=
         std::end(kTunableNames);
}

}  // namespace

NrsControl::NrsControl(meta::MetaStore* meta, std::vector<ost::Service*> osts,
                       const nrs::PolicyRegistry* registry, nrs::EpochHub* epochs)
    : meta_(meta), osts_(std::move(osts)), registry_(registry), epochs_(epochs) {
  for (size_t head = 0; head < kHeads; head++) {
    state_.specs[head].assign(osts_.size(), "fifo");
    state_.rules[head] = nrs::TbfRuleSet::Empty();
  }
  state_.weights = nrs::CrrnWeights::Empty();
}

bool NrsControl::Handles(std::string_view name) {
  return name == "nrs_policies" || name == "nrs_tbf_rule" || name == kWeightKey || name == "nrs_stats" ||
         IsTunable(name) || OstOfName(name) >= 0;
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
      auto policy = registry_->Create(spec, tunables);
      if (!policy.ok()) return policy.status();
    }
  }
  if (next.tunables.delay_min > next.tunables.delay_max) {
    return Status::Error(EINVAL, fmt::format("nrs_delay_min ({}) is above nrs_delay_max ({})",
                                             FormatDuration(next.tunables.delay_min),
                                             FormatDuration(next.tunables.delay_max)));
  }
  return Status::Ok();
}

std::map<std::string, std::string> NrsControl::Persisted(const State& state) const {
  std::map<std::string, std::string> out;
  for (size_t head = 0; head < kHeads; head++) {
    for (size_t ost = 0; ost < osts_.size(); ost++)
      out[PolicyKey(head, ost)] = state.specs[head][ost];
    out[RulesKey(head)] = state.rules[head]->Serialize();
  }
  out[kWeightKey] = state.weights->Serialize();
  const nrs::Tunables& t = state.tunables;
  out["nrs_crrn_quantum"] = std::to_string(t.crrn_quantum);
  out["nrs_orr_quantum"] = std::to_string(t.orr_quantum);
  out["nrs_orr_supported"] = nrs::OrrSupportedName(t.orr_supported);
  out["nrs_tbf_default_rate"] = std::to_string(t.tbf_default_rate);
  out["nrs_tbf_class_limit"] = std::to_string(t.tbf_idle_class_limit);
  out["nrs_delay_pct"] = std::to_string(t.delay_pct);
  out["nrs_delay_min"] = FormatDuration(t.delay_min);
  out["nrs_delay_max"] = FormatDuration(t.delay_max);
  out["nrs_hp_ratio"] = std::to_string(state.hp_ratio);
  out["nrs_hp_ops"] = nrs::OpSetName(state.hp_ops);
  out["nrs_tbf_scope"] = nrs::TbfScopeName(t.tbf_scope);
  out["nrs_epoch_ms"] = std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(state.epoch_length).count());
  out["nrs_epoch_max_ms"] = std::to_string(
      std::chrono::duration_cast<std::chrono::milliseconds>(t.epoch_max).count());
  out["nrs_eh_timeout"] = FormatDuration(state.eh_timeout);
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
  for (size_t ost = 0; ost < osts_.size(); ost++) {
    ost::Service& service = *osts_[ost];
    service.SetHighPriority(next.hp_ops, next.hp_ratio);
    service.SetEpochLength(next.epoch_length);
    for (size_t head = 0; head < kHeads; head++) {
      const nrs::Head which = kHeadOf[head];
      const nrs::Tunables tunables = TunablesFor(next, head);
      const std::string& spec = next.specs[head][ost];
      if (spec == previous.specs[head][ost]) {
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
        Logger("nrs")->error("ost {} {}: starting '{}' failed after validation: {}", ost,
                             nrs::HeadName(which), spec, policy.status().ToString());
        continue;
      }
      service.StartPolicy(which, std::move(policy).value());
    }
  }
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
    const std::string* value = value_of(name);
    if (value == nullptr) continue;
    State trial = next;
    Status applied = ParseTunable(name, *value, &trial);
    if (applied.ok()) {
      next = std::move(trial);
    } else {
      log->error("stored setting {}='{}' is invalid, using the default: {}", name, *value,
                 applied.ToString());
    }
  }
  if (const std::string* text = value_of(kWeightKey)) {
    auto weights = nrs::CrrnWeights::Deserialize(*text);
    if (weights.ok()) {
      next.weights = *weights;
    } else {
      log->error("stored CRR-N weight rules are invalid, starting without them: {}",
                 weights.status().ToString());
    }
  }
  for (size_t head = 0; head < kHeads; head++) {
    if (const std::string* text = value_of(RulesKey(head))) {
      auto rules = nrs::TbfRuleSet::Deserialize(*text);
      if (rules.ok()) {
        next.rules[head] = *rules;
      } else {
        log->error("stored TBF rules of the {} head are invalid, starting without them: {}",
                   nrs::HeadName(kHeadOf[head]), rules.status().ToString());
      }
    }
    for (size_t ost = 0; ost < osts_.size(); ost++) {
      const std::string* spec = value_of(PolicyKey(head, ost));
      if (spec == nullptr) continue;
      auto policy = registry_->Create(*spec, TunablesFor(next, head));
      if (policy.ok()) {
        next.specs[head][ost] = nrs::PolicyRegistry::Canonical(*spec);
      } else {
        log->error("stored policy '{}' of OST {} ({} head) cannot start, using fifo: {}", *spec,
                   ost, nrs::HeadName(kHeadOf[head]), policy.status().ToString());
      }
    }
  }
  Publish(previous, next);
  state_ = std::move(next);
  return Status::Ok();
}

Status NrsControl::Set(std::string_view name, std::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (name == "nrs_policies" || OstOfName(name) >= 0) return SetPolicies(name, value);
  if (name == "nrs_tbf_rule") return SetRule(value);
  if (name == kWeightKey) return SetWeight(value);
  if (IsTunable(name)) {
    State next = state_;
    SFS_RETURN_IF_ERROR(ParseTunable(name, value, &next));
    const nrs::OpSet data = nrs::OpBit(nrs::Op::kRead) | nrs::OpBit(nrs::Op::kWrite);
    const bool data_hp = (next.hp_ops & data) != 0 && (state_.hp_ops & data) == 0;
    SFS_RETURN_IF_ERROR(Commit(std::move(next)));
    // Allowed, but worth a line: it turns the ratio into a priority for data.
    if (data_hp) Logger("nrs")->info("nrs_hp_ops now includes data ops: {}", value);
    return Status::Ok();
  }
  if (name == "nrs_stats") return Status::Error(EINVAL, "nrs_stats is read-only");
  return Status::Error(EINVAL, "unknown NRS setting " + std::string(name));
}

Status NrsControl::SetPolicies(std::string_view name, std::string_view value) {
  const int64_t only_ost = OstOfName(name);
  if (only_ost >= static_cast<int64_t>(osts_.size())) {
    return Status::Error(
        ENOENT, fmt::format("there is no OST {} (this filesystem has {})", only_ost, osts_.size()));
  }
  auto setting = ParsePolicySetting(value);
  if (!setting.ok()) return setting.status();
  State next = state_;
  for (size_t head = 0; head < kHeads; head++) {
    if (!setting->heads.Includes(head)) continue;
    for (size_t ost = 0; ost < osts_.size(); ost++) {
      if (only_ost < 0 || static_cast<size_t>(only_ost) == ost) {
        next.specs[head][ost] = setting->spec;
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

Result<std::string> NrsControl::Get(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (name == "nrs_policies") return PoliciesReport(0, osts_.size());
  if (const int64_t ost = OstOfName(name); ost >= 0) {
    if (ost >= static_cast<int64_t>(osts_.size())) {
      return Status::Error(ENODATA, fmt::format("there is no OST {}", ost));
    }
    return PoliciesReport(ost, ost + 1);
  }
  if (name == "nrs_tbf_rule") return RulesReport();
  if (name == kWeightKey) return state_.weights->Serialize();
  if (name == "nrs_stats") return StatsReport();
  if (IsTunable(name)) return Persisted(state_).at(std::string(name));
  return Status::Error(ENODATA, "no NRS setting " + std::string(name));
}

}  // namespace sfs::fs
