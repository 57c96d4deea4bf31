// stripefs fsck: checks an unmounted filesystem's metadata store against
// itself and against the objects its OSTs hold, and with `repair` fixes what
// it can. What it checks, in order (docs/design.md, "fsck"):
//   1. records: inode records and directory entries that do not decode,
//      entries in missing directories or naming missing inodes (dangling),
//      entries whose file type disagrees with the inode, a directory with
//      more than one name, layouts, xattrs and orphan marks of missing
//      inodes;
//   2. reachability: an inode with no name that is not an unlinked file
//      waiting for its objects to be freed goes to /lost+found as "#<ino>";
//      unlinked files still holding objects (a crash, or unlink of an open
//      file, before the mount that frees them) have their objects freed;
//   3. link counts (names of a file; 2 + subdirectories of a directory) and
//      a directory's ".." record;
//   4. objects: layouts that do not decode or name an OST that does not
//      exist, an object two files share, objects a file recorded as written
//      that are missing (their data is lost: reads fail with EIO, as on a
//      mount), objects that exist but the file never recorded (a crash just
//      after the first write), objects longer than the file needs (a crash
//      between the object write and the size update: the bytes past the end
//      would show through a later truncate-up), objects no file names
//      (orphans: freed), and entries in an OST's objects/ tree that are not
//      objects (reported, left alone);
//   5. identifier high-water marks at or below an id in use (raised);
//   6. quota usage: each user's, group's and project's stored usage against
//      a count of every inode as the repairs above left them (stored
//      anew; an id whose usage changes loses a running grace period, which
//      restarts at the next mount); not while an inode record is unreadable,
//      since it counts for someone. Opening the
// filesystem (its lock, store and labelled OSTs) is fs/'s part: fs::RunFsck.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"
#include "ost/backend.h"

namespace sfs::fsck {

enum class Outcome {
  kFound,        // reported; repair was not asked
  kRepaired,     // fixed
  kUnrepairable  // repair was asked and is impossible or failed; says why
};

struct Finding {
  std::string text;  // one line: what is wrong and where
  Outcome outcome = Outcome::kFound;
  std::string repair;  // what was done, or why nothing could be
};

// "fsck: <text>: <repair>" (or ": would repair" / ": cannot repair: ...").
std::string FormatFinding(const Finding& finding);

struct Report {
  std::vector<Finding> findings;
  uint64_t inodes = 0;
  uint64_t entries = 0;
  uint64_t objects = 0;  // on the OSTs that could be listed
  size_t found() const { return findings.size(); }
  size_t left() const;  // not repaired (kFound or kUnrepairable)
  // As e2fsck: 0 clean, 1 everything found was repaired, 4 problems left.
  int ExitCode() const;
};

struct Options {
  bool repair = false;
};

// The OSTs by index: a backend, or null for an OST that could not be opened
// (its objects are then neither listed nor checked, and nothing is freed on
// the strength of its absence).
using OstBackends = std::vector<ost::Backend*>;

// Runs every check on `store` and `osts`; each finding is also passed to
// `on_finding` as it is made. Errors only when the store cannot be read.
// REQUIRES: nothing else uses the store or the OSTs meanwhile.
Result<Report> Check(meta::MetaStore& store, const OstBackends& osts, const Options& options,
                     const std::function<void(const Finding&)>& on_finding);

}  // namespace sfs::fsck
