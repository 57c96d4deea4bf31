#include "layout/pool_rule.h"

#include <algorithm>
#include <charconv>
#include <set>

namespace sfs::layout {
namespace {

// The blanks of common/text.h, as every settings parser has them.
bool IsBlank(char c) { return kBlanks.find(c) != std::string_view::npos; }
bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

Status Invalid(std::string_view text, std::string what) {
  return Status::Error(EINVAL, "pool rule \"" + Printable(text) + "\": " + what);
}

struct FieldName {
  RuleField field;
  std::string_view name;
};
constexpr FieldName kFields[] = {{RuleField::kUid, "uid"},
                                 {RuleField::kGid, "gid"},
                                 {RuleField::kJobid, "jobid"},
                                 {RuleField::kProjid, "projid"}};

std::string_view NameOf(RuleField field) {
  for (const auto& f : kFields) {
    if (f.field == field) return f.name;
  }
  return "?";
}

Result<uint32_t> ParseNumber(std::string_view word) {
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || ec != std::errc() || end != word.data() + word.size()) {
    return Status::Error(EINVAL,
                         "\"" + std::string(word) + "\" is not a number in [0, 4294967295]");
  }
  return value;
}

// Parses the inside of "{...}" for `field`.
Result<RuleCondition> ParseValues(RuleField field, std::string_view inside) {
  RuleCondition condition;
  condition.field = field;
  std::set<std::string_view> seen;  // patterns so far: a linear search made this quadratic
  size_t pos = 0;
  while (pos < inside.size()) {
    if (IsBlank(inside[pos]) || inside[pos] == ',') {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < inside.size() && !IsBlank(inside[end]) && inside[end] != ',') ++end;
    const std::string_view value = inside.substr(pos, end - pos);
    pos = end;
    if (value.find_first_of("{}&=") != std::string_view::npos) {
      return Status::Error(EINVAL, "value \"" + std::string(value) + "\" of " +
                                       std::string(NameOf(field)) + " holds one of { } & =");
    }
    if (field == RuleField::kJobid) {
      if (seen.insert(value).second) condition.patterns.emplace_back(value);
    } else {
      SFS_RETURN_IF_ERROR(condition.numbers.Add(NameOf(field), value));
    }
  }
  condition.numbers.Sort();
  if (condition.numbers.empty() && condition.patterns.empty()) {
    return Status::Error(EINVAL, std::string(NameOf(field)) + "={} lists no value");
  }
  return condition;
}

}  // namespace

Status CheckPoolName(std::string_view name, std::string_view what) {
  const std::string prefix = std::string(what) + " name \"" + std::string(name) + "\" ";
  if (name.empty()) return Status::Error(EINVAL, std::string(what) + " name is empty");
  if (name.size() > kMaxPoolNameLen) {
    return Status::Error(
        EINVAL, prefix + "is longer than " + std::to_string(kMaxPoolNameLen) + " characters");
  }
  if (!std::all_of(name.begin(), name.end(), IsNameChar)) {
    return Status::Error(EINVAL, prefix + "may hold only letters, digits, '_', '-' and '.'");
  }
  if (name[0] == '-' || name[0] == '.') {
    return Status::Error(EINVAL, prefix + "must start with a letter, a digit or '_'");
  }
  return Status::Ok();
}


bool RuleCondition::Matches(const PlacementContext& context) const {
  uint32_t number = 0;
  switch (field) {
    case RuleField::kJobid:
      return std::any_of(patterns.begin(), patterns.end(),
                         [&](const std::string& p) { return GlobMatch(p, context.jobid); });
    case RuleField::kUid:
      number = context.uid;
      break;
    case RuleField::kGid:
      number = context.gid;
      break;
    case RuleField::kProjid:
      number = context.projid;
      break;
  }
  return numbers.Contains(number);
}

bool PoolRule::Matches(const PlacementContext& context) const {
  return std::all_of(conditions.begin(), conditions.end(),
                     [&](const RuleCondition& c) { return c.Matches(context); });
}

Result<PoolRule> ParsePoolRule(std::string_view text) {
  if (const size_t at = FindControl(text); at != std::string_view::npos) {
    return Invalid(text, "control character at byte " + std::to_string(at));
  }
  PoolRule rule;
  bool have_rank = false, have_pool = false;
  bool after_condition = false;  // the last word was a condition
  bool want_condition = false;   // an '&' waits for its right-hand condition
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && IsBlank(text[pos])) ++pos;
    if (pos == text.size()) break;
    if (text[pos] == '&') {
      if (!after_condition) return Invalid(text, "'&' must stand between two conditions");
      after_condition = false;
      want_condition = true;
      ++pos;
      continue;
    }
    const size_t eq = text.find('=', pos);
    size_t word_end = pos;
    while (word_end < text.size() && !IsBlank(text[word_end]) && text[word_end] != '&' &&
           text[word_end] != '=') {
      ++word_end;
    }
    if (eq != word_end) {
      return Invalid(text,
                     "\"" + std::string(text.substr(pos, word_end - pos)) + "\" is not key=value");
    }
    const std::string_view key = text.substr(pos, eq - pos);
    pos = eq + 1;
    const FieldName* field = nullptr;
    for (const auto& f : kFields) {
      if (f.name == key) field = &f;
    }
    if (field != nullptr) {
      if (after_condition) return Invalid(text, "conditions must be joined by '&'");
      if (pos >= text.size() || text[pos] != '{') {
        return Invalid(text, std::string(key) + "= must be followed by {values}");
      }
      const size_t close = text.find('}', pos);
      if (close == std::string_view::npos)
        return Invalid(text, "unclosed '{' after " + std::string(key));
      auto condition = ParseValues(field->field, text.substr(pos + 1, close - pos - 1));
      if (!condition.ok()) return Invalid(text, condition.status().message());
      rule.conditions.push_back(std::move(condition).value());
      pos = close + 1;
      if (pos < text.size() && !IsBlank(text[pos]) && text[pos] != '&') {
        return Invalid(text, "expected a blank or '&' after '}'");
      }
      after_condition = true;
      want_condition = false;
      continue;
    }
    if (want_condition) return Invalid(text, "'&' must be followed by a condition");
    after_condition = false;
    size_t end = pos;
    while (end < text.size() && !IsBlank(text[end])) ++end;
    const std::string_view value = text.substr(pos, end - pos);
    pos = end;
    if (key == "rank") {
      if (have_rank) return Invalid(text, "rank given twice");
      auto rank = ParseNumber(value);
      if (!rank.ok()) return Invalid(text, "rank: " + rank.status().message());
      rule.rank = *rank;
      have_rank = true;
    } else if (key == "pool") {
      if (have_pool) return Invalid(text, "pool given twice");
      if (Status s = CheckPoolName(value); !s.ok()) return Invalid(text, s.message());
      rule.pool = value;
      have_pool = true;
    } else {
      return Invalid(text, "unknown key \"" + std::string(key) +
                               "\" (expected rank, pool, uid, gid, jobid or projid)");
    }
  }
  if (want_condition) return Invalid(text, "'&' must be followed by a condition");
  if (!have_pool) return Invalid(text, "no pool=NAME");
  return rule;
}

std::string FormatPoolRule(const PoolRule& rule) {
  std::string out = "rank=" + std::to_string(rule.rank);
  for (size_t i = 0; i < rule.conditions.size(); ++i) {
    const RuleCondition& c = rule.conditions[i];
    out += i == 0 ? " " : " & ";
    out += NameOf(c.field);
    out += "={";
    std::string sep;
    if (!c.numbers.empty()) out += std::exchange(sep, ",") + c.numbers.ToString(",");
    for (const std::string& p : c.patterns) out += std::exchange(sep, ",") + p;
    out += "}";
  }
  return out + " pool=" + rule.pool;
}

}  // namespace sfs::layout
