// Paths of the backing store as mkfs and `ost add` check them: where a
// directory is (or will be), whether two overlap, and making a directory
// ready to hold an OST or the metadata store. Internal to fs/.
#pragma once

#include <string>

#include "common/status.h"

namespace sfs::fs {

// Where `dir` is or will be, creating nothing: the existing part with its
// symlinks resolved, "." and ".." and trailing slashes gone.
Result<std::string> ResolvePath(const std::string& dir);

// Whether one of two resolved paths is the other or lies inside it.
bool PathsOverlap(const std::string& a, const std::string& b);

// Creates `dir` if missing, makes it private to root (it will hold every
// user's data or names) and returns its canonical path.
Result<std::string> PrepareDir(const std::string& dir);

bool IsEmptyDir(const std::string& dir);

// For the daemon, which must never look up a name inside its own mount
// while it serves a request on it (the kernel holds the mount root's inode
// lock across a setxattr there, and a lookup in the root waits for it):
// walks `dir`, which must be absolute and canonical (no ".", "..", empty
// component or trailing slash), one component at a time from "/" without
// following symlinks and without looking inside a FUSE filesystem,
// creating the missing components (mode 0700, each made durable in its
// parent). Then `dir` is a real directory reached without a symlink, on no
// FUSE filesystem, and only root can change where the path leads: every
// directory on it is root's and written by no one else (a sticky one such
// as /tmp excepted, but not `dir` itself). EINVAL for a path that is not
// canonical, runs through a symlink or a FUSE filesystem (a stripefs
// mount among them); ENOTDIR for a component that is not a directory;
// EPERM for a directory others own or may write; the errno of a failed
// mkdir, fsync, statfs or stat. Directories it created stay on failure.
Status WalkToLocalDir(const std::string& dir);

}  // namespace sfs::fs
