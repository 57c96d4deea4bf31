// The placement interface: which OSTs hold the stripes of a new file. Issue 2
// ships a uniform random chooser; weighted RTDS placement with pools replaces
// it behind this same interface.
//
// Thread safety: ChooseOsts may be called from many threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace sfs::layout {

// Who is creating the file, for placement rules.
struct PlacementContext {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string jobid;
  std::string pool;
};

class Placement {
 public:
  Placement() = default;
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;
  virtual ~Placement() = default;
  virtual const char* Name() const = 0;

  // `count` distinct OST indexes, or fewer when fewer OSTs exist (never two
  // stripes on one OST). ENOSPC when no OST is usable.
  virtual Result<std::vector<uint32_t>> ChooseOsts(uint32_t count,
                                                   const PlacementContext& context) = 0;
};

// Uniform random choice of distinct OSTs among `osts`.
std::unique_ptr<Placement> NewRandomPlacement(std::vector<uint32_t> osts, uint64_t seed);

}  // namespace sfs::layout
