#include "control/quota_control.h"

#include <charconv>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "common/log.h"
#include "common/text.h"

namespace sfs::control {
namespace {

constexpr std::string_view kQuotaPrefix = "quota.";
constexpr std::string_view kGraceName = "quota_grace";
constexpr std::string_view kListName = "quota";

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string SettingName(const QuotaId& id) {
  return std::string(kQuotaPrefix) + QuotaLetter(id.type) + "." + std::to_string(id.id);
}

std::string GraceLeft(uint64_t soft, int64_t used, int64_t grace_end, int64_t now_sec) {
  if (soft == 0 || used <= static_cast<int64_t>(soft) || grace_end == 0) return "-";
  if (now_sec >= grace_end) return "expired";
  return std::to_string(grace_end - now_sec);
}

}  // namespace

std::optional<QuotaId> QuotaIdOfSetting(std::string_view name) {
  if (name.size() < kQuotaPrefix.size() + 3 || name.substr(0, kQuotaPrefix.size()) != kQuotaPrefix ||
      name[kQuotaPrefix.size() + 1] != '.') {
    return std::nullopt;
  }
  QuotaId id;
  switch (name[kQuotaPrefix.size()]) {
    case 'u': id.type = QuotaType::kUser; break;
    case 'g': id.type = QuotaType::kGroup; break;
    case 'p': id.type = QuotaType::kProject; break;
    default: return std::nullopt;
  }
  const std::string_view digits = name.substr(kQuotaPrefix.size() + 2);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id.id);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits[0] == '+') {
    return std::nullopt;
  }
  return id;
}

LocalQuotaHold::~LocalQuotaHold() { control_->Settle(reservation_, used()); }

QuotaControl::QuotaControl(meta::MetaStore* meta, size_t osts, QuotaTiming timing)
    : meta_(meta), enforcer_(timing.tunables) {
  enforcer_.SetBlockOwners(osts);
  expirer_ = std::thread([this, every = timing.expire_every] { ExpireLoop(every); });
}

QuotaControl::~QuotaControl() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  expirer_.join();
  meta_->SetUsageObserver(nullptr);
}

void QuotaControl::ExpireLoop(std::chrono::nanoseconds every) {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_cv_.wait_for(lock, every, [this] { return stopping_; })) {
    enforcer_.Expire(resource::Clock::now());
  }
}

Status QuotaControl::Load() {
  std::lock_guard<std::mutex> settings_lock(settings_mu_);
  auto settings = meta_->AllSettings();
  if (!settings.ok()) return settings.status();
  const int64_t now_sec = NowSeconds();
  for (const auto& [name, value] : *settings) {
    if (name == kGraceName) {
      auto grace = resource::ParseQuotaGrace(value, grace_);
      if (!grace.ok()) return Status::Error(EIO, "stored " + name + ": " + grace.status().message());
      grace_ = *grace;
      continue;
    }
    auto id = QuotaIdOfSetting(name);
    if (!id) continue;
    auto change = resource::ParseQuotaLimits(value);
    auto limits = change.ok() ? resource::ApplyQuotaChange({}, *change)
                              : Result<resource::QuotaLimits>(change.status());
    if (!limits.ok()) return Status::Error(EIO, "stored " + name + ": " + limits.status().message());
    std::lock_guard<std::mutex> lock(mu_);
    enforcer_.SetLimits(*id, *limits, now_sec);
    if (limits->any()) any_limits_.store(true);
  }
  // Every usage record the store has, then every change as it lands.
  meta_->SetUsageObserver([this](const QuotaId& id, const QuotaUsage& usage) {
    std::lock_guard<std::mutex> lock(mu_);
    enforcer_.Observe(id, usage, NowSeconds());
  });
  return PublishSoftLimits();
}

Status QuotaControl::PublishSoftLimits() {
  std::map<QuotaId, meta::SoftLimit> soft;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const QuotaId& id : enforcer_.LimitedIds()) {
      const resource::QuotaLimits limits = enforcer_.Report(id).limits;
      if (limits.block_soft || limits.inode_soft) {
        soft[id] = meta::SoftLimit{limits.block_soft, limits.inode_soft};
      }
    }
  }
  return meta_->SetSoftLimits(soft, grace_);
}

bool QuotaControl::Handles(std::string_view name) {
  return name == kGraceName || name == kListName || QuotaIdOfSetting(name).has_value();
}

Status QuotaControl::Set(std::string_view name, std::string_view value) {
  std::lock_guard<std::mutex> settings_lock(settings_mu_);
  if (name == kListName) return Status::Error(EINVAL, "setting quota is read-only");
  if (name == kGraceName) {
    auto grace = resource::ParseQuotaGrace(value, grace_);
    if (!grace.ok()) return grace.status();
    SFS_RETURN_IF_ERROR(meta_->PutSetting(std::string(kGraceName), resource::FormatQuotaGrace(*grace)));
    grace_ = *grace;
    return PublishSoftLimits();
  }
  auto id = QuotaIdOfSetting(name);
  if (!id) return Status::Error(EINVAL, "unknown setting " + std::string(name));
  auto change = resource::ParseQuotaLimits(value);
  if (!change.ok()) return change.status();
  resource::QuotaLimits current;
  {
    std::lock_guard<std::mutex> lock(mu_);
    current = enforcer_.Report(*id).limits;
  }
  auto next = resource::ApplyQuotaChange(current, *change);
  if (!next.ok()) return next.status();
  // Persist first: a limit that was not stored must not take effect.
  const std::string setting = SettingName(*id);
  Status stored = next->any() ? meta_->PutSetting(setting, resource::FormatQuotaLimits(*next))
                              : meta_->PutSettings({}, {setting});
  SFS_RETURN_IF_ERROR(stored);
  {
    std::lock_guard<std::mutex> lock(mu_);
    enforcer_.SetLimits(*id, *next, NowSeconds());
    any_limits_.store(!enforcer_.LimitedIds().empty());
  }
  Logger("fs")->info("quota of {}: {}", ToString(*id), resource::FormatQuotaLimits(*next));
  return PublishSoftLimits();
}

Status QuotaControl::Remove(std::string_view name) {
  if (name == kGraceName) return Set(name, "1w");
  if (!QuotaIdOfSetting(name)) return Status::Error(EINVAL, "setting " + std::string(name) + " cannot be removed");
  return Set(name, "bsoft=0 bhard=0 isoft=0 ihard=0");
}

std::string QuotaControl::Line(const QuotaId& id, const resource::QuotaReport& report,
                               int64_t now_sec) {
  const auto& l = report.limits;
  const auto& u = report.usage;
  return fmt::format("{} bused={} iused={} bgrace={} igrace={}", resource::FormatQuotaLimits(l),
                     u.bytes, u.inodes, GraceLeft(l.block_soft, u.bytes, u.block_grace_end, now_sec),
                     GraceLeft(l.inode_soft, u.inodes, u.inode_grace_end, now_sec));
}

Result<std::string> QuotaControl::Get(std::string_view name) {
  const int64_t now_sec = NowSeconds();
  if (name == kGraceName) {
    std::lock_guard<std::mutex> settings_lock(settings_mu_);
    return resource::FormatQuotaGrace(grace_);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (name == kListName) {
    std::string out;
    for (const QuotaId& id : enforcer_.LimitedIds()) {
      out += fmt::format("{} {} {}\n", QuotaLetter(id.type), id.id, Line(id, enforcer_.Report(id), now_sec));
    }
    return out;
  }
  auto id = QuotaIdOfSetting(name);
  if (!id) return Status::Error(ENODATA, "no setting " + std::string(name));
  // Every id has a quota line, limits or not: usage is always counted.
  return Line(*id, enforcer_.Report(*id), now_sec);
}

void QuotaControl::SetOsts(size_t count) {
  std::lock_guard<std::mutex> lock(mu_);
  enforcer_.SetBlockOwners(count);
}

Result<std::shared_ptr<QuotaHold>> QuotaControl::ReserveBytes(const QuotaOwner& owner,
                                                              uint32_t caller, size_t ost,
                                                              uint64_t bytes) {
  return Reserve(owner, caller, /*blocks=*/true, ost, bytes);
}

Result<std::shared_ptr<QuotaHold>> QuotaControl::ReserveInodes(const QuotaOwner& owner,
                                                               uint32_t caller, uint64_t inodes) {
  return Reserve(owner, caller, /*blocks=*/false, 0, inodes);
}

Result<std::shared_ptr<QuotaHold>> QuotaControl::Reserve(const QuotaOwner& owner, uint32_t caller,
                                                         bool blocks, size_t ost, uint64_t amount) {
  if (amount == 0 || !any_limits_.load(std::memory_order_relaxed)) {
    return std::shared_ptr<QuotaHold>();
  }
  // The total order of docs/design.md: user, then group, then project.
  std::vector<QuotaId> ids;
  if (caller != 0) {
    ids.push_back({QuotaType::kUser, owner.uid});
    ids.push_back({QuotaType::kGroup, owner.gid});
  }
  if (owner.projid != 0) ids.push_back({QuotaType::kProject, owner.projid});
  return ReserveFor(ids, blocks, ost, amount);
}

Result<QuotaControl::MoveHolds> QuotaControl::ReserveMove(const QuotaOwner& from,
                                                          const QuotaOwner& to, uint32_t caller,
                                                          uint64_t bytes) {
  MoveHolds holds;
  if (caller == 0 || !any_limits_.load(std::memory_order_relaxed)) return holds;
  std::vector<QuotaId> ids;
  if (to.uid != from.uid) ids.push_back({QuotaType::kUser, to.uid});
  if (to.gid != from.gid) ids.push_back({QuotaType::kGroup, to.gid});
  if (ids.empty()) return holds;
  auto byte_hold = ReserveFor(ids, /*blocks=*/true, 0, bytes);
  if (!byte_hold.ok()) return byte_hold.status();
  auto inode_hold = ReserveFor(ids, /*blocks=*/false, 0, 1);
  if (!inode_hold.ok()) return inode_hold.status();
  holds.bytes = std::move(byte_hold).value();
  holds.inodes = std::move(inode_hold).value();
  return holds;
}

Result<std::shared_ptr<QuotaHold>> QuotaControl::ReserveFor(const std::vector<QuotaId>& ids,
                                                            bool blocks, size_t ost,
                                                            uint64_t amount) {
  if (ids.empty() || amount == 0) return std::shared_ptr<QuotaHold>();
  resource::QuotaEnforcer::Reservation reservation;
  std::optional<QuotaId> full;
  resource::QuotaReport report;
  const int64_t now_sec = NowSeconds();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = resource::Clock::now();
    full = blocks ? enforcer_.ReserveBlocks(ids, ost, amount, now, now_sec, &reservation)
                  : enforcer_.ReserveInodes(ids, amount, now, now_sec, &reservation);
    if (full) report = enforcer_.Report(*full);
  }
  if (full) {
    const auto& l = report.limits;
    return Status::Error(
        EDQUOT, blocks ? fmt::format("{} is over its block quota: {} bytes used, {} more asked; "
                                     "soft {} hard {} (grace {})",
                                     ToString(*full), report.usage.bytes, amount, l.block_soft,
                                     l.block_hard,
                                     GraceLeft(l.block_soft, report.usage.bytes,
                                               report.usage.block_grace_end, now_sec))
                       : fmt::format("{} is over its inode quota: {} inodes used; soft {} hard {} "
                                     "(grace {})",
                                     ToString(*full), report.usage.inodes, l.inode_soft,
                                     l.inode_hard,
                                     GraceLeft(l.inode_soft, report.usage.inodes,
                                               report.usage.inode_grace_end, now_sec)));
  }
  if (reservation.parts.empty()) return std::shared_ptr<QuotaHold>();
  return std::shared_ptr<QuotaHold>(std::make_shared<LocalQuotaHold>(this, std::move(reservation)));
}

void QuotaControl::Settle(const resource::QuotaEnforcer::Reservation& reservation, uint64_t used) {
  std::lock_guard<std::mutex> lock(mu_);
  enforcer_.Settle(reservation, used, resource::Clock::now());
}

resource::CountedStats QuotaControl::BlockStats(const QuotaId& id, size_t ost) {
  std::lock_guard<std::mutex> lock(mu_);
  return enforcer_.BlockStats(id, ost);
}

}  // namespace sfs::control
