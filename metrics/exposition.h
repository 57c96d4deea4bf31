// Prometheus text exposition format (version 0.0.4): metric families with
// HELP and TYPE lines, then their samples with labels. Samples can be added
// in any order; the text groups each family's samples together, as the
// format requires. Pure; not thread-safe (build one per scrape).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sfs::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// A label value with '\\', '"' and newlines escaped as the format wants, and
// bytes that are not UTF-8 written as the text \xNN (see ValidUtf8).
std::string EscapeLabelValue(std::string_view value);

class Exposition {
 public:
  enum class Type { kCounter, kGauge };
  // Declares a family; a second declaration of the same name is ignored.
  void Family(std::string_view name, Type type, std::string_view help);
  // A sample of a declared family (an undeclared one is declared as an
  // untyped gauge with no help, so nothing is lost).
  void Add(std::string_view name, const Labels& labels, double value);
  void Add(std::string_view name, const Labels& labels, uint64_t value);
  std::string Text() const;

 private:
  struct FamilyText {
    std::string name;
    std::string header;   // HELP and TYPE lines
    std::string samples;  // one line each
  };
  FamilyText& Find(std::string_view name);
  void AddLine(std::string_view name, const Labels& labels, const std::string& value);

  std::vector<FamilyText> families_;  // in the order declared
};

}  // namespace sfs::metrics
