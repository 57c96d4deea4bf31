// stripefs setstripe / getstripe / pool: thin wrappers over the
// user.stripefs.layout attribute of files and directories and the pool
// settings on the mount root (issue 4), in the style of lfs.
#pragma once

#include <string>
#include <vector>

namespace sfs::cli {

// setstripe [-c COUNT] [-S SIZE] [-p POOL] [-o OST,OST...] PATH
// PATH is a directory (its default layout), an empty file, or a new file
// (created empty with that layout).
int SetStripe(const std::vector<std::string>& args);
// getstripe PATH...
int GetStripe(const std::vector<std::string>& args);
// pool list MOUNTPOINT | pool set MOUNTPOINT NAME OSTS | pool remove MOUNTPOINT NAME
int Pool(const std::vector<std::string>& args);

}  // namespace sfs::cli
