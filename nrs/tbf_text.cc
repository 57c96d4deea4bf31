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
