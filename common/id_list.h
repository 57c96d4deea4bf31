// A list of numeric ids (uid, gid, projid) as rules write them, shared by
// every rule grammar that tests one (nrs/tbf_expression.h, whose grammar
// nrs/crrn_weights.h reuses, and layout/pool_rule.h), so they accept and
// print the same forms:
//
//   500            one id
//   1000-1999      every id from 1000 to 1999, both included (Lustre's TBF
//                  expression: uid={500 1000-1999})
//
// An id or range is a decimal number in [0, 2^32-1]; a range's first id is
// not above its last. A range is kept as one entry, so uid={0-4294967295}
// costs as little as uid={0}. The grammar around the list (braces, the
// separators between entries) is the caller's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace sfs {

struct IdRange {
  uint32_t first = 0;
  uint32_t last = 0;  // first <= last
  bool operator==(const IdRange&) const = default;
  auto operator<=>(const IdRange&) const = default;
};

class IdList {
 public:
  // Adds one entry ("500" or "1000-1999"); EINVAL naming `field` ("uid")
  // otherwise, the list unchanged.
  Status Add(std::string_view field, std::string_view entry);

  bool Contains(uint32_t id) const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<IdRange>& ranges() const { return ranges_; }

  // Sorts the entries and drops exact duplicates (a rule's canonical form
  // may then list them in order); overlapping ranges are left as written.
  void Sort();

  // The entries in order, joined by `separator`, each as Add accepts it
  // ("7", "1000-1999"): the canonical text.
  std::string ToString(std::string_view separator = " ") const;

  bool operator==(const IdList&) const = default;

 private:
  std::vector<IdRange> ranges_;
};

}  // namespace sfs
