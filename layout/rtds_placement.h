// RTDS placement (seed 004, issue 4): stripes go to OSTs at random with
// probability proportional to their weights, within the pool that the
// context's precedence (placement.h) selects, one RTDS tree per pool.
//
// A pick's weight for OST i is admin_weight[i] * auto_factor[i] (clamped to
// kMaxWeight); 0 means never chosen. For a file of several stripes the
// weights are privately copied and, after each pick i, every W[j] is
// multiplied by RW(i,j) (default 0 for j == i, 1 otherwise), so with the
// defaults a file never has two stripes on one OST, and gets fewer stripes
// than asked when its pool runs out of OSTs of positive weight (the choice
// says so). A weight of 0 is never revived by a relative weight.
//
// Configuration changes (Reconfigure) validate a whole new PlacementConfig,
// let the caller persist it, and only then publish it together with the
// rebuilt trees; automatic factors change one OST in O(pools * log n).
//
// Thread safety: every method may be called from any thread. Choose holds
// the tree lock for the whole file (a few hundred ns), so all stripes of a
// file see one configuration and one set of weights; writers are serialised
// among themselves and hold the tree lock only to swap or patch. Lock
// order: writer lock, then tree lock. Choose never blocks on I/O; the commit
// callback of Reconfigure runs under the writer lock only, so creates go on
// while it persists.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "layout/placement.h"
#include "layout/placement_config.h"

namespace sfs::layout {

// Automatic factors are finite and in [0, kMaxAutoFactor]; 1 by default.
inline constexpr double kMaxAutoFactor = 1e6;

class RtdsPlacement : public Placement {
 public:
  // The configuration in force; immutable, never null.
  virtual std::shared_ptr<const PlacementConfig> config() const = 0;

  // Edits a copy of the configuration in force with `edit`, validates it
  // (ValidatePlacementConfig), calls `commit` (persistence; may be empty)
  // with it, then publishes it atomically: a create sees the old
  // configuration or the new one. If edit, validation or commit fails,
  // nothing changed and its status is returned. Concurrent calls are applied
  // one after the other, each to the result of the last. Changing the OST
  // count (adding OSTs) is allowed; new OSTs get automatic factor 1.
  using Edit = std::function<Status(PlacementConfig*)>;
  using Commit = std::function<Status(const PlacementConfig&)>;
  virtual Status Reconfigure(const Edit& edit, const Commit& commit) = 0;

  // The automatic factor of one OST, or all at once (one atomic change).
  // EINVAL for an unknown OST, a wrong vector size or a factor out of range.
  // A pool whose OSTs all reach effective weight 0 this way makes its
  // creates fail with ENOSPC until a factor rises again.
  virtual Status SetAutoFactor(uint32_t ost, double factor) = 0;
  virtual Status SetAutoFactors(const std::vector<double>& factors) = 0;
  virtual std::vector<double> AutoFactors() const = 0;

  // admin weight * automatic factor, clamped to kMaxWeight, per OST.
  virtual std::vector<double> EffectiveWeights() const = 0;
};

// EINVAL/ENOSPC as ValidatePlacementConfig. `seed` fixes the random stream:
// single-threaded callers get a reproducible sequence of choices.
Result<std::unique_ptr<RtdsPlacement>> NewRtdsPlacement(PlacementConfig config, uint64_t seed);

}  // namespace sfs::layout
