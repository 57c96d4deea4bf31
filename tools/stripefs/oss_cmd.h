// `stripefs oss ...` (an object storage server, oss/server.h) and
// `stripefs key new FILE` (a filesystem's shared key).
#pragma once

#include <string>
#include <vector>

namespace sfs::cli {

int Oss(const std::vector<std::string>& args);
int Key(const std::vector<std::string>& args);

}  // namespace sfs::cli
