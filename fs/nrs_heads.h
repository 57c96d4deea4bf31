// Internal to fs/: the two NRS heads of an OST as NrsControl numbers them
// (0 regular, 1 high-priority), shared by its control and report files.
#pragma once

#include "nrs/nrs.h"

namespace sfs::fs {

inline constexpr nrs::Head kHeadOf[] = {nrs::Head::kRegular, nrs::Head::kHighPriority};
inline constexpr const char* kHeadTitle[] = {"regular_requests", "high_priority_requests"};

}  // namespace sfs::fs
