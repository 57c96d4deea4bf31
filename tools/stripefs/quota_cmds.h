// stripefs setquota and stripefs quota (issue 11): Lustre's lfs setquota
// and lfs quota over the quota.u|g|p.ID and quota_grace settings
// (control/quota_control.h).
#pragma once

#include <string>
#include <vector>

namespace sfs::cli {

// setquota -u|-g|-p ID [-b BSOFT] [-B BHARD] [-i ISOFT] [-I IHARD] PATH
// setquota -t [-b BLOCK_GRACE] [-i INODE_GRACE] PATH
int SetQuota(const std::vector<std::string>& args);
// quota [-u|-g|-p ID] [--json] PATH: usage, limits and grace left; without
// an id, the caller's user and group.
int Quota(const std::vector<std::string>& args);

}  // namespace sfs::cli
