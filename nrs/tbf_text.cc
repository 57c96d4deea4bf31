#include "nrs/tbf_text.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

namespace sfs::nrs {

Status Invalid(std::string message) { return Status::Error(EINVAL, std::move(message)); }

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

namespace {
constexpr size_t kMaxNameLength = 15;  // Lustre's MAX_TBF_NAME, less its NUL
}  // namespace

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

Result<RuleCommand> ParseRuleCommand(std::string_view command, std::string_view what) {
  const std::string kind(what);
  if (const size_t at = FindControl(command); at != std::string_view::npos) {
    return Invalid(kind + " command has a control character at byte " + std::to_string(at));
  }
  auto [verb, rest] = SplitWord(command);
  auto [name, args] = SplitWord(rest);
  if (verb != "start" && verb != "change" && verb != "stop") {
    return Invalid("unknown " + kind + " command '" + std::string(verb) + "' (start, change, stop)");
  }
  SFS_RETURN_IF_ERROR(CheckName(name, "rule"));
  return RuleCommand{verb, name, args};
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

}  // namespace sfs::nrs
