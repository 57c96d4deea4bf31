// Quota limits as users write them (settings quota.u.N, quota.g.N,
// quota.p.N and quota_grace; `stripefs setquota`), parsed and printed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/quota_id.h"
#include "common/status.h"

namespace sfs::resource {

// Byte and inode limits of one id; 0 = none.
struct QuotaLimits {
  uint64_t block_soft = 0;
  uint64_t block_hard = 0;
  uint64_t inode_soft = 0;
  uint64_t inode_hard = 0;
  bool any() const { return block_soft || block_hard || inode_soft || inode_hard; }
  bool operator==(const QuotaLimits&) const = default;
};

// A change as written: "bsoft=10G bhard=12G isoft=100k ihard=120k", any
// subset, separated by blanks or commas. A limit not named keeps its
// value (as `lfs setquota`); 0 removes one. Sizes take the binary
// suffixes K, M, G, T, P (either case; 10G = 10 x 2^30 bytes), inode
// counts the decimal ones (100k = 100,000 inodes).
struct QuotaLimitsChange {
  std::optional<uint64_t> block_soft, block_hard, inode_soft, inode_hard;
};
// EINVAL for an empty text, an unknown or repeated name, a malformed or
// too large number.
Result<QuotaLimitsChange> ParseQuotaLimits(std::string_view text);
// `current` with `change` applied; EINVAL if a soft limit ends up above
// its hard one (both set).
Result<QuotaLimits> ApplyQuotaChange(const QuotaLimits& current, const QuotaLimitsChange& change);
// "bsoft=10737418240 bhard=0 isoft=0 ihard=0": parses back to itself.
std::string FormatQuotaLimits(const QuotaLimits& limits);

// quota_grace: "1w" (both), or "bgrace=1w igrace=3d" (either or both;
// one not named keeps its value). A duration is whole seconds with an
// optional unit s, m, h, d or w; at most 10 years. EINVAL otherwise.
Result<QuotaGrace> ParseQuotaGrace(std::string_view text, const QuotaGrace& current);
// "bgrace=604800 igrace=604800".
std::string FormatQuotaGrace(const QuotaGrace& grace);

}  // namespace sfs::resource
