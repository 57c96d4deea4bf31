// user.stripefs.ost_status (read-only): one line per OST, what an admin
// looks at when an OST misbehaves:
//   ost2 state=unresponsive queued=3 in_service=1 oldest_ms=31250 errors=7
//        io_errors=7 read_only=no space_age_ms=31800 space=stale epoch=1234 eh=evicted
//        path=/disk2/ost
// state is ok or unresponsive (a call in service longer than ost_timeout);
// oldest_ms the age of the oldest call in service (0: none); space_age_ms
// the age of the background space sample behind df, "none" if there is
// none yet, and "space=stale" when it is older than ost_timeout; epoch the
// epoch its scheduler runs (0: not joined) and eh where it stands with the
// epoch handler: member, asked (waits for the others), evicted (missed
// nrs_eh_timeout or unresponsive; rejoins when it answers) or absent.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ost/service.h"

namespace sfs::fs {

std::string FormatOstStatus(const std::vector<ost::Service*>& osts,
                            std::chrono::nanoseconds ost_timeout, nrs::TimePoint now);

}  // namespace sfs::fs
