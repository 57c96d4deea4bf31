#include "nrs/crrn_weights.h"

#include <algorithm>
#include <cerrno>

#include "nrs/tbf_expression.h"
#include "nrs/tbf_text.h"

namespace sfs::nrs {
namespace {

// "weight=N" and nothing else.
Result<uint32_t> ParseWeight(std::string_view args, const std::string& quoted) {
  const auto words = Words(args);
  if (words.size() != 1 || words[0].substr(0, 7) != "weight=") {
    return Invalid("rule " + quoted + " takes weight=N (1.." + std::to_string(kMaxCrrnWeight) +
                   ") and nothing else");
  }
  auto weight = ParseNumber("weight", words[0].substr(7), 1, kMaxCrrnWeight);
  if (!weight.ok()) return weight.status();
  return static_cast<uint32_t>(*weight);
}

}  // namespace

std::shared_ptr<const CrrnWeights> CrrnWeights::Empty() {
  // Immutable, so one instance serves every caller.
  static const std::shared_ptr<const CrrnWeights> empty = std::make_shared<const CrrnWeights>();
  return empty;
}

Result<std::shared_ptr<const CrrnWeights>> CrrnWeights::Apply(std::string_view command) const {
  return ApplyCommand(command, /*append_start=*/false);
}

Result<std::shared_ptr<const CrrnWeights>> CrrnWeights::ApplyCommand(std::string_view command,
                                                                     bool append_start) const {
  auto parsed = ParseRuleCommand(command, "CRR-N weight rule");
  if (!parsed.ok()) return parsed.status();
  const std::string_view verb = parsed->verb, name = parsed->name, args = parsed->args;
  const std::string quoted = "'" + std::string(name) + "'";
  auto next = std::make_shared<CrrnWeights>(*this);
  auto it = std::find_if(next->rules_.begin(), next->rules_.end(),
                         [&](const CrrnWeightRule& r) { return r.name == name; });
  if (verb == "stop" || verb == "change") {
    if (it == next->rules_.end()) return Status::Error(ENOENT, "no weight rule named " + quoted);
    if (verb == "stop") {
      if (!Trim(args).empty()) return Invalid("stop " + quoted + " takes no arguments");
      next->rules_.erase(it);
    } else {
      auto weight = ParseWeight(args, quoted);
      if (!weight.ok()) return weight.status();
      it->weight = *weight;
    }
    return std::shared_ptr<const CrrnWeights>(std::move(next));
  }

  // start <name> <expression> weight=N: the expression ends at the last '}'.
  const size_t close = args.rfind('}');
  if (close == std::string_view::npos) {
    return Invalid("start " + quoted + " needs an expression such as uid={1000}");
  }
  auto matcher = TbfExpression::Parse(args.substr(0, close + 1));
  if (!matcher.ok()) return matcher.status();
  if (((*matcher)->fields() & kTbfOpcode) != 0) {
    return Invalid("weight rule " + quoted +
                   ": a weight belongs to a client (uid, gid, jobid), not to an opcode");
  }
  auto weight = ParseWeight(args.substr(close + 1), quoted);
  if (!weight.ok()) return weight.status();
  if (it != next->rules_.end()) return Status::Error(EEXIST, "a weight rule named " + quoted + " exists");
  if (next->rules_.size() >= kMaxCrrnWeightRules) {
    return Invalid("at most " + std::to_string(kMaxCrrnWeightRules) + " CRR-N weight rules");
  }
  CrrnWeightRule rule{std::string(name), (*matcher)->ToString(), *weight, *matcher};
  next->rules_.insert(append_start ? next->rules_.end() : next->rules_.begin(), std::move(rule));
  return std::shared_ptr<const CrrnWeights>(std::move(next));
}

uint32_t CrrnWeights::WeightOf(const RequestInfo& info) const {
  for (const CrrnWeightRule& rule : rules_) {
    if (rule.matcher->Matches(info)) return rule.weight;
  }
  return 1;
}

std::string CrrnWeights::Serialize() const {
  std::string out;
  for (const CrrnWeightRule& rule : rules_) {
    out += "start " + rule.name + " " + rule.expression + " weight=" + std::to_string(rule.weight) +
           "\n";
  }
  return out;
}

Result<std::shared_ptr<const CrrnWeights>> CrrnWeights::Deserialize(std::string_view text) {
  return ReplayCommands(text, Empty(), [](const CrrnWeights& set, std::string_view line) {
    return set.ApplyCommand(line, /*append_start=*/true);
  });
}

}  // namespace sfs::nrs
