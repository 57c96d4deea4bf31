#include "layout/placement_config.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "layout/rtds_tree.h"

namespace sfs::layout {
namespace {

bool IsSeparator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n'; }

// Splits on commas and blanks, dropping empty items.
std::vector<std::string_view> Items(std::string_view text) {
  std::vector<std::string_view> items;
  size_t pos = 0;
  while (pos < text.size()) {
    if (IsSeparator(text[pos])) {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < text.size() && !IsSeparator(text[end])) ++end;
    items.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return items;
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

Result<uint32_t> ParseIndex(std::string_view word) {
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || ec != std::errc() || end != word.data() + word.size()) {
    return Status::Error(EINVAL, Quote(word) + " is not an OST index");
  }
  if (value >= kMaxOsts) {
    return Status::Error(
        EINVAL, "OST index " + std::string(word) + " is not below " + std::to_string(kMaxOsts));
  }
  return value;
}

// A non-negative real, at most `max` ("inf" allowed when max is infinite).
Result<double> ParseReal(std::string_view word, double max) {
  double value = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (word.empty() || ec != std::errc() || end != word.data() + word.size() || std::isnan(value) ||
      value < 0 || value > max) {
    return Status::Error(
        EINVAL,
        Quote(word) + " is not a number in [0, " +
            (std::isinf(max) ? std::string("inf") : std::to_string(static_cast<uint64_t>(max))) +
            "]");
  }
  return value;
}

// Shortest text that parses back to `value`; whole numbers without an
// exponent ("1000000", not "1e+06").
std::string FormatReal(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return std::to_string(static_cast<int64_t>(value));
  }
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, end);
}

Status NoSuchOst(uint32_t ost, uint32_t count, const std::string& where) {
  return Status::Error(EINVAL, where + " names OST " + std::to_string(ost) +
                                   "; the filesystem has " + std::to_string(count) + " OSTs (0-" +
                                   std::to_string(count - 1) + ")");
}

}  // namespace

double PlacementConfig::RelativeWeight(uint32_t i, uint32_t j) const {
  auto it = relative.find({i, j});
  if (it != relative.end()) return it->second;
  return i == j ? 0.0 : 1.0;
}

PlacementConfig DefaultPlacementConfig(uint32_t ost_count) {
  PlacementConfig config;
  config.weights.assign(ost_count, 1.0);
  return config;
}

Result<WeightList> ParseWeightList(std::string_view text) {
  WeightList list;
  for (std::string_view item : Items(text)) {
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Status::Error(EINVAL, "weight list item " + Quote(item) + " is not OST=weight");
    }
    auto index = ParseIndex(item.substr(0, eq));
    if (!index.ok())
      return Status::Error(EINVAL,
                           "weight list item " + Quote(item) + ": " + index.status().message());
    auto weight = ParseReal(item.substr(eq + 1), kMaxWeight);
    if (!weight.ok())
      return Status::Error(EINVAL,
                           "weight list item " + Quote(item) + ": " + weight.status().message());
    list.emplace_back(*index, *weight);
  }
  if (list.empty()) return Status::Error(EINVAL, "weight list is empty (expected OST=weight,...)");
  std::vector<uint32_t> indexes;
  for (const auto& [index, weight] : list) indexes.push_back(index);
  std::sort(indexes.begin(), indexes.end());
  if (auto twice = std::adjacent_find(indexes.begin(), indexes.end()); twice != indexes.end()) {
    return Status::Error(EINVAL, "weight list names OST " + std::to_string(*twice) + " twice");
  }
  return list;
}

std::string FormatWeightList(const std::vector<double>& weights) {
  std::string out;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (i != 0) out += ',';
    out += std::to_string(i) + "=" + FormatReal(weights[i]);
  }
  return out;
}

Status ApplyWeights(PlacementConfig* config, const WeightList& list) {
  for (const auto& [ost, weight] : list) {
    if (ost >= config->ost_count()) return NoSuchOst(ost, config->ost_count(), "weight list");
  }
  for (const auto& [ost, weight] : list) config->weights[ost] = weight;
  return Status::Ok();
}

Result<std::vector<RelativeWeightEntry>> ParseRelativeWeights(std::string_view text) {
  std::vector<RelativeWeightEntry> entries;
  for (std::string_view item : Items(text)) {
    const size_t colon = item.find(':');
    const size_t eq = item.find('=');
    auto bad = [&](const std::string& why) {
      return Status::Error(EINVAL, "relative weight " + Quote(item) + ": " + why);
    };
    if (colon == std::string_view::npos || eq == std::string_view::npos || colon > eq) {
      return bad("expected I:J=factor");
    }
    auto from = ParseIndex(item.substr(0, colon));
    if (!from.ok()) return bad(from.status().message());
    auto to = ParseIndex(item.substr(colon + 1, eq - colon - 1));
    if (!to.ok()) return bad(to.status().message());
    auto factor = ParseReal(item.substr(eq + 1), INFINITY);
    if (!factor.ok()) return bad(factor.status().message());
    entries.push_back({*from, *to, *factor});
  }
  if (entries.empty())
    return Status::Error(EINVAL, "relative weight list is empty (expected I:J=factor,...)");
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (const auto& e : entries) pairs.emplace_back(e.from, e.to);
  std::sort(pairs.begin(), pairs.end());
  if (auto twice = std::adjacent_find(pairs.begin(), pairs.end()); twice != pairs.end()) {
    return Status::Error(EINVAL, "relative weight " + std::to_string(twice->first) + ":" +
                                     std::to_string(twice->second) + " is given twice");
  }
  return entries;
}

std::string FormatRelativeWeights(const PlacementConfig& config) {
  std::string out;
  for (const auto& [pair, factor] : config.relative) {
    if (!out.empty()) out += ',';
    out +=
        std::to_string(pair.first) + ":" + std::to_string(pair.second) + "=" + FormatReal(factor);
  }
  return out;
}

Status ApplyRelativeWeights(PlacementConfig* config,
                            const std::vector<RelativeWeightEntry>& entries) {
  for (const auto& e : entries) {
    const uint32_t bad = std::max(e.from, e.to);
    if (bad >= config->ost_count()) return NoSuchOst(bad, config->ost_count(), "relative weight");
  }
  for (const auto& e : entries) {
    const double standard = e.from == e.to ? 0.0 : 1.0;
    if (e.factor == standard) {
      config->relative.erase({e.from, e.to});
    } else {
      config->relative[{e.from, e.to}] = e.factor;
    }
  }
  return Status::Ok();
}

Result<std::vector<uint32_t>> ParseOstSet(std::string_view text) {
  constexpr std::string_view kPrefix = "osts=";
  if (text.substr(0, kPrefix.size()) != kPrefix) {
    return Status::Error(EINVAL, "pool " + Quote(text) + ": expected osts=I,J-K,...");
  }
  // Ranges first, expanded once merged: expanding each as it comes made
  // "osts=0-65535,0-65535,..." (one 64 KiB value) cost gigabytes.
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  for (std::string_view item : Items(text.substr(kPrefix.size()))) {
    const size_t dash = item.find('-');
    auto first = ParseIndex(item.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseIndex(item.substr(dash + 1));
    if (!first.ok() || !last.ok()) {
      return Status::Error(EINVAL, "pool item " + Quote(item) + ": " +
                                       (first.ok() ? last : first).status().message());
    }
    if (*first > *last)
      return Status::Error(EINVAL, "pool item " + Quote(item) + ": range runs backwards");
    ranges.emplace_back(*first, *last);
  }
  std::sort(ranges.begin(), ranges.end());
  std::vector<uint32_t> osts;  // at most kMaxOsts: each index once
  for (const auto& [first, last] : ranges) {
    const uint32_t from = osts.empty() ? first : std::max(first, osts.back() + 1);
    for (uint32_t ost = from; ost <= last; ++ost) osts.push_back(ost);
  }
  if (osts.empty()) return Status::Error(EINVAL, "pool " + Quote(text) + " lists no OST");
  return osts;
}

std::string FormatOstSet(const std::vector<uint32_t>& osts) {
  std::string out = "osts=";
  for (size_t i = 0; i < osts.size();) {
    size_t j = i;
    while (j + 1 < osts.size() && osts[j + 1] == osts[j] + 1) ++j;
    if (i != 0) out += ',';
    out += std::to_string(osts[i]);
    if (j > i) out += "-" + std::to_string(osts[j]);
    i = j + 1;
  }
  return out;
}

Status ValidatePlacementConfig(const PlacementConfig& config) {
  const uint32_t count = config.ost_count();
  if (count == 0 || count > kMaxOsts) {
    return Status::Error(EINVAL, "placement needs 1 to " + std::to_string(kMaxOsts) +
                                     " OSTs, not " + std::to_string(count));
  }
  bool any_positive = false;
  for (uint32_t i = 0; i < count; ++i) {
    const double w = config.weights[i];
    if (!(w >= 0 && w <= kMaxWeight)) {
      return Status::Error(EINVAL, "weight of OST " + std::to_string(i) + " is " + FormatReal(w) +
                                       ", outside [0, 1e6]");
    }
    any_positive |= w > 0;
  }
  if (!any_positive) return Status::Error(ENOSPC, "every OST would have weight 0");
  for (const auto& [pair, factor] : config.relative) {
    const uint32_t bad = std::max(pair.first, pair.second);
    if (bad >= count) return NoSuchOst(bad, count, "relative weight");
    if (!(factor >= 0)) {
      return Status::Error(EINVAL, "relative weight " + std::to_string(pair.first) + ":" +
                                       std::to_string(pair.second) + " is negative or NaN");
    }
  }
  for (const auto& [name, osts] : config.pools) {
    if (Status s = CheckPoolName(name); !s.ok()) return s;
    if (osts.empty()) return Status::Error(EINVAL, "pool " + name + " has no OST");
    if (!std::is_sorted(osts.begin(), osts.end()) ||
        std::adjacent_find(osts.begin(), osts.end()) != osts.end()) {
      return Status::Error(EINVAL, "pool " + name + ": OST list not sorted and distinct");
    }
    if (osts.back() >= count) return NoSuchOst(osts.back(), count, "pool " + name);
    if (std::none_of(osts.begin(), osts.end(), [&](uint32_t o) { return config.weights[o] > 0; })) {
      return Status::Error(ENOSPC, "pool " + name + " would have no OST of positive weight (" +
                                       FormatOstSet(osts) + ")");
    }
  }
  for (const auto& [name, rule] : config.rules) {
    if (Status s = CheckPoolName(name, "rule"); !s.ok()) return s;
    if (!config.pools.contains(rule.pool)) {
      return Status::Error(EINVAL,
                           "rule " + name + " names pool " + rule.pool + ", which does not exist");
    }
  }
  return Status::Ok();
}

std::string EncodePlacementConfig(const PlacementConfig& config) {
  std::string out = "weights " + FormatWeightList(config.weights) + "\n";
  if (!config.relative.empty()) out += "relative " + FormatRelativeWeights(config) + "\n";
  for (const auto& [name, osts] : config.pools)
    out += "pool " + name + " " + FormatOstSet(osts) + "\n";
  for (const auto& [name, rule] : config.rules)
    out += "rule " + name + " " + FormatPoolRule(rule) + "\n";
  return out;
}

Result<PlacementConfig> DecodePlacementConfig(std::string_view text, uint32_t ost_count) {
  PlacementConfig config = DefaultPlacementConfig(ost_count);
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty()) continue;
    auto corrupt = [&](const std::string& why) {
      return Status::Error(EIO, "placement config line " + std::to_string(line_no) + " (" +
                                    std::string(line) + "): " + why);
    };
    const size_t sp = line.find(' ');
    const std::string_view kind = line.substr(0, sp);
    const std::string_view rest = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    Status s;
    if (kind == "weights") {
      auto list = ParseWeightList(rest);
      s = list.ok() ? ApplyWeights(&config, *list) : list.status();
    } else if (kind == "relative") {
      auto entries = ParseRelativeWeights(rest);
      s = entries.ok() ? ApplyRelativeWeights(&config, *entries) : entries.status();
    } else if (kind == "pool" || kind == "rule") {
      const size_t name_end = rest.find(' ');
      if (name_end == std::string_view::npos) return corrupt("no value");
      const std::string name(rest.substr(0, name_end));
      const std::string_view value = rest.substr(name_end + 1);
      if (kind == "pool") {
        auto osts = ParseOstSet(value);
        if (osts.ok()) config.pools[name] = std::move(osts).value();
        s = osts.status();
      } else {
        auto rule = ParsePoolRule(value);
        if (rule.ok()) config.rules[name] = std::move(rule).value();
        s = rule.status();
      }
    } else {
      return corrupt("unknown item");
    }
    if (!s.ok()) return corrupt(s.message());
  }
  if (Status s = ValidatePlacementConfig(config); !s.ok()) {
    return Status::Error(EIO, "stored placement config is invalid: " + s.message());
  }
  return config;
}

}  // namespace sfs::layout
