// The two NRS heads of an OST as NrsControl numbers them
// (0 regular, 1 high-priority), shared by its control and report files
// and the mount's metrics.
#pragma once

#include "nrs/nrs.h"

namespace sfs::control {

inline constexpr nrs::Head kHeadOf[] = {nrs::Head::kRegular, nrs::Head::kHighPriority};
inline constexpr const char* kHeadTitle[] = {"regular_requests", "high_priority_requests"};

}  // namespace sfs::control
