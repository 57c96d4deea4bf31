#include "control/nrs_settings.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "common/text.h"
#include "layout/layout.h"

namespace sfs::control {
namespace {

bool TakeQualifier(std::string_view word, HeadChoice* choice) {
  if (word == "reg") {
    *choice = HeadChoice{true, false};
    return true;
  }
  if (word == "hp") {
    *choice = HeadChoice{false, true};
    return true;
  }
  return false;
}

}  // namespace

Result<PolicySetting> ParsePolicySetting(std::string_view value) {
  PolicySetting setting;
  bool qualified = false;
  for (std::string_view word : Words(value)) {
    if (!setting.spec.empty() && TakeQualifier(word, &setting.heads)) {
      if (qualified) return Status::Error(EINVAL, "give 'reg' or 'hp' at most once");
      qualified = true;
      continue;
    }
    if (!setting.spec.empty()) setting.spec += ' ';
    setting.spec += word;
  }
  if (setting.spec.empty()) return Status::Error(EINVAL, "nrs_policies needs a policy name");
  return setting;
}

RuleSetting ParseRuleSetting(std::string_view value) {
  RuleSetting setting;
  setting.command = Trim(value);
  const auto [first, rest] = SplitWord(value);
  if (TakeQualifier(first, &setting.heads)) setting.command = rest;
  return setting;
}

Result<uint64_t> ParseCount(std::string_view name, std::string_view text, uint64_t min,
                            uint64_t max) {
  text = Trim(text);
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    return Status::Error(EINVAL, fmt::format("{} must be a whole number from {} to {}, not '{}'",
                                             name, min, max, text));
  }
  return value;
}

Result<std::chrono::nanoseconds> ParseDuration(std::string_view name, std::string_view text) {
  text = Trim(text);
  double scale = 1e9;
  std::string_view number = text;
  // "ns" before "s", which it ends with.
  for (auto [suffix, factor] : {std::pair{"ms", 1e6}, {"us", 1e3}, {"ns", 1.0}, {"s", 1e9}}) {
    const std::string_view sfx(suffix);
    if (number.size() > sfx.size() && number.substr(number.size() - sfx.size()) == sfx) {
      number.remove_suffix(sfx.size());
      scale = factor;
      break;
    }
  }
  double value = -1;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
      !std::isfinite(value) || value < 0 || value * scale > 3600e9) {
    return Status::Error(EINVAL, fmt::format("{} must be a duration such as 2, 0.5, 250ms, "
                                             "100us or 500ns (plain numbers are seconds, at "
                                             "most one hour), not '{}'",
                                             name, text));
  }
  return std::chrono::nanoseconds(static_cast<int64_t>(std::llround(value * scale)));
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  const int64_t ns = d.count();
  if (ns % 1'000'000'000 == 0) return std::to_string(ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
  if (ns % 1000 == 0) return std::to_string(ns / 1000) + "us";
  return std::to_string(ns) + "ns";
}

Result<nrs::OrrSupported> ParseOrrSupported(std::string_view text) {
  text = Trim(text);
  for (auto s : {nrs::OrrSupported::kReads, nrs::OrrSupported::kWrites,
                 nrs::OrrSupported::kReadsAndWrites}) {
    if (text == nrs::OrrSupportedName(s)) return s;
  }
  return Status::Error(EINVAL,
                       "nrs_orr_supported must be reads, writes or reads_and_writes, "
                       "not '" +
                           std::string(text) + "'");
}

SettingName SplitSettingName(std::string_view name) {
  SettingName out;
  constexpr std::string_view kOst = "ost";
  if (name.substr(0, kOst.size()) == kOst) {
    const size_t dot = name.find('.', kOst.size());
    const std::string_view digits = dot == std::string_view::npos
                                        ? std::string_view{}
                                        : name.substr(kOst.size(), dot - kOst.size());
    uint32_t index = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size()) {
      out.ost = index;
      name.remove_prefix(dot + 1);
    }
  }
  for (auto [prefix, heads] : {std::pair{std::string_view("reg."), HeadChoice{true, false}},
                               std::pair{std::string_view("hp."), HeadChoice{false, true}}}) {
    if (name.substr(0, prefix.size()) == prefix) {
      out.heads = heads;
      out.head_given = true;
      name.remove_prefix(prefix.size());
      break;
    }
  }
  out.base = name;
  return out;
}

std::string JoinSettingName(const SettingName& name) {
  std::string out;
  if (name.ost >= 0) out += fmt::format("ost{}.", name.ost);
  if (name.head_given) out += name.heads.regular ? "reg." : "hp.";
  return out + std::string(name.base);
}

namespace {

using Reach = TunableReach;
constexpr TunableName kTunables[] = {
    {"nrs_crrn_quantum", Reach::kHead},    {"nrs_orr_quantum", Reach::kHead},
    {"nrs_orr_supported", Reach::kHead},   {"nrs_tbf_default_rate", Reach::kHead},
    {"nrs_tbf_class_limit", Reach::kHead}, {"nrs_delay_pct", Reach::kHead},
    {"nrs_delay_min", Reach::kHead},       {"nrs_delay_max", Reach::kHead},
    {"nrs_epoch_max_ms", Reach::kHead},    {"nrs_hp_ratio", Reach::kService},
    {"nrs_hp_ops", Reach::kService},       {"nrs_epoch_ms", Reach::kService},
    {"nrs_tbf_scope", Reach::kFilesystem}, {"nrs_eh_timeout", Reach::kFilesystem},
    {"nrs_orr_quantum_bytes", Reach::kHead}};

std::string Millis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
}

}  // namespace

std::span<const TunableName> TunableNames() { return kTunables; }

const TunableName* FindTunable(std::string_view name) {
  for (const TunableName& t : kTunables) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Status ParseTunable(std::string_view name, std::string_view value, TunableValues* values) {
  nrs::Tunables& t = values->tunables;
  const std::string n(name);
  if (name == "nrs_crrn_quantum" || name == "nrs_orr_quantum") {
    auto q = ParseCount(n, value, 1, 65535);
    if (!q.ok()) return q.status();
    (name == "nrs_crrn_quantum" ? t.crrn_quantum : t.orr_quantum) = static_cast<uint32_t>(*q);
  } else if (name == "nrs_orr_quantum_bytes") {
    // 0 (no byte bound) or a size as in stripe sizes ("1M"); 1 TiB caps it.
    auto b = layout::ParseSize(Trim(value));
    if (!b.ok() || *b > (uint64_t{1} << 40)) {
      return Status::Error(EINVAL, "nrs_orr_quantum_bytes must be 0 or a size up to 1T, not '" +
                                       Printable(Trim(value)) + "'");
    }
    t.orr_quantum_bytes = *b;
  } else if (name == "nrs_orr_supported") {
    auto s = ParseOrrSupported(value);
    if (!s.ok()) return s.status();
    t.orr_supported = *s;
  } else if (name == "nrs_tbf_default_rate") {
    auto r = ParseCount(n, value, 1, 1'000'000'000);
    if (!r.ok()) return r.status();
    t.tbf_default_rate = *r;
  } else if (name == "nrs_tbf_class_limit") {
    auto l = ParseCount(n, value, 1, 10'000'000);
    if (!l.ok()) return l.status();
    t.tbf_idle_class_limit = *l;
  } else if (name == "nrs_delay_pct") {
    auto p = ParseCount(n, value, 0, 100);
    if (!p.ok()) return p.status();
    t.delay_pct = static_cast<uint32_t>(*p);
  } else if (name == "nrs_delay_min" || name == "nrs_delay_max") {
    auto d = ParseDuration(n, value);
    if (!d.ok()) return d.status();
    (name == "nrs_delay_min" ? t.delay_min : t.delay_max) = *d;
  } else if (name == "nrs_hp_ratio") {
    auto r = ParseCount(n, value, 1, 1000);
    if (!r.ok()) return r.status();
    values->hp_ratio = static_cast<uint32_t>(*r);
  } else if (name == "nrs_hp_ops") {
    auto ops = nrs::ParseOpSet(Trim(value));
    if (!ops.ok()) return Status::Error(EINVAL, "nrs_hp_ops: " + ops.status().message());
    values->hp_ops = *ops;
  } else if (name == "nrs_tbf_scope") {
    const std::string_view scope = Trim(value);
    if (scope == "fs") {
      t.tbf_scope = nrs::TbfScope::kFs;
    } else if (scope == "ost") {
      t.tbf_scope = nrs::TbfScope::kOst;
    } else {
      return Status::Error(EINVAL,
                           "nrs_tbf_scope must be fs or ost, not '" + std::string(scope) + "'");
    }
  } else if (name == "nrs_epoch_ms" || name == "nrs_epoch_max_ms") {
    auto ms = ParseCount(n, value, 1, 10000);
    if (!ms.ok()) return ms.status();
    (name == "nrs_epoch_ms" ? values->epoch_length : t.epoch_max) = std::chrono::milliseconds(*ms);
  } else if (name == "nrs_eh_timeout") {
    auto d = ParseDuration(n, value);
    if (!d.ok()) return d.status();
    if (*d < std::chrono::milliseconds(10)) {
      return Status::Error(
          EINVAL, "nrs_eh_timeout must be at least 10ms, not '" + std::string(Trim(value)) + "'");
    }
    values->eh_timeout = *d;
  } else {
    return Status::Error(EINVAL, "unknown NRS setting " + n);
  }
  return Status::Ok();
}

std::string FormatTunable(std::string_view name, const TunableValues& values) {
  const nrs::Tunables& t = values.tunables;
  if (name == "nrs_crrn_quantum") return std::to_string(t.crrn_quantum);
  if (name == "nrs_orr_quantum") return std::to_string(t.orr_quantum);
  if (name == "nrs_orr_supported") return nrs::OrrSupportedName(t.orr_supported);
  if (name == "nrs_orr_quantum_bytes") return std::to_string(t.orr_quantum_bytes);
  if (name == "nrs_tbf_default_rate") return std::to_string(t.tbf_default_rate);
  if (name == "nrs_tbf_class_limit") return std::to_string(t.tbf_idle_class_limit);
  if (name == "nrs_delay_pct") return std::to_string(t.delay_pct);
  if (name == "nrs_delay_min") return FormatDuration(t.delay_min);
  if (name == "nrs_delay_max") return FormatDuration(t.delay_max);
  if (name == "nrs_hp_ratio") return std::to_string(values.hp_ratio);
  if (name == "nrs_hp_ops") return nrs::OpSetName(values.hp_ops);
  if (name == "nrs_tbf_scope") return nrs::TbfScopeName(t.tbf_scope);
  if (name == "nrs_epoch_ms") return Millis(values.epoch_length);
  if (name == "nrs_epoch_max_ms") return Millis(t.epoch_max);
  if (name == "nrs_eh_timeout") return FormatDuration(values.eh_timeout);
  return "";
}

}  // namespace sfs::control
