#include "common/text.h"

#include <algorithm>

namespace sfs {

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kBlanks) - first + 1);
}

std::pair<std::string_view, std::string_view> SplitWord(std::string_view s) {
  s = Trim(s);
  const size_t end = std::min(s.find_first_of(kBlanks), s.size());
  return {s.substr(0, end), Trim(s.substr(end))};
}

std::vector<std::string_view> SplitAny(std::string_view s, std::string_view separators) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    const size_t end = std::min(s.find_first_of(separators), s.size());
    if (end > 0) out.push_back(s.substr(0, end));
    s.remove_prefix(std::min(end + 1, s.size()));
  }
  return out;
}

namespace {
bool IsControl(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
}  // namespace

size_t FindControl(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (IsControl(s[i]) && kBlanks.find(s[i]) == std::string_view::npos) return i;
  }
  return std::string_view::npos;
}

std::string Printable(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (IsControl(c)) {
      const auto byte = static_cast<unsigned char>(c);
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += c;
    }
  }
  return out;
}

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

size_t Utf8SequenceLength(std::string_view s, size_t at) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the bounds of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // no overlong forms
    if (lead == 0xed) high = 0x9f;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (at + length > s.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (size_t i = 2; i < length; i++) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xbf) return 0;
  }
  return length;
}

std::string ValidUtf8(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t length = Utf8SequenceLength(s, i);
    if (length == 0) {
      const auto byte = static_cast<unsigned char>(s[i]);
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
      i++;
    } else {
      out.append(s.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string JsonQuote(std::string_view raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  const std::string s = ValidUtf8(raw);
  std::string out = "\"";
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\u00";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace sfs
