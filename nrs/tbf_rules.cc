#include "nrs/tbf_rules.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <utility>

namespace sfs::nrs {
namespace {

constexpr std::string_view kBlanks = " \t\n\r\f\v";
constexpr size_t kMaxNameLength = 15;  // Lustre's MAX_TBF_NAME, less its NUL
constexpr size_t kMaxJobidLength = 255;
constexpr uint64_t kMaxBps = uint64_t{1} << 50;
constexpr uint64_t kMaxDepth = 1'000'000;
constexpr uint32_t kDefaultDepth = 3;
constexpr std::string_view kDefaultName = "default";

// Opcode classes, in the order of their bits in TbfExpression::Condition.
constexpr const char* kOpcodeNames[] = {"read", "write", "punch", "fsync", "fallocate", "destroy"};
constexpr size_t kOpcodeCount = std::size(kOpcodeNames);

size_t OpcodeIndex(Op op) {
  switch (op) {
    case Op::kRead: return 0;
    case Op::kWrite: return 1;
    case Op::kTruncate:
    case Op::kPunch: return 2;
    case Op::kSync: return 3;
    case Op::kAllocate: return 4;
    case Op::kDestroy: return 5;
  }
  return 0;
}

Status Invalid(std::string message) { return Status::Error(EINVAL, std::move(message)); }

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

// The first blank-separated word of `s`, and what follows it (trimmed).
std::pair<std::string_view, std::string_view> SplitWord(std::string_view s) {
  s = Trim(s);
  const size_t end = std::min(s.find_first_of(kBlanks), s.size());
  return {s.substr(0, end), Trim(s.substr(end))};
}

// Pieces of `s` separated by any of `separators`, empty pieces dropped.
std::vector<std::string_view> SplitAny(std::string_view s, std::string_view separators) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const size_t end = std::min(s.find_first_of(separators), s.size());
    if (end > 0) out.push_back(s.substr(0, end));
    s.remove_prefix(std::min(end + 1, s.size()));
  }
  return out;
}

// Splits at `separator` outside braces. REQUIRES: braces are balanced.
std::vector<std::string_view> SplitOutsideBraces(std::string_view s, char separator) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] == '{') depth++;
    if (s[i] == '}') depth--;
    if (s[i] == separator && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

Status CheckName(std::string_view name, std::string_view what) {
  if (name.empty()) return Invalid("missing " + std::string(what) + " name");
  if (name.size() > kMaxNameLength) {
    return Invalid(std::string(what) + " name '" + std::string(name) + "' is longer than " +
                   std::to_string(kMaxNameLength) + " characters");
  }
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) {
      return Invalid(std::string(what) + " name '" + std::string(name) +
                     "' may only hold letters, digits and '_'");
    }
  }
  return Status::Ok();
}

Result<uint64_t> ParseNumber(std::string_view key, std::string_view text, uint64_t min,
                             uint64_t max) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string quoted = std::string(key) + "=" + std::string(text);
  if (text.empty() || end != text.data() + text.size() || ec == std::errc::invalid_argument) {
    return Invalid("'" + quoted + "' is not a number");
  }
  if (ec == std::errc::result_out_of_range || value < min || value > max) {
    return Invalid("'" + quoted + "' is out of range " + std::to_string(min) + ".." +
                   std::to_string(max));
  }
  return value;
}

// "100M" -> 100 << 20; powers of 1024.
Result<uint64_t> ParseBytes(std::string_view key, std::string_view text) {
  unsigned shift = 0;
  if (!text.empty() && !(text.back() >= '0' && text.back() <= '9')) {
    switch (text.back()) {
      case 'K':
      case 'k': shift = 10; break;
      case 'M':
      case 'm': shift = 20; break;
      case 'G':
      case 'g': shift = 30; break;
      case 'T':
      case 't': shift = 40; break;
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

// '*' matches any run of characters, '?' any one character.
bool GlobMatch(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      p++;
      t++;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') p++;
  return p == pattern.size();
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

// An expression: conjunctions ('&') of conditions, any one of which (',')
// must hold.
class TbfExpression {
 public:
  struct Condition {
    TbfField field = kTbfUid;
    std::vector<uint32_t> ids;        // uid or gid
    std::vector<std::string> jobids;  // patterns
    uint8_t opcodes = 0;              // bit i = kOpcodeNames[i]

    bool Matches(const RequestInfo& info) const {
      switch (field) {
        case kTbfUid: return std::find(ids.begin(), ids.end(), info.uid) != ids.end();
        case kTbfGid: return std::find(ids.begin(), ids.end(), info.gid) != ids.end();
        case kTbfJobid: {
          const std::string_view jobid = info.jobid ? std::string_view(*info.jobid) : "";
          return std::any_of(jobids.begin(), jobids.end(),
                             [&](const std::string& p) { return GlobMatch(p, jobid); });
        }
        case kTbfOpcode: return (opcodes >> OpcodeIndex(info.op)) & 1;
      }
      return false;
    }
  };

  static Result<std::shared_ptr<const TbfExpression>> Parse(std::string_view text);

  bool Matches(const RequestInfo& info) const {
    return std::any_of(any_of_.begin(), any_of_.end(), [&](const std::vector<Condition>& all) {
      return std::all_of(all.begin(), all.end(),
                         [&](const Condition& c) { return c.Matches(info); });
    });
  }

  TbfFields fields() const {
    TbfFields fields = 0;
    for (const auto& all : any_of_) {
      for (const Condition& c : all) fields |= c.field;
    }
    return fields;
  }

  std::string ToString() const;

 private:
  static Result<Condition> ParseCondition(std::string_view text);

  std::vector<std::vector<Condition>> any_of_;
};

Result<TbfExpression::Condition> TbfExpression::ParseCondition(std::string_view text) {
  text = Trim(text);
  const std::string quoted = "'" + std::string(text) + "'";
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) return Invalid("condition " + quoted + " is not field={...}");
  const std::string_view field = Trim(text.substr(0, eq));
  const std::string_view braced = Trim(text.substr(eq + 1));
  if (braced.size() < 2 || braced.front() != '{' || braced.back() != '}') {
    return Invalid("condition " + quoted + " is not field={...}");
  }
  const std::string_view inner = braced.substr(1, braced.size() - 2);
  if (inner.find_first_of("{}=&") != std::string_view::npos) {
    return Invalid("condition " + quoted + " has a stray brace or '=' inside its value list");
  }
  const std::vector<std::string_view> values = SplitAny(inner, std::string(kBlanks) + ",");
  if (values.empty()) return Invalid("condition " + quoted + " has an empty value list");

  Condition c;
  if (field == "uid" || field == "gid") {
    c.field = field == "uid" ? kTbfUid : kTbfGid;
    for (std::string_view v : values) {
      auto id = ParseNumber(field, v, 0, UINT32_MAX);
      if (!id.ok()) return id.status();
      c.ids.push_back(static_cast<uint32_t>(*id));
    }
  } else if (field == "jobid") {
    c.field = kTbfJobid;
    for (std::string_view v : values) {
      if (v.size() > kMaxJobidLength) {
        return Invalid("job id '" + std::string(v) + "' is longer than " +
                       std::to_string(kMaxJobidLength) + " characters");
      }
      c.jobids.emplace_back(v);
    }
  } else if (field == "opcode") {
    c.field = kTbfOpcode;
    for (std::string_view v : values) {
      const auto* it = std::find(std::begin(kOpcodeNames), std::end(kOpcodeNames), v);
      if (it == std::end(kOpcodeNames)) {
        return Invalid("unknown opcode '" + std::string(v) +
                       "' (read, write, punch, fsync, fallocate, destroy)");
      }
      c.opcodes |= uint8_t(1u << (it - std::begin(kOpcodeNames)));
    }
  } else if (field == "nid") {
    return Invalid("condition " + quoted + ": stripefs has no network ids (nid)");
  } else {
    return Invalid("condition " + quoted + " tests unknown field '" + std::string(field) +
                   "' (uid, gid, jobid, opcode)");
  }
  return c;
}

Result<std::shared_ptr<const TbfExpression>> TbfExpression::Parse(std::string_view text) {
  int depth = 0;
  for (char ch : text) {
    if (ch == '{') depth++;
    if (ch == '}') depth--;
    if (depth < 0 || depth > 1) {
      return Invalid("expression '" + std::string(text) + "' has bad braces");
    }
  }
  if (depth != 0) return Invalid("expression '" + std::string(text) + "' has bad braces");

  auto expression = std::make_shared<TbfExpression>();
  for (std::string_view conjunction : SplitOutsideBraces(text, ',')) {
    std::vector<Condition> all;
    for (std::string_view condition : SplitOutsideBraces(conjunction, '&')) {
      auto c = ParseCondition(condition);
      if (!c.ok()) return c.status();
      all.push_back(std::move(*c));
    }
    expression->any_of_.push_back(std::move(all));
  }
  return std::shared_ptr<const TbfExpression>(std::move(expression));
}

std::string TbfExpression::ToString() const {
  std::string out;
  for (size_t i = 0; i < any_of_.size(); i++) {
    if (i > 0) out += ',';
    for (size_t j = 0; j < any_of_[i].size(); j++) {
      const Condition& c = any_of_[i][j];
      if (j > 0) out += '&';
      out += TbfTypeName(c.field) + "={";
      std::vector<std::string> values;
      for (uint32_t id : c.ids) values.push_back(std::to_string(id));
      for (const std::string& jobid : c.jobids) values.push_back(jobid);
      for (size_t k = 0; k < kOpcodeCount; k++) {
        if ((c.opcodes >> k) & 1) values.push_back(kOpcodeNames[k]);
      }
      for (size_t k = 0; k < values.size(); k++) out += (k > 0 ? " " : "") + values[k];
      out += '}';
    }
  }
  return out;
}

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

const char* TbfOpcodeName(Op op) { return kOpcodeNames[OpcodeIndex(op)]; }

Op TbfOpcodeClass(Op op) { return op == Op::kTruncate ? Op::kPunch : op; }

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
  auto [verb, rest] = SplitWord(command);
  auto [name, args] = SplitWord(rest);
  if (verb != "start" && verb != "change" && verb != "stop") {
    return Invalid("unknown TBF rule command '" + std::string(verb) + "' (start, change, stop)");
  }
  SFS_RETURN_IF_ERROR(CheckName(name, "rule"));
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
  std::shared_ptr<const TbfRuleSet> set = Empty();
  for (std::string_view line : SplitAny(text, "\n")) {
    if (Trim(line).empty()) continue;
    auto next = set->ApplyCommand(line, /*append_start=*/true);
    if (!next.ok()) return next.status();
    set = std::move(*next);
  }
  return set;
}

}  // namespace sfs::nrs
