// CRR-N weights (seed 000's variable slices): rules that give a client of
// CRR-N a weight, so that each round its batch holds quantum x weight
// requests and, under contention, its share of the OST's service is its
// weight over the sum of the busy clients' weights. A client with nothing
// queued takes no share (idling banks no credit: nrs/batch_rounds.h).
//
// Commands (the value of user.stripefs.nrs_crrn_weight):
//   start <name> <expression> weight=N
//   change <name> weight=N
//   stop <name>
// The expression is TBF's (nrs/tbf_rules.h) over uid, gid and jobid;
// opcode= is refused, since a weight belongs to a client, not to one kind
// of its requests. Names as TBF rule names; weight 1..64. A new rule goes
// first; the first rule that matches a request gives its weight, and a
// request no rule matches weighs 1. At most 64 rules.
//
// Immutable: a change builds a new set, swapped whole into the policies.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "nrs/request.h"

namespace sfs::nrs {

class TbfExpression;  // nrs/tbf_expression.h (internal)

inline constexpr uint32_t kMaxCrrnWeight = 64;
inline constexpr size_t kMaxCrrnWeightRules = 64;

struct CrrnWeightRule {
  std::string name;
  std::string expression;  // canonical
  uint32_t weight = 1;
  std::shared_ptr<const TbfExpression> matcher;
};

class CrrnWeights {
 public:
  static std::shared_ptr<const CrrnWeights> Empty();

  // Applies one command; this set is unchanged. EINVAL for a malformed
  // command, expression or weight, an opcode condition or a 65th rule;
  // EEXIST for start of a name in use; ENOENT for change/stop of an unknown
  // rule. The message says what was wrong.
  Result<std::shared_ptr<const CrrnWeights>> Apply(std::string_view command) const;

  // The weight of the client whose request this is: the first matching
  // rule's, else 1.
  uint32_t WeightOf(const RequestInfo& info) const;

  // One "start <name> <expression> weight=N" line per rule, in match
  // order; also what get_param shows. Deserialize(Serialize()) is equal.
  std::string Serialize() const;
  static Result<std::shared_ptr<const CrrnWeights>> Deserialize(std::string_view text);

  const std::vector<CrrnWeightRule>& rules() const { return rules_; }

 private:
  Result<std::shared_ptr<const CrrnWeights>> ApplyCommand(std::string_view command,
                                                          bool append_start) const;
  std::vector<CrrnWeightRule> rules_;
};

}  // namespace sfs::nrs
