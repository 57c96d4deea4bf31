// The read-only NRS reports of NrsControl: nrs_policies (and
// ost<N>.nrs_policies), nrs_tbf_rule and nrs_stats. Each stays readable
// through getxattr, whose values end at 64 KiB, however many OSTs, rules or
// classes there are.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "control/nrs_control.h"
#include "control/nrs_heads.h"

namespace sfs::control {
namespace {

constexpr size_t kMaxReport = 60 * 1024;

std::string Micros(uint64_t ns) { return fmt::format("{:.0f}", ns / 1000.0); }

// A report that stays readable through getxattr: lines past kMaxReport are
// counted, not added.
class Report {
 public:
  void Add(const std::string& line) {
    if (left_out_ > 0 || text_.size() + line.size() > kMaxReport) {
      left_out_++;
    } else {
      text_ += line;
    }
  }
  std::string Done() {
    if (left_out_ > 0) text_ += fmt::format("... {} more lines left out\n", left_out_);
    return std::move(text_);
  }

 private:
  std::string text_;
  size_t left_out_ = 0;
};

// Each line of a policy description, indented.
void AddDescription(Report* report, std::string_view desc, std::string_view indent,
                    size_t max_lines) {
  for (size_t n = 0; !desc.empty() && n < max_lines; n++) {
    const size_t end = std::min(desc.find('\n'), desc.size());
    if (end > 0) report->Add(fmt::format("{}{}\n", indent, desc.substr(0, end)));
    desc = end < desc.size() ? desc.substr(end + 1) : std::string_view{};
  }
}

}  // namespace

std::string NrsControl::PoliciesReport(size_t first, size_t end) const {
  // REQUIRES: mu_ held. YAML, shaped like Lustre's nrs_policies output; a
  // policy's description shows its settings line only (TBF rules are in
  // nrs_tbf_rule), so the report stays small with many OSTs.
  const std::vector<std::string> registered = registry_->Names();
  Report out;
  for (size_t target = first; target < end; target++) {
    out.Add(fmt::format("{}:\n", TargetLabel(target)));
    for (size_t head = 0; head < kHeads; head++) {
      out.Add(fmt::format("  {}:\n", kHeadTitle[head]));
      for (const nrs::PolicyStatus& s :
           targets_[target]->PolicyStatus(kHeadOf[head], registered, /*with_classes=*/false)) {
        std::string entry =
            fmt::format("    - name: {}\n      state: {}\n      fallback: {}\n", s.name,
                        nrs::PolicyStateName(s.state), s.fallback ? "yes" : "no");
        if (s.primary) entry += fmt::format("      spec: {}\n", state_.specs[head][target]);
        entry +=
            fmt::format("      queued: {}\n      active: {}\n", s.stats.queued, s.stats.active);
        if (s.state != nrs::PolicyState::kStopped) {
          entry += fmt::format("      completed: {}\n", s.stats.completed);
        }
        out.Add(entry);
        AddDescription(&out, s.description, "      # ", 1);
      }
    }
  }
  return out.Done();
}

std::string NrsControl::RulesReport() const {
  // REQUIRES: mu_ held.
  Report out;
  for (size_t head = 0; head < kHeads; head++) {
    out.Add(fmt::format("{}:\n  rules:\n", kHeadTitle[head]));
    const nrs::TbfRuleSet& rules = *state_.rules[head];
    for (const nrs::TbfRule& rule : rules.rules()) out.Add("    - " + rule.ToString() + "\n");
    nrs::TbfRule fallback = rules.default_rule();
    // The rate most targets give the default rule (each OST's own is in
    // its section below and in nrs_tbf_default_rate).
    if (fallback.rate == 0) {
      std::map<uint64_t, size_t> count;
      for (const TunableValues& cell : state_.cells[head]) count[cell.tunables.tbf_default_rate]++;
      fallback.rate = nrs::Tunables{}.tbf_default_rate;
      size_t most = 0;
      for (const auto& [rate, n] : count) {
        if (n > most) std::tie(fallback.rate, most) = std::tie(rate, n);
      }
    }
    out.Add("    - " + fallback.ToString() + "\n");
    for (size_t target = 0; target < targets_.size(); target++) {
      const std::string& spec = state_.specs[head][target];
      if (spec.rfind("tbf", 0) != 0) continue;
      out.Add(fmt::format("  {} ({}):\n", TargetLabel(target), spec));
      for (const nrs::PolicyStatus& s :
           targets_[target]->PolicyStatus(kHeadOf[head], {}, /*with_classes=*/false)) {
        if (s.primary) AddDescription(&out, s.description, "    ", SIZE_MAX);
      }
    }
  }
  return out.Done();
}

std::string NrsControl::StatsReport() const {
  // REQUIRES: mu_ held. One line per target, head and policy class.
  Report out;
  for (size_t target = 0; target < targets_.size(); target++) {
    const std::string label = TargetLabel(target);
    for (size_t head = 0; head < kHeads; head++) {
      const nrs::Head which = kHeadOf[head];
      const nrs::HeadStats hs = targets_[target]->HeadStats(which);
      out.Add(fmt::format("{} {} dequeued={} seek_bytes={} object_switches={}\n", label,
                          nrs::HeadName(which), hs.dequeued, hs.seek_bytes, hs.object_switches));
      for (const nrs::PolicyStatus& s : targets_[target]->PolicyStatus(which, {})) {
        const std::string role = s.fallback ? "(fallback)" : s.primary ? "" : "(stopping)";
        for (const nrs::ClassStats& c : s.classes) {
          out.Add(
              fmt::format("{} {} {}{} class={} requests={} bytes={} wait_us_p50={} "
                          "wait_us_p99={} service_us_p50={} service_us_p99={}\n",
                          label, nrs::HeadName(which), s.name, role, c.name, c.requests, c.bytes,
                          Micros(c.wait.Percentile(50)), Micros(c.wait.Percentile(99)),
                          Micros(c.service.Percentile(50)), Micros(c.service.Percentile(99))));
        }
      }
    }
  }
  return out.Done();
}

}  // namespace sfs::control
