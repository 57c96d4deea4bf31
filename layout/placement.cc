#include "layout/placement.h"

#include <algorithm>

#include "layout/layout.h"

namespace sfs::layout {

Result<PlacementChoice> Placement::Choose(uint32_t count, const PlacementContext& context) {
  PlacementChoice choice;
  choice.wanted = std::min(count, kMaxStripeCount);
  auto osts = ChooseOsts(choice.wanted, context);
  if (!osts.ok()) return osts.status();
  choice.osts = std::move(osts).value();
  choice.pool = context.pool;
  return choice;
}

}  // namespace sfs::layout
