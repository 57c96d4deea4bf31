// The placement interface: which OSTs hold the stripes of a new file.
// RTDS placement with pools, match rules and relative weights
// (layout/rtds_placement.h) implements it.
//
// Thread safety: ChooseOsts and Choose may be called from many threads at
// once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace sfs::layout {

// Ask for as many stripes as there are usable OSTs (stripe_count -1). Every
// implementation caps the count at kMaxStripeCount (layout.h).
inline constexpr uint32_t kAllStripes = UINT32_MAX;

// Who is creating the file and what layout they inherit, for placement rules.
// The caller fills the precedence inputs; the pool is resolved, highest
// first, as (issue 4):
//   1. `osts`, then `pool`: a layout set on the file itself (setstripe on
//      the empty file, or an explicit request);
//   2. the first pool rule, in rank order, that matches uid/gid/jobid/projid;
//   3. `fallback_pool`: the parent directory's (inherited) layout;
//   4. all OSTs (the filesystem default).
struct PlacementContext {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string jobid;
  std::string pool;     // explicit pool; an unknown name is EINVAL
  uint32_t projid = 0;  // inherited user.stripefs.projid; 0 = none
  std::string fallback_pool;  // an unknown name falls back to all OSTs
  // Explicit OSTs in stripe order (setstripe -o): used as given, skipping
  // OSTs of weight 0; every one must belong to `pool` if that is set.
  std::vector<uint32_t> osts;
};

// What Choose decided and why, so the caller can record and log it.
struct PlacementChoice {
  std::vector<uint32_t> osts;          // stripe i -> osts[i]
  std::string pool;                    // pool drawn from; "" = all OSTs
  std::string rule;                    // the rule that named `pool`, if one did
  uint32_t wanted = 0;                 // stripes asked for, after capping
  bool fallback_pool_missing = false;  // fallback_pool named no pool
  // Fewer stripes than asked: the pool ran out of usable OSTs (a caller
  // asking for kAllStripes expects that and need not log it).
  bool short_count() const { return osts.size() < wanted; }
};

class Placement {
 public:
  Placement() = default;
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;
  virtual ~Placement() = default;
  virtual const char* Name() const = 0;

  // `count` stripes (kAllStripes: every usable OST of the pool), with the
  // pool and rule behind the choice; fewer when the pool has fewer usable
  // OSTs (never two stripes on one OST unless a relative weight allows it).
  // ENOSPC when no OST is usable.
  virtual Result<PlacementChoice> Choose(uint32_t count, const PlacementContext& context) = 0;

  // Choose, the OSTs only.
  Result<std::vector<uint32_t>> ChooseOsts(uint32_t count, const PlacementContext& context) {
    auto choice = Choose(count, context);
    if (!choice.ok()) return choice.status();
    return std::move(choice->osts);
  }
};

}  // namespace sfs::layout
