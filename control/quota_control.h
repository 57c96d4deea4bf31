// Quotas on the mount (issue 11): the settings on the mount root, and the
// reservations the data and namespace paths take.
//   quota.u.<uid>, quota.g.<gid>, quota.p.<projid>
//       set: "bsoft=10G bhard=12G isoft=100k ihard=120k" (any subset: the
//       others keep their value; 0 removes a limit); removing the setting
//       removes every limit of the id.
//       read: "bsoft=N bhard=N isoft=N ihard=N bused=N iused=N bgrace=G
//       igrace=G", G being "-" (not over the soft limit), the seconds of
//       grace left, or "expired" (the soft limit now holds as a hard one).
//   quota_grace   "1w", or "bgrace=1w igrace=3d" (default one week each)
//   quota         read-only: the line above for every id with a limit,
//                 "u 1000 bsoft=...", one per line
// Limits are stored as settings (quota.u.1000 = its limits), then given
// to the enforcer (resource/quota.h) and the store's soft-limit table
// (grace ends, meta/meta_store.h). Usage comes from the store's observer.
//
// Who is charged: a change counts for the file's owner, group and
// project; the caller decides who is exempt: root (uid 0) from user and
// group limits, as on other filesystems; no one from project limits (a
// project quota caps a directory tree, root's writes included).
//
// Leases: a thread of its own gives OSTs' unused chunks whose lease ran
// out back to the master every `expire_every` (QuotaEnforcer::Expire), so
// a chunk does not outlive its lease until its id's next reservation.
//
// Thread safety: every method may be called from any thread. settings_mu_
// serializes changes (persist, then publish); mu_ guards the enforcer. Lock
// order: settings_mu_, then the store's locks (its usage observer, called
// under the usage book's mutex, takes mu_), then mu_; nothing calls the
// store while holding mu_.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <string_view>

#include "common/quota_id.h"
#include "common/status.h"
#include "meta/meta_store.h"
#include "resource/quota.h"

namespace sfs::control {

class QuotaControl;

// A reservation held by one change until it is stored (or given up); the
// part it used (Use) is settled when the hold is destroyed, by whoever
// granted it (this mount's QuotaControl, or a client's grant from the MDS:
// client/quota_grants.h).
class QuotaHold {
 public:
  QuotaHold() = default;
  virtual ~QuotaHold() = default;
  QuotaHold(const QuotaHold&) = delete;
  QuotaHold& operator=(const QuotaHold&) = delete;
  // The change was stored and used this much of the reservation.
  void Use(uint64_t amount) { used_ = amount; }

 protected:
  uint64_t used() const { return used_; }

 private:
  uint64_t used_ = 0;
};

// A hold of this mount's own enforcer.
class LocalQuotaHold final : public QuotaHold {
 public:
  LocalQuotaHold(QuotaControl* control, resource::QuotaEnforcer::Reservation reservation)
      : control_(control), reservation_(std::move(reservation)) {}
  ~LocalQuotaHold() override;

 private:
  QuotaControl* const control_;
  const resource::QuotaEnforcer::Reservation reservation_;
};

// Whose quota a change counts for.
struct QuotaOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t projid = 0;  // 0: none
};

struct QuotaTiming {
  resource::QuotaTunables tunables;  // chunks and their leases (30 s)
  // How often leases are checked: a chunk goes back at most this late.
  std::chrono::nanoseconds expire_every = std::chrono::seconds(5);
};

// Where the data and namespace paths reserve quota: the mount's own
// QuotaControl (the one-process mount, the MDS), or a client's grants
// from the MDS (client/quota_grants.h). Every method from any thread.
class QuotaGate {
 public:
  virtual ~QuotaGate() = default;
  // Reserves room for `bytes` more of `owner`'s usage through OST `ost`'s
  // chunk, or `inodes` more through the metadata service's, for a change
  // made by `caller`. Null when no id involved has a limit. EDQUOT naming
  // the id that is full.
  virtual Result<std::shared_ptr<QuotaHold>> ReserveBytes(const QuotaOwner& owner, uint32_t caller,
                                                          size_t ost, uint64_t bytes) = 0;
  virtual Result<std::shared_ptr<QuotaHold>> ReserveInodes(const QuotaOwner& owner,
                                                           uint32_t caller, uint64_t inodes) = 0;
  // A chown or chgrp by `caller` moves `bytes` and one inode from `from`'s
  // user and group to `to`'s: room for them where those differ (the
  // project stays). Either hold is null where none was needed.
  struct MoveHolds {
    std::shared_ptr<QuotaHold> bytes;
    std::shared_ptr<QuotaHold> inodes;
  };
  virtual Result<MoveHolds> ReserveMove(const QuotaOwner& from, const QuotaOwner& to,
                                        uint32_t caller, uint64_t bytes) = 0;
};

class QuotaControl final : public QuotaGate {
 public:
  // Borrows the store (it outlives this object; the observer is removed
  // by the destructor). Loads the stored limits and grace.
  explicit QuotaControl(meta::MetaStore* meta, size_t osts, QuotaTiming timing = {});
  ~QuotaControl();
  Status Load();

  static bool Handles(std::string_view name);
  Status Set(std::string_view name, std::string_view value);
  Status Remove(std::string_view name);
  Result<std::string> Get(std::string_view name);
  // The filesystem gained OSTs: `count` block sub-owners.
  void SetOsts(size_t count);

  // QuotaGate. No lock is taken while no limit is set at all.
  Result<std::shared_ptr<QuotaHold>> ReserveBytes(const QuotaOwner& owner, uint32_t caller,
                                                  size_t ost, uint64_t bytes) override;
  Result<std::shared_ptr<QuotaHold>> ReserveInodes(const QuotaOwner& owner, uint32_t caller,
                                                   uint64_t inodes) override;
  Result<MoveHolds> ReserveMove(const QuotaOwner& from, const QuotaOwner& to, uint32_t caller,
                                uint64_t bytes) override;

  // For tests and metrics: one OST's share of an id's block quota.
  resource::CountedStats BlockStats(const QuotaId& id, size_t ost);

 private:
  friend class LocalQuotaHold;
  void Settle(const resource::QuotaEnforcer::Reservation& reservation, uint64_t used);
  Result<std::shared_ptr<QuotaHold>> Reserve(const QuotaOwner& owner, uint32_t caller, bool blocks,
                                             size_t ost, uint64_t amount);
  Result<std::shared_ptr<QuotaHold>> ReserveFor(const std::vector<QuotaId>& ids, bool blocks,
                                                size_t ost, uint64_t amount);
  // Hands the store every soft limit and the grace periods.
  Status PublishSoftLimits();
  std::string Line(const QuotaId& id, const resource::QuotaReport& report, int64_t now_sec);
  void ExpireLoop(std::chrono::nanoseconds every);

  meta::MetaStore* const meta_;
  std::mutex settings_mu_;
  QuotaGrace grace_;  // GUARDED_BY(settings_mu_)
  std::mutex mu_;
  resource::QuotaEnforcer enforcer_;  // GUARDED_BY(mu_)
  // Some id has a limit: without one the data path takes no lock.
  std::atomic<bool> any_limits_{false};
  bool stopping_ = false;            // GUARDED_BY(mu_)
  std::condition_variable stop_cv_;  // with mu_: stopping_ became true
  std::thread expirer_;              // runs ExpireLoop; last member, started last
};

// "quota.u.1000" -> {user, 1000}; nullopt for anything else.
std::optional<QuotaId> QuotaIdOfSetting(std::string_view name);

}  // namespace sfs::control
