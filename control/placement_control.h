// Run-time control of stripe placement (issue 4): per-OST RTDS weights,
// relative weights, pools, pool rules and automatic weights, as the
// user.stripefs.* settings on the mount root:
//   rtds_weight        "0=1,1=2,2=0,3=1"; only the listed OSTs change
//   rtds_relative      "0:1=0.5,2:2=1"; removing it restores the defaults
//   pool.<name>        "osts=0,2-4"; removing it deletes the pool
//   pool_rule.<name>   "rank=10 uid={1000,1001} pool=fast"; removable
//   rtds_auto          "off" | "space [interval=S]" | "space+load [interval=S]"
//   pools, pool_rules  read-only lists, one item per line
//   ost<N>.active      1 (default) or 0: a deactivated OST gets no new
//                      objects (placement factor 0); its files stay readable
//                      and writable. Stored as the set inactive_osts.
// Every change is validated as a whole configuration (layout/
// placement_config.h), stored in the metadata store, then published
// atomically to the placement; a refused change changes nothing.
//
// Automatic weights run on an Asio timer on this object's own thread: each
// interval they set every OST's automatic factor (which multiplies the admin
// weight) from its free space and, with "+load", its scheduler's queue depth
// and recent bandwidth; an OST whose directory is gone or that failed I/O
// with EIO since the last look (not ENOSPC, EDQUOT or EFBIG, which speak of
// space or one file) gets factor 0 until it recovers, with a log line. Free
// space comes from each OST's background sample (ost::Service::LastSpace),
// never from a call that could wait on a hung disk.
//
// Thread safety: every method may be called from any thread. mu_ serializes
// changes and guards the automatic-weight state; lock order: mu_, then the
// placement's own locks, then meta and ost::Service locks.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>


#include "common/status.h"
#include "control/auto_weights.h"
#include "layout/rtds_placement.h"
#include "meta/meta_store.h"
#include "ost/service.h"

namespace sfs::control {

class PlacementControl {
 public:
  // Borrows meta and the services; they outlive this object.
  PlacementControl(meta::MetaStore* meta, std::vector<ost::Service*> osts);
  // Stops the automatic-weight thread.
  ~PlacementControl();

  // Reads the stored configuration (or the default: every OST weight 1) and
  // starts automatic weights if they are on. EIO if the stored
  // configuration is unreadable.
  Status Load();

  layout::RtdsPlacement& placement() { return *placement_; }

  static bool Handles(std::string_view name);
  Status Set(std::string_view name, std::string_view value);
  Status Remove(std::string_view name);
  Result<std::string> Get(std::string_view name) const;

  // One round of automatic weights now (the timer calls it; so can tests).
  void UpdateAutoWeights();
  // An OST that stopped answering gets factor 0 whatever rtds_auto says,
  // and its factor back when it answers again (ost::Service health).
  void SetResponsive(uint32_t ost, bool responsive);
  // False once an admin deactivated the OST (ost<N>.active=0).
  bool Active(uint32_t ost) const;
  // An OST added to the mounted filesystem (its index the next one, its
  // identity stored already): admin weight 1, automatic factor 1 until
  // the next automatic round, in no pool, default relative weights. The
  // placement configuration is stored, then published: new files may use
  // it from here on. Borrowed like the others.
  Status AddOst(ost::Service* service);

 private:
  Status Reconfigure(const layout::RtdsPlacement::Edit& edit);
  void ArmTimerLocked();
  // REQUIRES: mu_ held. Reads and advances the per-OST counters.
  std::vector<OstSample> SampleLocked();
  // REQUIRES: mu_ held. ost<N>.active=0|1: store, then apply.
  Status SetActiveLocked(uint32_t ost, std::string_view value);
  // REQUIRES: mu_ held. Sets the automatic factors, 0 for unresponsive and
  // inactive OSTs.
  Status ApplyFactorsLocked(std::vector<double> factors);

  meta::MetaStore* const meta_;
  std::unique_ptr<layout::RtdsPlacement> placement_;

  mutable std::mutex mu_;              // serializes changes; guards the fields below
  std::vector<ost::Service*> osts_;    // GUARDED_BY(mu_): grows with AddOst
  AutoWeights auto_;                   // GUARDED_BY(mu_)
  std::vector<uint64_t> last_errors_;  // GUARDED_BY(mu_): per OST, at the last sample
  std::vector<uint64_t> last_bytes_;   // GUARDED_BY(mu_)
  std::vector<bool> failed_;           // GUARDED_BY(mu_): logged as failed
  std::vector<bool> unresponsive_;     // GUARDED_BY(mu_): SetResponsive(false)
  std::vector<bool> inactive_;         // GUARDED_BY(mu_): ost<N>.active=0, stored
  std::vector<double> factors_;        // GUARDED_BY(mu_): before unresponsive OSTs are zeroed

  // The Asio loop of the automatic weights and its timer (GUARDED_BY(mu_)),
  // in placement_control.cc: what includes this header compiles no Asio.
  struct Loop;
  std::unique_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace sfs::control
