// Internal to nrs/: the lexing and number parsing shared by the TBF rule
// commands (tbf_rules.cc) and the rule expressions inside them
// (tbf_expression.cc), so both split text and word their EINVAL messages
// the same way. The CRR-N weight rules (crrn_weights.cc) use them too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/text.h"  // Trim, SplitWord, SplitAny, GlobMatch

namespace sfs::nrs {

// EINVAL with `message`: the status of every malformed command.
Status Invalid(std::string message);

// Pieces of `s` separated by `separator` outside braces, empty pieces kept.
// REQUIRES: braces are balanced.
std::vector<std::string_view> SplitOutsideBraces(std::string_view s, char separator);

// EINVAL unless `name` is 1 to 15 letters, digits or '_' (Lustre's limit
// for TBF rule names); `what` names it in the message ("rule").
Status CheckName(std::string_view name, std::string_view what);

// A rule command "<verb> <name> <args>" split and checked: no control
// character, a verb of start|change|stop, a name as CheckName wants.
// `what` names the rules in messages ("TBF rule", "CRR-N weight rule").
struct RuleCommand {
  std::string_view verb;
  std::string_view name;
  std::string_view args;
};
Result<RuleCommand> ParseRuleCommand(std::string_view command, std::string_view what);

// Rebuilds a rule set from its stored text: each non-blank line is a
// command that `apply(set, line)` applies to the set the earlier lines
// built, starting from `set`. The first refusal is the result.
template <class Set, class Apply>
Result<std::shared_ptr<const Set>> ReplayCommands(std::string_view text,
                                                  std::shared_ptr<const Set> set, Apply apply) {
  for (std::string_view line : SplitAny(text, "\n")) {
    if (Trim(line).empty()) continue;
    auto next = apply(*set, line);
    if (!next.ok()) return next.status();
    set = std::move(*next);
  }
  return set;
}

// `text` as a decimal number in min..max. The EINVAL message quotes
// "key=text", as the user wrote it.
Result<uint64_t> ParseNumber(std::string_view key, std::string_view text, uint64_t min,
                             uint64_t max);

}  // namespace sfs::nrs
