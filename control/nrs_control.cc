#include "control/nrs_control.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>

#include <fmt/format.h>

#include "common/log.h"
#include "common/text.h"
#include "control/nrs_heads.h"
#include "control/nrs_settings.h"

namespace sfs::control {
namespace {

constexpr std::string_view kWeightKey = "nrs_crrn_weight";

// The OST index of "ost<N>.nrs_policies", or -1 when `name` is not one.
int64_t OstOfName(std::string_view name) {
  const SettingName split = SplitSettingName(name);
  return split.base == "nrs_policies" && !split.head_given ? split.ost : -1;
}

// The tunable `base` names in `scope`, or null. The metadata service has
// no filesystem-wide ones: no other scheduler to share a rate with, no
// epoch handler.
const TunableName* TunableOf(NrsControl::Scope scope, std::string_view base) {
  const TunableName* tunable = FindTunable(base);
  if (tunable == nullptr) return nullptr;
  if (scope == NrsControl::Scope::kMdt && tunable->reach == TunableReach::kFilesystem) {
    return nullptr;
  }
  return tunable;
}

std::string HeadLabel(size_t head) { return nrs::HeadName(kHeadOf[head]); }

// The value most of `values` have (ties: the first's); "" if none.
std::string MostCommon(const std::vector<std::string>& values) {
  std::string best;
  size_t best_count = 0;
  for (const std::string& v : values) {
    const size_t count = static_cast<size_t>(std::count(values.begin(), values.end(), v));
    if (count > best_count) {
      best = v;
      best_count = count;
    }
  }
  return best;
}

}  // namespace

NrsControl::NrsControl(Scope scope, meta::MetaStore* meta, std::vector<nrs::Target*> targets,
                       const nrs::PolicyRegistry* registry, nrs::EpochHub* epochs)
    : scope_(scope), meta_(meta), registry_(registry), epochs_(epochs) {
  std::lock_guard<std::mutex> lock(mu_);
  targets_ = std::move(targets);
  TunableValues defaults;
  defaults.tunables.crrn_weights = nrs::CrrnWeights::Empty();
  // The metadata service is one target: a filesystem-wide share would be
  // whole, and handing its lost tokens back to itself each epoch would let
  // a class back from idle burst beyond its depth. Seed 001's bucket.
  if (scope_ == Scope::kMdt) defaults.tunables.tbf_scope = nrs::TbfScope::kOst;
  for (size_t head = 0; head < kHeads; head++) {
    state_.specs[head].assign(targets_.size(), "fifo");
    state_.rules[head] = nrs::TbfRuleSet::Empty();
    state_.cells[head].assign(targets_.size(), defaults);
  }
}

bool NrsControl::Handles(Scope scope, std::string_view name) {
  if (scope == Scope::kMdt) {
    if (name.substr(0, kMdtPrefix.size()) != kMdtPrefix) return false;
    name.remove_prefix(kMdtPrefix.size());
  }
  const SettingName split = SplitSettingName(name);
  if (scope == Scope::kMdt && split.ost >= 0) return false;
  // Prefixes that do not suit the name are refused by Set and Get, with
  // a message saying why, rather than reported as an unknown setting.
  if (split.base == "nrs_policies") return !split.head_given;
  if (split.base == "nrs_tbf_rule" || split.base == "nrs_stats") {
    return split.ost < 0 && !split.head_given;
  }
  return split.base == kWeightKey || TunableOf(scope, split.base) != nullptr;
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
  return fmt::format("{}.nrs_policies.{}", TargetLabel(target), HeadLabel(head));
}

std::string NrsControl::CellKey(std::string_view name, TunableReach reach, size_t head,
                                size_t target) const {
  switch (reach) {
    case TunableReach::kHead:
      return fmt::format("{}.{}.{}", TargetLabel(target), name, HeadLabel(head));
    case TunableReach::kService:
      return fmt::format("{}.{}", TargetLabel(target), name);
    case TunableReach::kFilesystem:
      break;
  }
  return Key(name);
}

std::string NrsControl::Key(std::string_view name) const {
  return scope_ == Scope::kMdt ? std::string(kMdtPrefix) + std::string(name) : std::string(name);
}

nrs::Tunables NrsControl::TunablesFor(const State& state, size_t head, size_t target) const {
  nrs::Tunables tunables = state.cells[head][target].tunables;
  tunables.tbf_rules = state.rules[head];
  return tunables;
}

Status NrsControl::Check(const State& next) const {
  for (size_t head = 0; head < kHeads; head++) {
    // One dry run per distinct spec and tunables is enough.
    std::vector<std::string> tried;
    for (size_t target = 0; target < targets_.size(); target++) {
      const std::string& spec = next.specs[head][target];
      const TunableValues& cell = next.cells[head][target];
      std::string tried_key = spec;
      for (const TunableName& t : TunableNames()) tried_key += "\n" + FormatTunable(t.name, cell);
      tried_key += fmt::format("\n{}", static_cast<const void*>(cell.tunables.crrn_weights.get()));
      if (std::find(tried.begin(), tried.end(), tried_key) != tried.end()) continue;
      tried.push_back(tried_key);
      if (scope_ == Scope::kMdt && (spec == "orr" || spec.rfind("orr ", 0) == 0)) {
        return Status::Error(EINVAL, "mdt.nrs_policies: orr orders data requests by object "
                                     "offset; the metadata service has none");
      }
      auto policy = registry_->Create(spec, TunablesFor(next, head, target));
      if (!policy.ok()) return policy.status();
      if (cell.tunables.delay_min > cell.tunables.delay_max) {
        return Status::Error(
            EINVAL, fmt::format("{} ({}) is above {} ({}) on {} {}", Key("nrs_delay_min"),
                                FormatDuration(cell.tunables.delay_min), Key("nrs_delay_max"),
                                FormatDuration(cell.tunables.delay_max), TargetLabel(target),
                                HeadLabel(head)));
      }
      // An OST serving its epoch (up to nrs_epoch_ms, or nrs_epoch_max_ms
      // with the epoch policy) does not ask for the next one meanwhile; a
      // timeout not above that would evict a busy, healthy OST.
      if (scope_ == Scope::kOsts) {
        for (std::string_view epoch : {"nrs_epoch_ms", "nrs_epoch_max_ms"}) {
          const auto length = epoch == "nrs_epoch_ms" ? cell.epoch_length : cell.tunables.epoch_max;
          if (cell.eh_timeout <= length) {
            return Status::Error(EINVAL, fmt::format("nrs_eh_timeout ({}) must be longer than "
                                                     "{} ({}ms on {} {})",
                                                     FormatDuration(cell.eh_timeout), epoch,
                                                     FormatTunable(epoch, cell),
                                                     TargetLabel(target), HeadLabel(head)));
          }
        }
      }
    }
  }
  return Status::Ok();
}

std::map<std::string, std::string> NrsControl::Persisted(const State& state) const {
  std::map<std::string, std::string> out;
  for (size_t head = 0; head < kHeads; head++) {
    out[Key(fmt::format("nrs_tbf_rule.{}", HeadLabel(head)))] = state.rules[head]->Serialize();
    for (size_t target = 0; target < targets_.size(); target++) {
      const TunableValues& cell = state.cells[head][target];
      out[PolicyKey(head, target)] = state.specs[head][target];
      out[CellKey(kWeightKey, TunableReach::kHead, head, target)] =
          cell.tunables.crrn_weights->Serialize();
      for (const TunableName& t : TunableNames()) {
        if (TunableOf(scope_, t.name) == nullptr) continue;
        out[CellKey(t.name, t.reach, head, target)] = FormatTunable(t.name, cell);
      }
    }
  }
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

nrs::TargetSettings NrsControl::SettingsOf(const State& state, size_t target) const {
  nrs::TargetSettings out;
  // Per-service and filesystem-wide values: the same in both heads' cells.
  const TunableValues& values = state.cells[0][target];
  out.hp_ops = values.hp_ops;
  out.hp_ratio = values.hp_ratio;
  out.epoch_length = values.epoch_length;
  out.eh_timeout = values.eh_timeout;
  for (size_t head = 0; head < kHeads; head++) {
    out.specs[head] = state.specs[head][target];
    out.tunables[head] = TunablesFor(state, head, target);
  }
  return out;
}

void NrsControl::Publish(const State& previous, const State& next) {
  if (epochs_ != nullptr && !targets_.empty()) epochs_->SetTimeout(next.cells[0][0].eh_timeout);
  for (size_t target = 0; target < targets_.size(); target++) {
    targets_[target]->Apply(SettingsOf(previous, target), SettingsOf(next, target), *registry_);
  }
}

std::string NrsControl::MostRun(const std::vector<std::string>& specs) {
  const std::string most = MostCommon(specs);
  return most.empty() ? "fifo" : most;
}

std::array<TunableValues, NrsControl::kHeads> NrsControl::MostCommonCells(
    const State& state) const {
  std::array<TunableValues, kHeads> out;
  for (size_t head = 0; head < kHeads; head++) {
    const std::vector<TunableValues>& cells = state.cells[head];
    out[head].tunables.crrn_weights = nrs::CrrnWeights::Empty();
    if (cells.empty()) continue;
    out[head] = cells[0];
    for (const TunableName& t : TunableNames()) {
      std::vector<std::string> texts;
      for (const TunableValues& cell : cells) texts.push_back(FormatTunable(t.name, cell));
      // Formatted by FormatTunable, so it parses.
      (void)ParseTunable(t.name, MostCommon(texts), &out[head]);
    }
    std::vector<std::string> weights;
    for (const TunableValues& cell : cells)
      weights.push_back(cell.tunables.crrn_weights->Serialize());
    const std::string most = MostCommon(weights);
    for (const TunableValues& cell : cells) {
      if (cell.tunables.crrn_weights->Serialize() == most) {
        out[head].tunables.crrn_weights = cell.tunables.crrn_weights;
        break;
      }
    }
  }
  // Per-service values agree on both heads (the regular head's).
  for (const TunableName& t : TunableNames()) {
    if (t.reach != TunableReach::kHead) {
      (void)ParseTunable(t.name, FormatTunable(t.name, out[0]), &out[1]);
    }
  }
  return out;
}

Status NrsControl::AddTarget(nrs::Target* target) {
  std::lock_guard<std::mutex> lock(mu_);
  if (scope_ != Scope::kOsts) return Status::Error(EINVAL, "the metadata service is one target");
  State previous = state_;
  State next = state_;
  const std::array<TunableValues, kHeads> cells = MostCommonCells(state_);
  for (size_t head = 0; head < kHeads; head++) {
    next.specs[head].push_back(MostRun(state_.specs[head]));
    next.cells[head].push_back(cells[head]);
    // What a new service runs before it is told anything.
    previous.specs[head].push_back("fifo");
    previous.cells[head].push_back(cells[head]);
  }
  targets_.push_back(target);
  // Check is not needed (these very specs and values run already); stored,
  // then published to every target (the others are retuned with what they
  // had).
  if (Status stored = meta_->PutSettings(Persisted(next)); !stored.ok()) {
    targets_.pop_back();
    return stored;
  }
  Publish(previous, next);
  state_ = std::move(next);
  return Status::Ok();
}

void NrsControl::LoadCells(const std::map<std::string, std::string>& stored, State* next) const {
  auto log = Logger("nrs");
  auto value_of = [&](const std::string& key) -> const std::string* {
    auto it = stored.find(key);
    return it == stored.end() ? nullptr : &it->second;
  };
  // Per head (or per service, read from the regular head's cells) the
  // stored text of each target's value. A target without one (an OST whose
  // addition was cut short) takes what most stored targets have, as
  // AddTarget gives; with none stored, the value stored before values
  // were per target (one key, no prefix), else the default.
  auto texts_of = [&](std::string_view name, TunableReach reach, size_t head) {
    std::vector<const std::string*> texts(targets_.size(), nullptr);
    std::vector<std::string> present;
    for (size_t target = 0; target < targets_.size(); target++) {
      texts[target] = value_of(CellKey(name, reach, head, target));
      if (texts[target] != nullptr) present.push_back(*texts[target]);
    }
    const std::string most = MostCommon(present);
    const std::string* fallback = present.empty() ? value_of(Key(name)) : nullptr;
    std::vector<std::optional<std::string>> out(targets_.size());
    for (size_t target = 0; target < targets_.size(); target++) {
      if (texts[target] != nullptr) {
        out[target] = *texts[target];
      } else if (!present.empty()) {
        out[target] = most;
      } else if (fallback != nullptr) {
        out[target] = *fallback;
      }
    }
    return out;
  };
  for (const TunableName& t : TunableNames()) {
    if (TunableOf(scope_, t.name) == nullptr) continue;
    const size_t heads = t.reach == TunableReach::kHead ? kHeads : 1;
    for (size_t head = 0; head < heads; head++) {
      const auto texts = texts_of(t.name, t.reach, head);
      for (size_t target = 0; target < targets_.size(); target++) {
        if (!texts[target]) continue;
        const size_t end = t.reach == TunableReach::kHead ? head + 1 : kHeads;
        for (size_t h = head; h < end; h++) {
          Status applied = ParseTunable(t.name, *texts[target], &next->cells[h][target]);
          if (!applied.ok()) {
            log->error("stored setting {}='{}' is invalid, using the default: {}",
                       CellKey(t.name, t.reach, h, target), *texts[target], applied.ToString());
          }
        }
      }
    }
  }
  for (size_t head = 0; head < kHeads; head++) {
    const auto texts = texts_of(kWeightKey, TunableReach::kHead, head);
    for (size_t target = 0; target < targets_.size(); target++) {
      if (!texts[target]) continue;
      auto weights = nrs::CrrnWeights::Deserialize(*texts[target]);
      if (weights.ok()) {
        next->cells[head][target].tunables.crrn_weights = *weights;
      } else {
        log->error("stored CRR-N weight rules ({}) are invalid, starting without them: {}",
                   CellKey(kWeightKey, TunableReach::kHead, head, target),
                   weights.status().ToString());
      }
    }
  }
  // Stored before nrs_eh_timeout was checked against the epochs: a timeout
  // that would evict an OST for serving its epoch is raised, not kept.
  if (scope_ != Scope::kOsts) return;
  std::chrono::nanoseconds longest{0};
  for (const auto& cells : next->cells) {
    for (const TunableValues& cell : cells) {
      longest = std::max({longest, cell.epoch_length, cell.tunables.epoch_max});
    }
  }
  if (!targets_.empty() && next->cells[0][0].eh_timeout <= longest) {
    const std::chrono::nanoseconds raised =
        std::max<std::chrono::nanoseconds>(kDefaultEhTimeout, 2 * longest);
    log->error("stored nrs_eh_timeout {} is not longer than the longest epoch ({}); using {}",
               FormatDuration(next->cells[0][0].eh_timeout), FormatDuration(longest),
               FormatDuration(raised));
    for (auto& cells : next->cells) {
      for (TunableValues& cell : cells) cell.eh_timeout = raised;
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
  LoadCells(*stored, &next);
  for (size_t head = 0; head < kHeads; head++) {
    if (const std::string* text = value_of(Key(fmt::format("nrs_tbf_rule.{}", HeadLabel(head))))) {
      auto rules = nrs::TbfRuleSet::Deserialize(*text);
      if (rules.ok()) {
        next.rules[head] = *rules;
      } else {
        log->error("stored TBF rules of the {} {} head are invalid, starting without them: {}",
                   scope_ == Scope::kMdt ? "metadata" : "OSTs'", HeadLabel(head),
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
      auto policy = registry_->Create(*spec, TunablesFor(next, head, target));
      if (policy.ok()) {
        next.specs[head][target] = nrs::PolicyRegistry::Canonical(*spec);
      } else {
        log->error("stored policy '{}' of {} ({} head) cannot start, using fifo: {}", *spec,
                   TargetLabel(target), HeadLabel(head), policy.status().ToString());
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

Result<NrsControl::Reach> NrsControl::ReachOf(const SettingName& name, TunableReach reach,
                                              int missing) const {
  // REQUIRES: mu_ held.
  const std::string full = Key(JoinSettingName(name));
  if (reach != TunableReach::kHead && name.head_given) {
    return Status::Error(EINVAL,
                         fmt::format("{}: {} is one value per {}, not per head", full, name.base,
                                     reach == TunableReach::kService ? "service" : "filesystem"));
  }
  if (reach == TunableReach::kFilesystem && name.ost >= 0) {
    return Status::Error(EINVAL, fmt::format("{}: {} is one value for every OST", full, name.base));
  }
  Reach out;
  out.heads = name.heads;
  out.end = targets_.size();
  if (name.ost >= 0) {
    if (name.ost >= static_cast<int64_t>(targets_.size())) {
      return Status::Error(missing, fmt::format("there is no OST {} (this filesystem has {})",
                                                name.ost, targets_.size()));
    }
    out.first = static_cast<size_t>(name.ost);
    out.end = out.first + 1;
  }
  return out;
}

Status NrsControl::Set(std::string_view full_name, std::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string_view name = Unprefixed(full_name);
  const SettingName split = SplitSettingName(name);
  if (split.base == "nrs_policies" && !split.head_given) return SetPolicies(name, value);
  if (split.base == "nrs_tbf_rule" && split.ost < 0 && !split.head_given) return SetRule(value);
  if (split.base == kWeightKey) return SetWeight(split, value);
  if (const TunableName* tunable = TunableOf(scope_, split.base)) {
    return SetTunable(split, *tunable, value);
  }
  if (split.base == "nrs_stats") return Status::Error(EINVAL, Key(name) + " is read-only");
  return Status::Error(EINVAL, "unknown NRS setting " + std::string(full_name));
}

Status NrsControl::SetTunable(const SettingName& name, const TunableName& tunable,
                              std::string_view value) {
  auto reach = ReachOf(name, tunable.reach, ENOENT);
  if (!reach.ok()) return reach.status();
  TunableValues parsed;
  SFS_RETURN_IF_ERROR(ParseTunable(tunable.name, value, &parsed));
  // Through its canonical text, which every cell then parses the same.
  const std::string text = FormatTunable(tunable.name, parsed);
  State next = state_;
  for (size_t head = 0; head < kHeads; head++) {
    if (!reach->heads.Includes(head)) continue;
    for (size_t target = reach->first; target < reach->end; target++) {
      SFS_RETURN_IF_ERROR(ParseTunable(tunable.name, text, &next.cells[head][target]));
    }
  }
  const nrs::OpSet data = nrs::OpBit(nrs::Op::kRead) | nrs::OpBit(nrs::Op::kWrite);
  const bool data_hp =
      scope_ == Scope::kOsts && tunable.name == "nrs_hp_ops" && (parsed.hp_ops & data) != 0;
  SFS_RETURN_IF_ERROR(Commit(std::move(next)));
  // Allowed, but worth a line: it turns the ratio into a priority for data.
  if (data_hp) Logger("nrs")->info("{} now includes data ops: {}", JoinSettingName(name), value);
  return Status::Ok();
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

Status NrsControl::SetWeight(const SettingName& name, std::string_view value) {
  auto reach = ReachOf(name, TunableReach::kHead, ENOENT);
  if (!reach.ok()) return reach.status();
  State next = state_;
  // Cells that shared one rule set before share the result (one Apply).
  std::map<const nrs::CrrnWeights*, std::shared_ptr<const nrs::CrrnWeights>> applied;
  size_t distinct = 0;
  for (size_t head = 0; head < kHeads; head++) {
    for (size_t target = reach->first; target < reach->end; target++) {
      if (reach->heads.Includes(head)) {
        distinct +=
            applied.emplace(next.cells[head][target].tunables.crrn_weights.get(), nullptr).second;
      }
    }
  }
  for (size_t target = reach->first; target < reach->end; target++) {
    for (size_t head = 0; head < kHeads; head++) {
      if (!reach->heads.Includes(head)) continue;
      auto& weights = next.cells[head][target].tunables.crrn_weights;
      auto& after = applied.at(weights.get());
      if (after == nullptr) {
        auto result = weights->Apply(Trim(value));
        if (!result.ok() && distinct == 1) return result.status();
        // The sets differ: say which one refused.
        if (!result.ok()) {
          return Status::Error(result.err(),
                               fmt::format("{}.{}.{}: {}", TargetLabel(target), HeadLabel(head),
                                           kWeightKey, result.status().message()));
        }
        after = *result;
      }
      weights = after;
    }
  }
  return Commit(std::move(next));
}

std::string NrsControl::CellsReport(
    const Reach& reach, const std::function<std::string(const TunableValues&)>& text) const {
  // REQUIRES: mu_ held.
  std::vector<std::string> all;
  for (size_t target = reach.first; target < reach.end; target++) {
    for (size_t head = 0; head < kHeads; head++) {
      if (reach.heads.Includes(head)) all.push_back(text(state_.cells[head][target]));
    }
  }
  if (std::all_of(all.begin(), all.end(), [&](const std::string& v) { return v == all[0]; })) {
    return all.empty() ? std::string() : all[0];
  }
  // A value of several lines (weight rules) goes below its label, indented.
  auto entry = [](const std::string& label, const std::string& value) {
    if (value.find('\n') == std::string::npos) return fmt::format("{}: {}\n", label, value);
    std::string out = label + ":\n";
    for (std::string_view line : SplitAny(value, "\n")) out += fmt::format("  {}\n", line);
    return out;
  };
  std::string out;
  for (size_t target = reach.first; target < reach.end; target++) {
    std::vector<std::string> heads;
    for (size_t head = 0; head < kHeads; head++) {
      if (reach.heads.Includes(head)) heads.push_back(text(state_.cells[head][target]));
    }
    if (heads.size() == 1 || heads[0] == heads[1]) {
      out += entry(TargetLabel(target), heads[0]);
    } else {
      for (size_t head = 0; head < kHeads; head++) {
        out += entry(TargetLabel(target) + "." + HeadLabel(head), heads[head]);
      }
    }
  }
  return out;
}

Result<std::string> NrsControl::Get(std::string_view full_name) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string_view name = Unprefixed(full_name);
  const SettingName split = SplitSettingName(name);
  if (name == "nrs_policies") return PoliciesReport(0, targets_.size());
  if (const int64_t ost = scope_ == Scope::kOsts ? OstOfName(name) : -1; ost >= 0) {
    if (ost >= static_cast<int64_t>(targets_.size())) {
      return Status::Error(ENODATA, fmt::format("there is no OST {}", ost));
    }
    return PoliciesReport(ost, ost + 1);
  }
  if (name == "nrs_tbf_rule") return RulesReport();
  if (name == "nrs_stats") return StatsReport();
  if (split.base == kWeightKey) {
    auto reach = ReachOf(split, TunableReach::kHead, ENODATA);
    if (!reach.ok()) return reach.status();
    return CellsReport(
        *reach, [](const TunableValues& cell) { return cell.tunables.crrn_weights->Serialize(); });
  }
  if (const TunableName* tunable = TunableOf(scope_, split.base)) {
    auto reach = ReachOf(split, tunable->reach, ENODATA);
    if (!reach.ok()) return reach.status();
    const std::string_view base = tunable->name;
    return CellsReport(*reach,
                       [base](const TunableValues& cell) { return FormatTunable(base, cell); });
  }
  return Status::Error(ENODATA, "no NRS setting " + std::string(full_name));
}

}  // namespace sfs::control
