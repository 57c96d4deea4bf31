// Small text helpers every module's settings parsers share. Settings arrive
// from setxattr and config files, which often carry a trailing newline, so
// every kind of ASCII blank counts as a blank.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sfs {

inline constexpr std::string_view kBlanks = " \t\n\r\f\v";

// `s` without leading and trailing blanks.
std::string_view Trim(std::string_view s);

// The first blank-separated word of `s`, and what follows it (trimmed).
std::pair<std::string_view, std::string_view> SplitWord(std::string_view s);

// Pieces of `s` separated by any of `separators`, empty pieces dropped.
std::vector<std::string_view> SplitAny(std::string_view s, std::string_view separators);

// The blank-separated words of `s`.
inline std::vector<std::string_view> Words(std::string_view s) { return SplitAny(s, kBlanks); }

// The position of the first control byte of `s` (below 0x20, or 0x7f) that
// is not a blank, or npos. Settings refuse such bytes: a NUL or an escape
// sequence in a rule can only be a mistake or an attack on whoever reads it.
size_t FindControl(std::string_view s);

// `s` with every control byte (blanks included) written as \xNN, so a
// message quoting user text stays one log line. For messages only: a
// backslash is left as it is, so applying it twice changes nothing more.
std::string Printable(std::string_view s);

// The length of the valid UTF-8 sequence starting at s[at] (1 to 4), or 0
// when the bytes there are not one (a stray continuation byte, an overlong
// or surrogate form, a sequence cut short).
size_t Utf8SequenceLength(std::string_view s, size_t at);

// `s` with every byte that is not part of valid UTF-8 written as the text
// \xNN, so what was read from a user's environment can go where UTF-8 is
// required (Prometheus label values, JSON).
std::string ValidUtf8(std::string_view s);

// `s` as a JSON string literal, quotes included: '"' and '\\' escaped,
// control bytes as \u00NN, bytes that are not UTF-8 as the text \xNN.
std::string JsonQuote(std::string_view s);

// Shell-style glob: '*' matches any run (also empty), '?' one character,
// everything else itself. Greedy with one backtrack point (the last '*'),
// which is exact: a later '*' subsumes an earlier one.
bool GlobMatch(std::string_view pattern, std::string_view text);

}  // namespace sfs
