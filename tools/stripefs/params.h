// stripefs set_param / get_param: the run-time settings as user.stripefs.*
// extended attributes of the mount root, in the style of lctl.
#pragma once

#include <string>
#include <vector>

namespace sfs::cli {

// set_param MOUNTPOINT name=value [name=value ...]; stops at the first
// failure. Returns the process exit code.
int SetParam(const std::vector<std::string>& args);
// get_param MOUNTPOINT name [name ...]
int GetParam(const std::vector<std::string>& args);
// ost deactivate|activate MOUNTPOINT N: the setting ost<N>.active.
int Ost(const std::vector<std::string>& args);

}  // namespace sfs::cli
