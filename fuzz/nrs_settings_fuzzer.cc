// The user.stripefs.nrs_* settings' text (control/nrs_settings.h) and the NRS
// parsers behind them: op sets (nrs_hp_ops, nrs/nrs.h), durations
// (nrs_delay_min/max), counts, nrs_orr_supported, the nrs_policies value
// with the policy factories' arguments (nrs/registry.h), and the head
// qualifier of nrs_tbf_rule. The first byte chooses. Where a formatter
// exists, its text must parse back to the same value.
#include <chrono>
#include <iterator>
#include <string>

#include "control/nrs_settings.h"
#include "fuzz/fuzz_check.h"
#include "nrs/nrs.h"
#include "nrs/registry.h"
#include "nrs/tunables.h"

namespace sfs::fuzz {
namespace {

void OpSet(std::string_view text) {
  auto ops = nrs::ParseOpSet(text);
  if (!ops.ok()) return;
  const std::string name = nrs::OpSetName(*ops);
  auto again = nrs::ParseOpSet(name);
  Check(again.ok() && *again == *ops, "an op set changed through OpSetName", text, name);
}

void Duration(std::string_view text) {
  auto d = control::ParseDuration("d", text);
  if (!d.ok()) return;
  Check(d->count() >= 0 && *d <= std::chrono::hours(1), "a duration out of range", text);
  const std::string formatted = control::FormatDuration(*d);
  auto again = control::ParseDuration("d", formatted);
  Check(again.ok() && *again == *d, "a duration changed through FormatDuration", text, formatted);
}

void Count(std::string_view text) {
  auto n = control::ParseCount("n", text, 1, 65535);
  if (!n.ok()) return;
  Check(*n >= 1 && *n <= 65535, "a count out of range", text);
  auto again = control::ParseCount("n", std::to_string(*n), 1, 65535);
  Check(again.ok() && *again == *n, "a count changed through its text", text);
}

void OrrSupported(std::string_view text) {
  auto s = control::ParseOrrSupported(text);
  if (!s.ok()) return;
  const std::string name = nrs::OrrSupportedName(*s);
  auto again = control::ParseOrrSupported(name);
  Check(again.ok() && *again == *s, "nrs_orr_supported changed through its name", text, name);
}

void Policies(std::string_view text) {
  auto setting = control::ParsePolicySetting(text);
  if (!setting.ok()) return;
  Check(!setting->spec.empty() && (setting->heads.regular || setting->heads.high),
        "a policy setting with no policy or no head", text);
  Check(nrs::PolicyRegistry::Canonical(setting->spec) == setting->spec,
        "the spec is not in canonical form", text, setting->spec);
  // The stored form (spec, then the qualifier) gives the same setting back.
  std::string stored = setting->spec;
  if (!setting->heads.high) stored += " reg";
  if (!setting->heads.regular) stored += " hp";
  auto again = control::ParsePolicySetting(stored);
  Check(again.ok() && again->spec == setting->spec && again->heads == setting->heads,
        "a policy setting changed through its text", text, stored);
  static const nrs::PolicyRegistry registry = nrs::BuiltinPolicies();
  const nrs::Tunables tunables;
  auto policy = registry.Create(setting->spec, tunables);
  if (!policy.ok()) {
    Check(policy.err() == EINVAL, "a policy refused with another errno than EINVAL", text);
    return;
  }
  Check(!(*policy)->Name().empty(), "a policy without a name", text);
}

void Rule(std::string_view text) {
  const control::RuleSetting setting = control::ParseRuleSetting(text);
  Check(setting.heads.regular || setting.heads.high, "a rule setting with no head", text);
  Check(Trim(setting.command) == setting.command, "the command is not trimmed", text);
  if (setting.heads.regular && setting.heads.high) {
    Check(setting.command == Trim(text), "an unqualified command changed", text, setting.command);
  }
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs::fuzz;
  DispatchByFirstByte(data, size, {OpSet, Duration, Count, OrrSupported, Policies, Rule});
  return 0;
}
