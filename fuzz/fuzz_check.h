// What every fuzz target shares: a check that aborts (so libFuzzer records
// the input as a crash) with both sides of a failed round trip printed,
// control bytes escaped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string_view>

#include "common/text.h"

namespace sfs::fuzz {

[[noreturn]] inline void Fail(const char* what, std::string_view first = {},
                              std::string_view second = {}) {
  fprintf(stderr, "FUZZ CHECK FAILED: %s\n  first:  \"%s\"\n  second: \"%s\"\n", what,
          Printable(first).c_str(), Printable(second).c_str());
  abort();
}

// Aborts unless `condition`; `first` and `second` say what was compared.
inline void Check(bool condition, const char* what, std::string_view first = {},
                  std::string_view second = {}) {
  if (!condition) Fail(what, first, second);
}

// The fuzzer's input as text.
inline std::string_view Text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

using TextParser = void (*)(std::string_view);

// For a target that fuzzes several parsers: the first byte picks one, the
// rest is its text.
inline void DispatchByFirstByte(const uint8_t* data, size_t size,
                                std::initializer_list<TextParser> parsers) {
  if (size == 0) return;
  parsers.begin()[data[0] % parsers.size()](Text(data + 1, size - 1));
}

// For a target fuzzing a rule set's commands (Set::Apply, Set::Deserialize):
// each line of the input is applied to the set the earlier lines built, and
// every set accepted goes to `check`; so does the whole input read as
// stored text, if accepted. A refusal must say why.
template <class Set, class CheckSet>
void FuzzRuleCommands(std::string_view text, std::shared_ptr<const Set> set, CheckSet check) {
  for (std::string_view line : SplitAny(text, "\n")) {
    auto next = set->Apply(line);
    if (!next.ok()) {
      Check(!next.status().message().empty(), "a refusal without a message", line);
      continue;
    }
    set = std::move(next).value();
    check(*set);
  }
  auto stored = Set::Deserialize(text);
  if (stored.ok()) check(**stored);
}

}  // namespace sfs::fuzz
