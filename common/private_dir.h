// The backing store (metadata directory, OST directories, their contents and
// the log) holds every user's data and names, whatever the permissions of
// the files inside the mount say; only root may read it. See README
// "Who can read the backing store".
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"

namespace sfs {

// Directories and files stripefs creates in the backing store.
inline constexpr mode_t kPrivateDirMode = 0700;
inline constexpr mode_t kPrivateFileMode = 0600;

// Clears the group and other bits of the directory open at `dir_fd` if any
// are set, with one warning line naming it as `what` ("OST directory /x").
// Returns whether it changed anything.
Result<bool> MakePrivate(int dir_fd, const std::string& what);
// The same for the directory at `path`.
Result<bool> MakePrivate(const std::string& path, const std::string& what);

}  // namespace sfs
