// The text of the user.stripefs.nrs_* settings (their
// grammar is in control/nrs_control.h), parsed and formatted apart from
// NrsControl so that it links alone (unit tests, fuzz/nrs_settings_fuzzer.cc).
// Every parser refuses with EINVAL and a message naming the setting.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "nrs/nrs.h"
#include "nrs/tunables.h"

namespace sfs::control {

// Which heads a setting applies to: "reg", "hp", or both when not given.
struct HeadChoice {
  bool regular = true;
  bool high = true;
  bool Includes(size_t head) const { return head == 0 ? regular : high; }  // 0 = regular
  bool operator==(const HeadChoice&) const = default;
};

// nrs_policies: "<policy> [args] [reg|hp]"; the qualifier may stand anywhere
// after the policy name, at most once. `spec` is the policy and its
// arguments with single blanks (nrs::PolicyRegistry::Canonical form); whether
// the registry knows it is the caller's to check.
struct PolicySetting {
  HeadChoice heads;
  std::string spec;
};
Result<PolicySetting> ParsePolicySetting(std::string_view value);

// nrs_tbf_rule: "[reg|hp] <command>"; `command` is what TbfRuleSet::Apply
// takes (trimmed).
struct RuleSetting {
  HeadChoice heads;
  std::string_view command;  // points into the parsed value
};
RuleSetting ParseRuleSetting(std::string_view value);

// A whole number in [min, max] (blanks around it allowed).
Result<uint64_t> ParseCount(std::string_view name, std::string_view text, uint64_t min,
                            uint64_t max);

// A duration of at most one hour: plain numbers are seconds, as in Lustre;
// "s", "ms", "us" and "ns" suffixes are accepted.
Result<std::chrono::nanoseconds> ParseDuration(std::string_view name, std::string_view text);
// "2" (seconds), "250ms", "100us" or "1300ns": the largest unit that holds
// `d` exactly, so ParseDuration gives `d` back.
std::string FormatDuration(std::chrono::nanoseconds d);

Result<nrs::OrrSupported> ParseOrrSupported(std::string_view text);

// A setting name split into its prefixes (after the metadata service's
// "mdt.", which is NrsControl's): "ost3.hp.nrs_orr_quantum" is OST 3's
// high-priority head. "ost<N>." comes first, then "reg." or "hp.". Never
// fails: whatever is not a prefix is the base, which the caller looks up.
struct SettingName {
  int64_t ost = -1;  // -1: no "ost<N>." (every OST)
  HeadChoice heads;  // both unless head_given
  bool head_given = false;
  std::string_view base;  // points into the split name
};
SettingName SplitSettingName(std::string_view name);
// The canonical name ("ost3.hp." + base), which splits back the same.
std::string JoinSettingName(const SettingName& name);

// Where an NRS tunable holds, and so which prefixes its name takes.
enum class TunableReach {
  kHead,        // each head of each service: "ost<N>.", "reg."/"hp." or both
  kService,     // each service, both heads (the hp ratio and ops, the epoch
                // timer): "ost<N>." only
  kFilesystem,  // every OST together (a rate shared among the OSTs, the one
                // epoch handler): no prefix; the OSTs only
};
struct TunableName {
  std::string_view name;
  TunableReach reach;
};
// Every tunable, in the order NrsControl stores and loads them.
std::span<const TunableName> TunableNames();
const TunableName* FindTunable(std::string_view name);  // null if none

// What one head of one service runs with: its nrs::Tunables and the
// service- and filesystem-wide values, which NrsControl keeps equal in the
// cells they cover, so one cell type serves every reach.
inline constexpr std::chrono::milliseconds kDefaultEpochLength{50};
inline constexpr std::chrono::seconds kDefaultEhTimeout{1};
struct TunableValues {
  nrs::Tunables tunables;  // tbf_rules are per head (NrsControl's), left null
  uint32_t hp_ratio = nrs::kDefaultHpRatio;
  nrs::OpSet hp_ops = nrs::kDefaultHpOps;
  std::chrono::nanoseconds epoch_length = kDefaultEpochLength;
  std::chrono::nanoseconds eh_timeout = kDefaultEhTimeout;
};
// Sets tunable `name` (a TunableNames() name) from its text; EINVAL and
// `values` unchanged if the text is bad.
Status ParseTunable(std::string_view name, std::string_view value, TunableValues* values);
// The text of tunable `name`, which ParseTunable takes back.
std::string FormatTunable(std::string_view name, const TunableValues& values);

}  // namespace sfs::control
