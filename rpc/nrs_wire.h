// The NRS's values on the wire (rpc/oss.proto): the settings a mount
// publishes to an OSS's OST (nrs::TargetSettings) and what nrs_stats shows
// of it (nrs::PolicyStatus, nrs::HeadStats), both ways.
#pragma once

#include <vector>

#include "common/status.h"
#include "nrs/scheduler.h"
#include "nrs/target.h"
#include "rpc/oss.pb.h"  // generated (rpc/CMakeLists.txt)

namespace sfs::rpc {

NrsSettings ToWire(const nrs::TargetSettings& settings);
// EINVAL for what no mount sends (a head missing, an enum out of range,
// rules or weights that do not parse), with the reason.
Result<nrs::TargetSettings> FromWire(const NrsSettings& wire);

void ToWire(const std::vector<nrs::PolicyStatus>& policies, const nrs::HeadStats& head,
            NrsStatusReply* reply);
std::vector<nrs::PolicyStatus> PoliciesFromWire(const NrsStatusReply& reply);
nrs::HeadStats HeadStatsFromWire(const NrsStatusReply& reply);

}  // namespace sfs::rpc
