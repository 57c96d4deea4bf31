// Pool match rules (issue 4): which OST pool a new file's stripes come from.
// A rule is the value of user.stripefs.pool_rule.<name>:
//
//   rank=10 uid={1000,1001} pool=fast
//   rank=20 jobid={ior.*} & gid={100} pool=slow
//
// Words are separated by blanks and may come in any order:
//   rank=N       0..2^32-1, default 0; rules are tried by ascending rank,
//                ties broken by rule name; the first match wins.
//   pool=NAME    required; the pool the rule sends files to.
//   FIELD={v..}  a condition: FIELD is uid, gid, projid (decimal numbers
//                or ranges first-last, common/id_list.h) or jobid (glob
//                patterns: '*' any run, '?' one character). Values are
//                separated by commas or blanks; any one value matching
//                satisfies the condition (or).
// Blanks are those of common/text.h; any other byte below 0x20, or 0x7f,
// is refused. Conditions are joined by '&' (and). There is no "or" between conditions;
// write two rules instead. A rule without conditions matches every file.
//
// Parsing is strict (EINVAL with a message naming the offending word) and
// FormatPoolRule gives the canonical text that ParsePoolRule accepts back:
//   "rank=20 jobid={ior.*} & gid={100} pool=slow"
// (numbers and ranges sorted, exact duplicates dropped, conditions in the
// given order).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/id_list.h"
#include "common/status.h"
#include "common/text.h"  // GlobMatch, for jobid patterns
#include "layout/placement.h"

namespace sfs::layout {

// Pool and rule names: 1 to kMaxPoolNameLen of [A-Za-z0-9_.-], starting with
// a letter, digit or '_'.
inline constexpr size_t kMaxPoolNameLen = 31;
// EINVAL naming `what` ("pool", "rule") otherwise.
Status CheckPoolName(std::string_view name, std::string_view what = "pool");

enum class RuleField : uint8_t { kUid, kGid, kJobid, kProjid };

struct RuleCondition {
  RuleField field = RuleField::kUid;
  IdList numbers;                     // uid, gid, projid: sorted, distinct
  std::vector<std::string> patterns;  // jobid: distinct, in given order

  bool Matches(const PlacementContext& context) const;
  bool operator==(const RuleCondition&) const = default;
};

struct PoolRule {
  uint32_t rank = 0;
  std::vector<RuleCondition> conditions;  // all must hold
  std::string pool;

  bool Matches(const PlacementContext& context) const;
  bool operator==(const PoolRule&) const = default;
};

Result<PoolRule> ParsePoolRule(std::string_view text);
std::string FormatPoolRule(const PoolRule& rule);


}  // namespace sfs::layout
