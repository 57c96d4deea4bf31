// Internal to fs/: the text of the user.stripefs.nrs_* settings (their
// grammar is in fs/nrs_control.h), parsed and formatted apart from
// NrsControl so that it links alone (unit tests, fuzz/nrs_settings_fuzzer.cc).
// Every parser refuses with EINVAL and a message naming the setting.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "nrs/tunables.h"

namespace sfs::fs {

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

}  // namespace sfs::fs
