// The RTDS placement configuration (issue 4): admin weights, relative
// weights, pools and pool rules, with their text forms (the xattr values)
// and the whole-configuration check that runs before any change is
// published. A PlacementConfig is a plain value: edit a copy, validate it,
// persist it, then hand it to RtdsPlacement::Reconfigure.
//
// Text forms (seed 004 syntax; Format* gives the canonical text Parse*
// accepts back, numbers in shortest round-trip form):
//   weights            "0=1,1=2,2=0,3=1"     OST index = weight in [0, 1e6]
//   relative weights   "0:1=0.5,2:2=1"       i:j = RW(i,j) in [0, inf]
//   pool               "osts=0,2-4"          OST indexes and ranges
// Items are separated by commas and/or blanks. Malformed text is EINVAL
// with a message naming the bad item. Parsers check only what they can see;
// whether an OST index exists is checked against a configuration (Apply*,
// ValidatePlacementConfig).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "layout/pool_rule.h"

namespace sfs::layout {

// Parsers refuse OST indexes at or above this (a sanity bound, not the
// filesystem's OST count).
inline constexpr uint32_t kMaxOsts = 65536;

struct PlacementConfig {
  // Admin weight of each OST (index = OST); its size is the OST count.
  // The weight a pick uses is weight * the OST's automatic factor.
  std::vector<double> weights;
  // RW(i,j) where it differs from the default (0 if i == j, else 1).
  std::map<std::pair<uint32_t, uint32_t>, double> relative;
  // Pool name -> its OSTs, sorted and distinct. An OST may be in several.
  std::map<std::string, std::vector<uint32_t>> pools;
  // Rule name -> rule.
  std::map<std::string, PoolRule> rules;

  uint32_t ost_count() const { return static_cast<uint32_t>(weights.size()); }
  // RW(i,j), defaults included.
  double RelativeWeight(uint32_t i, uint32_t j) const;
  bool operator==(const PlacementConfig&) const = default;
};

// Every OST at weight 1, default relative weights, no pools, no rules.
PlacementConfig DefaultPlacementConfig(uint32_t ost_count);

// EINVAL: a weight or RW out of range or for an OST that does not exist, a
// bad pool or rule name, an empty pool, a pool naming an unknown OST, a rule
// naming an unknown pool. ENOSPC: every OST has weight 0, or a pool has no
// OST of positive weight. The message says which item is at fault.
Status ValidatePlacementConfig(const PlacementConfig& config);

using WeightList = std::vector<std::pair<uint32_t, double>>;
struct RelativeWeightEntry {
  uint32_t from = 0;  // i: the OST just chosen
  uint32_t to = 0;    // j: the OST whose weight is multiplied
  double factor = 1;
  bool operator==(const RelativeWeightEntry&) const = default;
};

// "0=1,1=2": each index at most once.
Result<WeightList> ParseWeightList(std::string_view text);
// Every OST, in index order: "0=1,1=2,2=0,3=1".
std::string FormatWeightList(const std::vector<double>& weights);
// Sets the listed OSTs' weights and leaves the others (seed 004's
// rtds_weight). EINVAL, config unchanged, for an OST that does not exist.
Status ApplyWeights(PlacementConfig* config, const WeightList& list);

// "0:1=0.5,2:2=1": each pair at most once; "inf" allowed.
Result<std::vector<RelativeWeightEntry>> ParseRelativeWeights(std::string_view text);
// The non-default pairs, sorted: "0:1=0.5,1:0=0.5". "" when all default.
std::string FormatRelativeWeights(const PlacementConfig& config);
// Sets the listed pairs and leaves the others; a pair set to its default is
// dropped. EINVAL, config unchanged, for an OST that does not exist.
Status ApplyRelativeWeights(PlacementConfig* config,
                            const std::vector<RelativeWeightEntry>& entries);

// "osts=0,2-4" -> {0,2,3,4}, sorted and distinct; at least one OST.
Result<std::vector<uint32_t>> ParseOstSet(std::string_view text);
// Sorted distinct indexes -> "osts=0,2-4" (runs of 2 or more as ranges).
std::string FormatOstSet(const std::vector<uint32_t>& osts);

// Persistence of a whole configuration as text, one item a line:
//   weights 0=1,1=2
//   relative 0:1=0.5
//   pool fast osts=0,1
//   rule r1 rank=10 uid={1000,1001} pool=fast
// Decode takes the filesystem's OST count: OSTs added since the encoding get
// weight 1. EIO, with the line, for text Encode could not have written or
// that names an OST beyond `ost_count`; the result is validated.
std::string EncodePlacementConfig(const PlacementConfig& config);
Result<PlacementConfig> DecodePlacementConfig(std::string_view text, uint32_t ost_count);

}  // namespace sfs::layout
