#include "control/placement_control.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <random>

#include <boost/asio.hpp>

#include <fmt/format.h>

#include "common/log.h"
#include "common/text.h"
#include "layout/placement_config.h"
#include "layout/pool_rule.h"

namespace sfs::control {
namespace {

// The OST index N of a per-OST setting name "ost<N><suffix>" (e.g.
// "ost3.active"), or -1 when `name` is not one.
int64_t OstOfSettingName(std::string_view name, std::string_view suffix) {
  constexpr std::string_view kPrefix = "ost";
  if (name.size() <= kPrefix.size() + suffix.size() || name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - suffix.size()) != suffix) {
    return -1;
  }
  const std::string_view digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - suffix.size());
  uint32_t index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size()) return -1;
  return index;
}

constexpr const char* kConfigKey = "placement";
constexpr const char* kAutoKey = "rtds_auto";
constexpr std::string_view kPoolPrefix = "pool.";
constexpr std::string_view kRulePrefix = "pool_rule.";
constexpr std::string_view kActiveSuffix = ".active";
// The stored set of deactivated OSTs ("1,3"; empty: none).
constexpr const char* kInactiveKey = "inactive_osts";

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}


}  // namespace

struct PlacementControl::Loop {
  boost::asio::io_context io;
  boost::asio::steady_timer timer{io};  // GUARDED_BY(PlacementControl::mu_)
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work;
};

PlacementControl::PlacementControl(meta::MetaStore* meta, std::vector<ost::Service*> osts)
    : meta_(meta), loop_(std::make_unique<Loop>()) {
  std::lock_guard<std::mutex> lock(mu_);
  osts_ = std::move(osts);
  last_errors_.assign(osts_.size(), 0);
  last_bytes_.assign(osts_.size(), 0);
  failed_.assign(osts_.size(), false);
  unresponsive_.assign(osts_.size(), false);
  inactive_.assign(osts_.size(), false);
  factors_.assign(osts_.size(), 1.0);
  loop_->work.emplace(loop_->io.get_executor());
  thread_ = std::thread([this] { loop_->io.run(); });
}

PlacementControl::~PlacementControl() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto_.mode = AutoWeights::Mode::kOff;
    loop_->timer.cancel();
  }
  loop_->work.reset();
  loop_->io.stop();
  thread_.join();
}

Status PlacementControl::Load() {
  const uint32_t count = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<uint32_t>(osts_.size());
  }();
  layout::PlacementConfig config = layout::DefaultPlacementConfig(count);
  auto stored = meta_->GetSetting(kConfigKey);
  if (stored.ok()) {
    auto decoded = layout::DecodePlacementConfig(*stored, count);
    if (!decoded.ok()) {
      return Status::Error(EIO, "stored placement configuration: " + decoded.status().message());
    }
    config = std::move(decoded).value();
  } else if (stored.err() != ENOENT) {
    return stored.status();
  }
  auto placement = layout::NewRtdsPlacement(std::move(config), std::random_device{}());
  if (!placement.ok()) {
    return Status::Error(EIO, "stored placement configuration: " + placement.status().message());
  }
  placement_ = std::move(placement).value();

  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < osts_.size(); i++) {
    const ost::ServiceCounters counters = osts_[i]->Counters();
    last_errors_[i] = counters.io_errors;
    last_bytes_[i] = counters.bytes;
  }
  if (auto text = meta_->GetSetting(kAutoKey); text.ok()) {
    auto parsed = ParseAutoWeights(*text);
    if (parsed.ok()) {
      auto_ = *parsed;
    } else {
      Logger("layout")->error("stored rtds_auto '{}' is invalid, automatic weights off: {}", *text,
                              parsed.status().ToString());
    }
  }
  if (auto text = meta_->GetSetting(kInactiveKey); text.ok() && !Trim(*text).empty()) {
    auto osts = layout::ParseOstSet(*text);
    if (!osts.ok()) {
      return Status::Error(EIO, "stored inactive_osts '" + *text + "': " + osts.status().message());
    }
    for (uint32_t ost : *osts) {
      if (ost < inactive_.size()) inactive_[ost] = true;
    }
  } else if (!text.ok() && text.err() != ENOENT) {
    return text.status();
  }
  SFS_RETURN_IF_ERROR(ApplyFactorsLocked(factors_));
  if (auto_.mode != AutoWeights::Mode::kOff) {
    boost::asio::post(loop_->io, [this] { UpdateAutoWeights(); });
  }
  return Status::Ok();
}

bool PlacementControl::Active(uint32_t ost) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ost >= inactive_.size() || !inactive_[ost];
}

Status PlacementControl::SetActiveLocked(uint32_t ost, std::string_view value) {
  if (ost >= osts_.size()) {
    return Status::Error(ENOENT, fmt::format("no OST {}: the filesystem has {}", ost, osts_.size()));
  }
  const std::string_view trimmed = Trim(value);
  if (trimmed != "0" && trimmed != "1") {
    return Status::Error(EINVAL, fmt::format("ost{}.active is 1 or 0, not '{}'", ost,
                                             Printable(value)));
  }
  const bool inactive = trimmed == "0";
  std::vector<uint32_t> next;
  for (uint32_t i = 0; i < inactive_.size(); i++) {
    if (i == ost ? inactive : inactive_[i]) next.push_back(i);
  }
  // Stored first: a change that was not stored must not take effect.
  SFS_RETURN_IF_ERROR(meta_->PutSetting(kInactiveKey, layout::FormatOstSet(next)));
  if (inactive_[ost] != inactive) {
    inactive_[ost] = inactive;
    if (inactive) {
      Logger("layout")->info("ost {} deactivated: no new objects are placed on it", ost);
    } else {
      Logger("layout")->info("ost {} activated: new objects may be placed on it again", ost);
    }
  }
  return ApplyFactorsLocked(factors_);
}

Status PlacementControl::AddOst(ost::Service* service) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint32_t index = static_cast<uint32_t>(osts_.size());
  if (service->index() != index) {
    return Status::Error(EINVAL, fmt::format("OST {} added as the filesystem's OST {}",
                                             service->index(), index));
  }
  // Stored and published first (the new OST gets automatic factor 1): a
  // refused change leaves every vector below as it was.
  SFS_RETURN_IF_ERROR(Reconfigure([index](layout::PlacementConfig* c) {
    if (c->ost_count() != index) {
      return Status::Error(EIO, fmt::format("the placement knows {} OSTs, the filesystem {}",
                                            c->ost_count(), index));
    }
    c->weights.push_back(1.0);
    return Status::Ok();
  }));
  const ost::ServiceCounters counters = service->Counters();
  osts_.push_back(service);
  last_errors_.push_back(counters.io_errors);
  last_bytes_.push_back(counters.bytes);
  failed_.push_back(false);
  unresponsive_.push_back(!counters.responsive);
  inactive_.push_back(false);
  factors_.push_back(1.0);
  Status applied = ApplyFactorsLocked(factors_);
  // Automatic weights look at it now rather than at the next interval.
  if (auto_.mode != AutoWeights::Mode::kOff) {
    boost::asio::post(loop_->io, [this] { UpdateAutoWeights(); });
  }
  return applied;
}

bool PlacementControl::Handles(std::string_view name) {
  return OstOfSettingName(name, kActiveSuffix) >= 0 || name == "rtds_weight" || name == "rtds_relative" || name == "rtds_auto" ||
         name == "rtds_auto_factors" || name == "pools" || name == "pool_rules" ||
         (StartsWith(name, kPoolPrefix) && name.size() > kPoolPrefix.size()) ||
         (StartsWith(name, kRulePrefix) && name.size() > kRulePrefix.size());
}

Status PlacementControl::Reconfigure(const layout::RtdsPlacement::Edit& edit) {
  return placement_->Reconfigure(edit, [this](const layout::PlacementConfig& next) {
    return meta_->PutSetting(kConfigKey, layout::EncodePlacementConfig(next));
  });
}

Status PlacementControl::Set(std::string_view name, std::string_view value) {
  std::lock_guard<std::mutex> lock(mu_);
  if (const int64_t ost = OstOfSettingName(name, kActiveSuffix); ost >= 0) {
    return SetActiveLocked(static_cast<uint32_t>(ost), value);
  }
  if (name == "rtds_weight") {
    auto list = layout::ParseWeightList(value);
    if (!list.ok()) return list.status();
    return Reconfigure([&](layout::PlacementConfig* c) { return layout::ApplyWeights(c, *list); });
  }
  if (name == "rtds_relative") {
    auto entries = layout::ParseRelativeWeights(value);
    if (!entries.ok()) return entries.status();
    return Reconfigure(
        [&](layout::PlacementConfig* c) { return layout::ApplyRelativeWeights(c, *entries); });
  }
  if (StartsWith(name, kPoolPrefix)) {
    const std::string pool(name.substr(kPoolPrefix.size()));
    SFS_RETURN_IF_ERROR(layout::CheckPoolName(pool, "pool"));
    auto osts = layout::ParseOstSet(value);
    if (!osts.ok()) return osts.status();
    return Reconfigure([&](layout::PlacementConfig* c) {
      c->pools[pool] = *osts;
      return Status::Ok();
    });
  }
  if (StartsWith(name, kRulePrefix)) {
    const std::string rule_name(name.substr(kRulePrefix.size()));
    SFS_RETURN_IF_ERROR(layout::CheckPoolName(rule_name, "rule"));
    auto rule = layout::ParsePoolRule(value);
    if (!rule.ok()) return rule.status();
    return Reconfigure([&](layout::PlacementConfig* c) {
      c->rules[rule_name] = *rule;
      return Status::Ok();
    });
  }
  if (name == "rtds_auto") {
    auto parsed = ParseAutoWeights(value);
    if (!parsed.ok()) return parsed.status();
    SFS_RETURN_IF_ERROR(meta_->PutSetting(kAutoKey, FormatAutoWeights(*parsed)));
    if (auto_.mode == AutoWeights::Mode::kOff) {
      // Errors and bytes from while it was off are not news.
      for (size_t i = 0; i < osts_.size(); i++) {
        const ost::ServiceCounters counters = osts_[i]->Counters();
        last_errors_[i] = counters.io_errors;
        last_bytes_[i] = counters.bytes;
      }
    }
    auto_ = *parsed;
    loop_->timer.cancel();
    if (auto_.mode == AutoWeights::Mode::kOff) {
      std::fill(failed_.begin(), failed_.end(), false);
      return ApplyFactorsLocked(std::vector<double>(osts_.size(), 1.0));
    }
    boost::asio::post(loop_->io, [this] { UpdateAutoWeights(); });
    return Status::Ok();
  }
  return Status::Error(EINVAL, "setting " + std::string(name) + " is read-only");
}

Status PlacementControl::Remove(std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto config = placement_->config();
  if (StartsWith(name, kPoolPrefix)) {
    const std::string pool(name.substr(kPoolPrefix.size()));
    if (config->pools.count(pool) == 0) return Status::Error(ENODATA, "no pool " + pool);
    return Reconfigure([&](layout::PlacementConfig* c) {
      c->pools.erase(pool);
      return Status::Ok();
    });
  }
  if (StartsWith(name, kRulePrefix)) {
    const std::string rule(name.substr(kRulePrefix.size()));
    if (config->rules.count(rule) == 0) return Status::Error(ENODATA, "no pool rule " + rule);
    return Reconfigure([&](layout::PlacementConfig* c) {
      c->rules.erase(rule);
      return Status::Ok();
    });
  }
  if (name == "rtds_relative") {
    return Reconfigure([](layout::PlacementConfig* c) {
      c->relative.clear();
      return Status::Ok();
    });
  }
  if (name == "rtds_weight") {
    return Reconfigure([](layout::PlacementConfig* c) {
      std::fill(c->weights.begin(), c->weights.end(), 1.0);
      return Status::Ok();
    });
  }
  if (name == "rtds_auto") {
    SFS_RETURN_IF_ERROR(meta_->PutSetting(kAutoKey, "off"));
    auto_ = AutoWeights{};
    loop_->timer.cancel();
    std::fill(failed_.begin(), failed_.end(), false);
    return ApplyFactorsLocked(std::vector<double>(osts_.size(), 1.0));
  }
  return Status::Error(EINVAL, "setting " + std::string(name) + " cannot be removed");
}

Result<std::string> PlacementControl::Get(std::string_view name) const {
  if (const int64_t ost = OstOfSettingName(name, kActiveSuffix); ost >= 0) {
    std::lock_guard<std::mutex> lock(mu_);
    if (static_cast<size_t>(ost) >= osts_.size()) {
      return Status::Error(ENODATA, "no OST " + std::to_string(ost));
    }
    return std::string(inactive_[ost] ? "0" : "1");
  }
  const auto config = placement_->config();
  if (name == "rtds_weight") return layout::FormatWeightList(config->weights);
  if (name == "rtds_relative") return layout::FormatRelativeWeights(*config);
  if (name == "rtds_auto") {
    std::lock_guard<std::mutex> lock(mu_);
    return FormatAutoWeights(auto_);
  }
  if (name == "rtds_auto_factors") return layout::FormatWeightList(placement_->AutoFactors());
  if (name == "pools") {
    std::string out;
    for (const auto& [pool, osts] : config->pools)
      out += pool + " " + layout::FormatOstSet(osts) + "\n";
    return out;
  }
  if (name == "pool_rules") {
    std::vector<std::pair<const std::string*, const layout::PoolRule*>> rules;
    for (const auto& [rule_name, rule] : config->rules) rules.emplace_back(&rule_name, &rule);
    std::stable_sort(rules.begin(), rules.end(),
                     [](const auto& a, const auto& b) { return a.second->rank < b.second->rank; });
    std::string out;
    for (const auto& [rule_name, rule] : rules)
      out += *rule_name + " " + layout::FormatPoolRule(*rule) + "\n";
    return out;
  }
  if (StartsWith(name, kPoolPrefix)) {
    auto it = config->pools.find(std::string(name.substr(kPoolPrefix.size())));
    if (it == config->pools.end()) return Status::Error(ENODATA, "no " + std::string(name));
    return layout::FormatOstSet(it->second);
  }
  if (StartsWith(name, kRulePrefix)) {
    auto it = config->rules.find(std::string(name.substr(kRulePrefix.size())));
    if (it == config->rules.end()) return Status::Error(ENODATA, "no " + std::string(name));
    return layout::FormatPoolRule(it->second);
  }
  return Status::Error(ENODATA, "no setting " + std::string(name));
}

std::vector<OstSample> PlacementControl::SampleLocked() {
  std::vector<OstSample> samples(osts_.size());
  for (size_t i = 0; i < osts_.size(); i++) {
    OstSample& s = samples[i];
    // The background sample (never a call into the OST from here: a hung
    // one would hold this thread).
    const ost::SpaceSample space = osts_[i]->LastSpace();
    const ost::ServiceCounters counters = osts_[i]->Counters();
    s.healthy = space.error.ok() && space.space.has_value() && counters.io_errors == last_errors_[i];
    if (space.space.has_value()) {
      s.avail_bytes = space.space->avail_blocks * space.space->block_size;
      s.total_bytes = space.space->total_blocks * space.space->block_size;
      s.total_files = space.space->total_files;
      s.free_files = space.space->free_files;
    }
    s.busy = counters.queued + counters.active;
    s.bytes = counters.bytes - last_bytes_[i];
    auto log = Logger("layout");
    if (!s.healthy && !failed_[i]) {
      log->warn("ost {}: automatic weight 0 until it recovers ({})", i,
                !space.error.ok()         ? space.error.ToString()
                : !space.space.has_value() ? std::string("no space sample yet")
                                           : fmt::format("{} I/O errors since the last look, "
                                                         "last errno {}",
                                                         counters.io_errors - last_errors_[i],
                                                         counters.last_error));
    } else if (s.healthy && failed_[i]) {
      log->info("ost {}: recovered, automatic weight restored", i);
    }
    failed_[i] = !s.healthy;
    last_errors_[i] = counters.io_errors;
    last_bytes_[i] = counters.bytes;
  }
  return samples;
}

void PlacementControl::UpdateAutoWeights() {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto_.mode == AutoWeights::Mode::kOff) return;
  Status set = ApplyFactorsLocked(AutoFactors(auto_.mode, SampleLocked()));
  if (!set.ok()) Logger("layout")->error("automatic weights not applied: {}", set.ToString());
  ArmTimerLocked();
}

void PlacementControl::SetResponsive(uint32_t ost, bool responsive) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ost >= unresponsive_.size() || unresponsive_[ost] == !responsive) return;
  unresponsive_[ost] = !responsive;
  Status set = ApplyFactorsLocked(factors_);
  if (!set.ok()) Logger("layout")->error("weight of ost {} not changed: {}", ost, set.ToString());
}

Status PlacementControl::ApplyFactorsLocked(std::vector<double> factors) {
  factors_ = factors;
  for (size_t i = 0; i < factors.size(); ++i) {
    if (unresponsive_[i] || inactive_[i]) factors[i] = 0;
  }
  return placement_->SetAutoFactors(factors);
}

void PlacementControl::ArmTimerLocked() {
  loop_->timer.expires_after(std::chrono::seconds(auto_.interval_s));
  loop_->timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) UpdateAutoWeights();
  });
}

}  // namespace sfs::control
