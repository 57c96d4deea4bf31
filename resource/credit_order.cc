#include <cassert>

#include "resource/credit.h"

namespace sfs::resource {

bool CreditOrder::Take(Kind kind, uint64_t id, uint64_t start) {
  const auto next = std::make_tuple(kind, id, start);
  const bool in_order = !any_ || last_ < next;
  assert(in_order && "credits taken out of their total order (resource/credit.h)");
  any_ = true;
  last_ = next;
  return in_order;
}

}  // namespace sfs::resource
