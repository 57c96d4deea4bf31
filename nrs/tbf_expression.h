// Internal to nrs/: a parsed TBF rule expression, the matcher a TbfRule
// holds; the grammar is in tbf_rules.h. Immutable once parsed, so every copy
// of a rule, in every rule set, shares one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/id_list.h"
#include "common/status.h"
#include "nrs/request.h"
#include "nrs/tbf_rules.h"

namespace sfs::nrs {

// An expression: conjunctions ('&') of conditions, any one of which (',')
// must hold.
class TbfExpression {
 public:
  struct Condition {
    TbfField field = kTbfUid;
    IdList ids;                       // uid or gid: ids and ranges, as given
    std::vector<std::string> jobids;  // patterns
    uint32_t opcodes = 0;             // bit i = kOpcodeNames[i] (tbf_expression.cc)

    bool Matches(const RequestInfo& info) const;
  };

  // EINVAL, with a message quoting the faulty part, for anything the
  // grammar does not allow.
  static Result<std::shared_ptr<const TbfExpression>> Parse(std::string_view text);

  bool Matches(const RequestInfo& info) const;
  // The fields the conditions test.
  TbfFields fields() const;
  // The canonical text (one blank between values, opcodes in table order),
  // which Parse accepts back.
  std::string ToString() const;

 private:
  static Result<Condition> ParseCondition(std::string_view text);

  std::vector<std::vector<Condition>> any_of_;
};

}  // namespace sfs::nrs
