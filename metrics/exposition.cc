#include "metrics/exposition.h"

#include <fmt/format.h>

#include <cmath>

#include "common/text.h"

namespace sfs::metrics {

std::string EscapeLabelValue(std::string_view raw) {
  // Prometheus wants UTF-8; job ids are bytes from users' environments.
  const std::string value = ValidUtf8(raw);
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

Exposition::FamilyText& Exposition::Find(std::string_view name) {
  for (FamilyText& family : families_) {
    if (family.name == name) return family;
  }
  families_.push_back({std::string(name), fmt::format("# TYPE {} gauge\n", name), ""});
  return families_.back();
}

void Exposition::Family(std::string_view name, Type type, std::string_view help) {
  for (const FamilyText& family : families_) {
    if (family.name == name) return;
  }
  // HELP text escapes only '\\' and newlines.
  std::string escaped;
  for (char c : help) escaped += c == '\n' ? std::string("\\n") : c == '\\' ? "\\\\" : std::string(1, c);
  families_.push_back({std::string(name),
                       fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escaped, name,
                                   type == Type::kCounter ? "counter" : "gauge"),
                       ""});
}

void Exposition::AddLine(std::string_view name, const Labels& labels, const std::string& value) {
  std::string line(name);
  if (!labels.empty()) {
    line += '{';
    for (size_t i = 0; i < labels.size(); i++) {
      if (i) line += ',';
      line += fmt::format("{}=\"{}\"", labels[i].first, EscapeLabelValue(labels[i].second));
    }
    line += '}';
  }
  Find(name).samples += line + " " + value + "\n";
}

void Exposition::Add(std::string_view name, const Labels& labels, double value) {
  std::string text;
  if (std::isnan(value)) {
    text = "NaN";
  } else if (std::isinf(value)) {
    text = value > 0 ? "+Inf" : "-Inf";
  } else {
    text = fmt::format("{}", value);
  }
  AddLine(name, labels, text);
}

void Exposition::Add(std::string_view name, const Labels& labels, uint64_t value) {
  AddLine(name, labels, std::to_string(value));
}

std::string Exposition::Text() const {
  std::string out;
  for (const FamilyText& family : families_) {
    if (family.samples.empty()) continue;  // a family without samples says nothing
    out += family.header + family.samples;
  }
  return out;
}

}  // namespace sfs::metrics
