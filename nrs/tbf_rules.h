// TBF rules (seed 001 section 2.2; Lustre nrs_tbf.c): their grammar, the
// matching of a request's class to the first rule that fits, and the ordered
// rule list, which is immutable and replaced whole on every change so the
// service threads see the old list or the new one, never half of one.
//
// Commands (the value of user.stripefs.nrs_tbf_rule, without "reg"/"hp"):
//   start <name> <expression> [rate=N] [bps=N[K|M|G|T]] [depth=N]
//                             [rank=<rule>] [realtime=0|1]
//   change <name> [rate=N] [bps=N] [depth=N] [rank=<rule>] [realtime=0|1]
//   stop <name>
// An expression is conditions joined by '&' (and) and ',' (or; '&' binds
// tighter): field={v1 v2 ...} with field uid, gid (numbers), jobid (values
// may hold '*' and '?' globs) or opcode (read, write, punch, fsync,
// fallocate, destroy, seek; on the metadata service lookup, getattr,
// setattr, create, mknod, open, readdir, mkdir, rmdir, unlink, rename,
// link, symlink, readlink). Values inside braces are separated by blanks or
// commas. A new rule goes first unless rank=<rule> puts it just before that
// rule. The rule named "default" always exists, matches everything, comes
// last, cannot be stopped, and takes its rate from the nrs_tbf_default_rate
// tunable unless "change default" set one.
//
// Blanks are those of common/text.h; any other byte below 0x20, or 0x7f, is
// refused anywhere in a command. Names are 1 to 15 letters, digits or '_'
// (Lustre's limit). A started
// rule needs rate= (1..10^9), bps= (1..2^50, suffixes K M G T are powers of
// 1024) or both; a rule with only bps= limits bytes and not requests.
// depth= is 1..10^6 (default 3), realtime= is 0 or 1. "change" sets only
// the keys it names; "change <name> bps=0" drops the byte limit of a rule
// that keeps a rate. "rank=" moves a rule just before another one
// (rank=default: last before the default); the default rule takes no rank.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "nrs/request.h"

namespace sfs::nrs {

// Classification fields, as a bit set: the TBF type ("tbf uid+opcode")
// names the fields that make up a class; a rule may only test fields of
// the type of the policy it runs in.
enum TbfField : uint8_t {
  kTbfUid = 1,
  kTbfGid = 2,
  kTbfJobid = 4,
  kTbfOpcode = 8,
};
using TbfFields = uint8_t;
constexpr TbfFields kTbfAllFields = kTbfUid | kTbfGid | kTbfJobid | kTbfOpcode;

// The largest rate= a rule accepts: one request per nanosecond.
constexpr uint64_t kTbfMaxRate = 1'000'000'000;

// "uid", "gid+jobid", ... ; "" means every field. EINVAL otherwise.
Result<TbfFields> ParseTbfType(std::string_view type);
// The canonical "uid+opcode" form (fields in the order uid, gid, jobid, opcode).
std::string TbfTypeName(TbfFields fields);

// Opcode classes as rules and class labels name them: "read", "write",
// "punch" (Op::kTruncate and Op::kPunch), "fsync", "fallocate", "destroy",
// "seek", and each metadata op by its nrs::OpName.
const char* TbfOpcodeName(Op op);
// The one Op that stands for the opcode class of `op` (kPunch for
// kTruncate), so two ops of one class make one TBF class key.
Op TbfOpcodeClass(Op op);

class TbfExpression;  // parsed conditions; defined in tbf_expression.h (internal)

struct TbfRule {
  std::string name;
  std::string expression;  // canonical text, e.g. "uid={1000 1001}&opcode={write}"
  TbfFields fields = 0;    // the fields `expression` tests
  uint64_t rate = 0;       // requests per second; 0: bps-only rule, or default on the tunable
  uint64_t bps = 0;        // bytes per second, 0 = no byte limit
  uint32_t depth = 3;      // bucket depth in requests (Lustre's global default)
  bool realtime = false;
  std::shared_ptr<const TbfExpression> matcher;  // null for "default"

  bool Matches(const RequestInfo& info) const;
  // "<name> <expression> rate=N bps=N depth=N realtime=0|1": the text that
  // `start` accepts back (after the word "start").
  std::string ToString() const;
};

class TbfRuleSet {
 public:
  // Only the default rule.
  static std::shared_ptr<const TbfRuleSet> Empty();

  // Applies one command and returns the new set; this set is unchanged.
  // EINVAL for a malformed command, expression or number; EEXIST for start
  // of a name in use; ENOENT for change/stop of an unknown rule or a rank=
  // naming one; EPERM for stop default. The message says what was wrong.
  Result<std::shared_ptr<const TbfRuleSet>> Apply(std::string_view command) const;

  // Persistence: one "start ..." line per rule, in match order, then
  // "change default ..." if the default was changed. Deserialize(Serialize())
  // gives an equal set.
  std::string Serialize() const;
  static Result<std::shared_ptr<const TbfRuleSet>> Deserialize(std::string_view text);

  // Rules in match order, without the default rule.
  const std::vector<TbfRule>& rules() const { return rules_; }
  // The default rule as configured: rate 0 means "use nrs_tbf_default_rate".
  const TbfRule& default_rule() const { return default_; }
  // Union of the fields every rule tests.
  TbfFields fields() const;
  // The first rule matching `info`, or the default rule. The default's rate
  // is 0 here when it follows the tunable.
  const TbfRule& Match(const RequestInfo& info) const;

 private:
  // The default rule as a new set has it: no rate of its own, depth 3.
  static TbfRule DefaultRule();
  // Apply; with `append_start`, a "start" without rank= goes last (before
  // the default) instead of first, so Deserialize keeps the saved order.
  Result<std::shared_ptr<const TbfRuleSet>> ApplyCommand(std::string_view command,
                                                         bool append_start) const;

  std::vector<TbfRule> rules_;
  TbfRule default_ = DefaultRule();
};

}  // namespace sfs::nrs
