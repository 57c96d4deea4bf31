// `stripefs mds ...`: the metadata service (mds/server.h).
#pragma once

#include <string>
#include <vector>

namespace sfs::cli {

int Mds(const std::vector<std::string>& args);

}  // namespace sfs::cli
