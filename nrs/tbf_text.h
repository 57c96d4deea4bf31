// Internal to nrs/: the lexing and number parsing shared by the TBF rule
// commands (tbf_rules.cc) and the rule expressions inside them
// (tbf_expression.cc), so both split text and word their EINVAL messages
// the same way.
#pragma once

#include <cstdint>
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

// `text` as a decimal number in min..max. The EINVAL message quotes
// "key=text", as the user wrote it.
Result<uint64_t> ParseNumber(std::string_view key, std::string_view text, uint64_t min,
                             uint64_t max);

}  // namespace sfs::nrs
