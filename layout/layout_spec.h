// A layout asked for through user.stripefs.layout (issue 4; lfs setstripe,
// CephFS layout xattrs): a directory's default for what is created in it,
// or the layout of one empty file.
//
//   "stripe_count=4 stripe_size=1M pool=fast"
//   "stripe_count=-1 osts=0,2,3"
//
// Keys, in any order, each at most once, separated by blanks:
//   stripe_count  1..kMaxStripeCount, -1 = every usable OST of the pool,
//                 0 = the filesystem default
//   stripe_size   a multiple of 64 KiB with an optional K/M/G suffix,
//                 0 = the filesystem default
//   pool          a pool name; "" (pool=) = none
//   osts          explicit OSTs in stripe order, "0,2,3" (no ranges)
// A key left out takes the filesystem default. With osts, stripe_count must
// be the number of OSTs listed, -1 (all of them) or left out (as in Lustre).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sfs::layout {

struct LayoutSpec {
  int64_t stripe_count = 0;  // 0 = default, -1 = all
  uint64_t stripe_size = 0;  // 0 = default
  std::string pool;          // "" = none
  std::vector<uint32_t> osts;

  bool empty() const {
    return stripe_count == 0 && stripe_size == 0 && pool.empty() && osts.empty();
  }
  bool operator==(const LayoutSpec&) const = default;
};

// EINVAL with a message naming the bad word. Checks what it can see: pool
// names and OST indexes against the filesystem are the caller's to check.
Result<LayoutSpec> ParseLayoutSpec(std::string_view text);
// Canonical text ParseLayoutSpec accepts back; only the keys that are set
// ("" for an empty spec).
std::string FormatLayoutSpec(const LayoutSpec& spec);

}  // namespace sfs::layout
