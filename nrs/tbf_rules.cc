#include "nrs/tbf_rules.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "nrs/tbf_expression.h"
#include "nrs/tbf_text.h"

namespace sfs::nrs {
namespace {

constexpr uint64_t kMaxBps = uint64_t{1} << 50;
constexpr uint64_t kMaxDepth = 1'000'000;
constexpr uint32_t kDefaultDepth = 3;
constexpr std::string_view kDefaultName = "default";

// "100M" -> 100 << 20; powers of 1024.
Result<uint64_t> ParseBytes(std::string_view key, std::string_view text) {
  unsigned shift = 0;
  if (!text.empty() && !(text.back() >= '0' && text.back() <= '9')) {
    switch (text.back()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      case 'T':
      case 't':
        shift = 40;
        break;
      default:
        return Invalid("'" + std::string(key) + "=" + std::string(text) +
                       "' has a bad suffix (K, M, G or T)");
    }
    text.remove_suffix(1);
  }
  auto number = ParseNumber(key, text, 0, kMaxBps >> shift);
  if (!number.ok()) return number.status();
  return *number << shift;
}

std::string FormatBytes(uint64_t bytes) {
  static constexpr std::pair<unsigned, char> kSuffixes[] = {
      {40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}};
  for (const auto& [shift, suffix] : kSuffixes) {
    const uint64_t unit = uint64_t{1} << shift;
    if (bytes != 0 && bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
  }
  return std::to_string(bytes);
}

// The keys after a start or change command; unset ones stay nullopt.
struct RuleOptions {
  std::optional<uint64_t> rate;
  std::optional<uint64_t> bps;
  std::optional<uint32_t> depth;
  std::optional<std::string> rank;
  std::optional<bool> realtime;

  bool empty() const { return !rate && !bps && !depth && !rank && !realtime; }
};

Result<RuleOptions> ParseOptions(std::string_view text) {
  RuleOptions options;
  for (std::string_view word : SplitAny(text, kBlanks)) {
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == word.size()) {
      return Invalid("expected key=value, got '" + std::string(word) + "'");
    }
    const std::string_view key = word.substr(0, eq);
    const std::string_view value = word.substr(eq + 1);
    auto duplicate = [&]() { return Invalid("duplicate key '" + std::string(key) + "'"); };
    if (key == "rate") {
      if (options.rate) return duplicate();
      auto n = ParseNumber(key, value, 1, kTbfMaxRate);
      if (!n.ok()) return n.status();
      options.rate = *n;
    } else if (key == "bps") {
      if (options.bps) return duplicate();
      auto n = ParseBytes(key, value);
      if (!n.ok()) return n.status();
      options.bps = *n;
    } else if (key == "depth") {
      if (options.depth) return duplicate();
      auto n = ParseNumber(key, value, 1, kMaxDepth);
      if (!n.ok()) return n.status();
      options.depth = static_cast<uint32_t>(*n);
    } else if (key == "realtime") {
      if (options.realtime) return duplicate();
      auto n = ParseNumber(key, value, 0, 1);
      if (!n.ok()) return n.status();
      options.realtime = *n == 1;
    } else if (key == "rank") {
      if (options.rank) return duplicate();
      SFS_RETURN_IF_ERROR(CheckName(value, "rank= rule"));
      options.rank = std::string(value);
    } else {
      return Invalid("unknown key '" + std::string(key) + "' (rate, bps, depth, rank, realtime)");
    }
  }
  return options;
}

void SetNumbers(const RuleOptions& options, TbfRule& rule) {
  if (options.rate) rule.rate = *options.rate;
  if (options.bps) rule.bps = *options.bps;
  if (options.depth) rule.depth = *options.depth;
  if (options.realtime) rule.realtime = *options.realtime;
}

}  // namespace

Result<TbfFields> ParseTbfType(std::string_view type) {
  type = Trim(type);
  if (type.empty()) return TbfFields{kTbfAllFields};
  TbfFields fields = 0;
  // Empty pieces are kept, so "uid+" and "+uid" are refused.
  for (std::string_view name : SplitOutsideBraces(type, '+')) {
    TbfField field;
    if (name == "uid") {
      field = kTbfUid;
    } else if (name == "gid") {
      field = kTbfGid;
    } else if (name == "jobid") {
      field = kTbfJobid;
    } else if (name == "opcode") {
      field = kTbfOpcode;
    } else if (name == "nid") {
      return Invalid("TBF type '" + std::string(type) + "': stripefs has no network ids (nid)");
    } else {
      return Invalid("TBF type '" + std::string(type) + "': unknown field '" + std::string(name) +
                     "' (uid, gid, jobid, opcode, joined by '+')");
    }
    if (fields & field) {
      return Invalid("TBF type '" + std::string(type) + "' names " + std::string(name) + " twice");
    }
    fields |= field;
  }
  return fields;
}

std::string TbfTypeName(TbfFields fields) {
  std::string out;
  for (auto [field, name] : {std::pair{kTbfUid, "uid"}, std::pair{kTbfGid, "gid"},
                             std::pair{kTbfJobid, "jobid"}, std::pair{kTbfOpcode, "opcode"}}) {
    if (!(fields & field)) continue;
    if (!out.empty()) out += '+';
    out += name;
  }
  return out;
}

bool TbfRule::Matches(const RequestInfo& info) const {
  return matcher == nullptr || matcher->Matches(info);
}

std::string TbfRule::ToString() const {
  std::string out = name + " " + expression;
  if (rate != 0) out += " rate=" + std::to_string(rate);
  if (bps != 0) out += " bps=" + FormatBytes(bps);
  out += " depth=" + std::to_string(depth);
  out += realtime ? " realtime=1" : " realtime=0";
  return out;
}

TbfRule TbfRuleSet::DefaultRule() {
  TbfRule rule;
  rule.name = std::string(kDefaultName);
  rule.expression = "*";
  rule.depth = kDefaultDepth;
  return rule;
}

std::shared_ptr<const TbfRuleSet> TbfRuleSet::Empty() {
  // Immutable, so one instance serves every caller.
  static const std::shared_ptr<const TbfRuleSet> empty = std::make_shared<const TbfRuleSet>();
  return empty;
}

TbfFields TbfRuleSet::fields() const {
  TbfFields fields = 0;
  for (const TbfRule& rule : rules_) fields |= rule.fields;
  return fields;
}

const TbfRule& TbfRuleSet::Match(const RequestInfo& info) const {
  for (const TbfRule& rule : rules_) {
    if (rule.Matches(info)) return rule;
  }
  return default_;
}

Result<std::shared_ptr<const TbfRuleSet>> TbfRuleSet::Apply(std::string_view command) const {
  return ApplyCommand(command, /*append_start=*/false);
}

Result<std::shared_ptr<const TbfRuleSet>> TbfRuleSet::ApplyCommand(std::string_view command,
                                                                   bool append_start) const {
  auto parsed = ParseRuleCommand(command, "TBF rule");
  if (!parsed.ok()) return parsed.status();
  const std::string_view verb = parsed->verb, name = parsed->name, args = parsed->args;
  const std::string quoted = "'" + std::string(name) + "'";
  auto next = std::make_shared<TbfRuleSet>(*this);
  auto find = [&](std::string_view n) {
    return std::find_if(next->rules_.begin(), next->rules_.end(),
                        [&](const TbfRule& r) { return r.name == n; });
  };
  // Where rank=<target> puts a rule: before target, or last for "default".
  auto rank_position = [&](const std::string& target) -> Result<size_t> {
    if (target == kDefaultName) return next->rules_.size();
    auto it = find(target);
    if (it == next->rules_.end()) {
      return Status::Error(ENOENT, "rank=" + target + ": no rule named '" + target + "'");
    }
    return static_cast<size_t>(it - next->rules_.begin());
  };

  if (verb == "stop") {
    if (!args.empty()) return Invalid("stop " + quoted + " takes no arguments");
    if (name == kDefaultName) return Status::Error(EPERM, "the default rule cannot be stopped");
    auto it = find(name);
    if (it == next->rules_.end()) return Status::Error(ENOENT, "no rule named " + quoted);
    next->rules_.erase(it);
    return std::shared_ptr<const TbfRuleSet>(std::move(next));
  }

  if (verb == "change") {
    auto options = ParseOptions(args);
    if (!options.ok()) return options.status();
    if (options->empty()) {
      return Invalid("change " + quoted + " needs rate=, bps=, depth=, rank= or realtime=");
    }
    if (name == kDefaultName) {
      if (options->rank) return Invalid("the default rule is always last; it takes no rank=");
      SetNumbers(*options, next->default_);
      return std::shared_ptr<const TbfRuleSet>(std::move(next));
    }
    auto it = find(name);
    if (it == next->rules_.end()) return Status::Error(ENOENT, "no rule named " + quoted);
    TbfRule rule = *it;
    SetNumbers(*options, rule);
    if (rule.rate == 0 && rule.bps == 0) {
      return Invalid("rule " + quoted + " would have neither rate= nor bps=");
    }
    if (!options->rank) {
      *it = std::move(rule);
      return std::shared_ptr<const TbfRuleSet>(std::move(next));
    }
    if (*options->rank == name) return Invalid("rule " + quoted + " cannot rank before itself");
    next->rules_.erase(it);
    auto position = rank_position(*options->rank);
    if (!position.ok()) return position.status();
    next->rules_.insert(next->rules_.begin() + *position, std::move(rule));
    return std::shared_ptr<const TbfRuleSet>(std::move(next));
  }

  // start <name> <expression> [key=value ...]: the expression ends at the
  // last '}', since its value lists may hold blanks.
  const size_t close = args.rfind('}');
  if (close == std::string_view::npos) {
    return Invalid("start " + quoted + " needs an expression such as uid={1000}");
  }
  const std::string_view tail = args.substr(close + 1);
  if (!tail.empty() && kBlanks.find(tail.front()) == std::string_view::npos) {
    return Invalid("start " + quoted + ": expected a blank after '}'");
  }
  auto matcher = TbfExpression::Parse(args.substr(0, close + 1));
  if (!matcher.ok()) return matcher.status();
  auto options = ParseOptions(tail);
  if (!options.ok()) return options.status();

  TbfRule rule;
  rule.name = std::string(name);
  rule.expression = (*matcher)->ToString();
  rule.fields = (*matcher)->fields();
  rule.depth = kDefaultDepth;
  rule.matcher = *matcher;
  SetNumbers(*options, rule);
  if (rule.rate == 0 && rule.bps == 0) return Invalid("rule " + quoted + " needs rate= or bps=");
  if (name == kDefaultName || find(name) != next->rules_.end()) {
    return Status::Error(EEXIST, "a rule named " + quoted + " exists");
  }
  size_t position = append_start ? next->rules_.size() : 0;
  if (options->rank) {
    auto ranked = rank_position(*options->rank);
    if (!ranked.ok()) return ranked.status();
    position = *ranked;
  }
  next->rules_.insert(next->rules_.begin() + position, std::move(rule));
  return std::shared_ptr<const TbfRuleSet>(std::move(next));
}

std::string TbfRuleSet::Serialize() const {
  std::string out;
  for (const TbfRule& rule : rules_) out += "start " + rule.ToString() + "\n";
  std::string change;
  if (default_.rate != 0) change += " rate=" + std::to_string(default_.rate);
  if (default_.bps != 0) change += " bps=" + FormatBytes(default_.bps);
  if (default_.depth != kDefaultDepth) change += " depth=" + std::to_string(default_.depth);
  if (default_.realtime) change += " realtime=1";
  if (!change.empty()) out += "change default" + change + "\n";
  return out;
}

Result<std::shared_ptr<const TbfRuleSet>> TbfRuleSet::Deserialize(std::string_view text) {
  return ReplayCommands(text, Empty(), [](const TbfRuleSet& set, std::string_view line) {
    return set.ApplyCommand(line, /*append_start=*/true);
  });
}

}  // namespace sfs::nrs
