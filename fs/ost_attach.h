// Opening the OSTs at mount, whatever one of them does. Each OST directory
// is checked (its label must name this filesystem and index), made private
// and opened on a thread of its own; the mount waits for them at most
// `patience`. An OST that has not answered by then does not hold the mount
// up: it gets a late backend (ost/late_backend.h) that attaches by itself
// when the directory answers (or fails if its label turns out wrong), with
// a log line either way.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "meta/meta_store.h"
#include "ost/backend.h"
#include "ost/late_backend.h"

namespace sfs::fs {

// What the metadata store says OST `index` is.
struct OstIdentity {
  uint32_t index = 0;
  std::string path;
  std::string fs_uuid;
  std::string ost_uuid;
};

// The OSTs mkfs recorded in `store`, by index. EIO if the list is missing
// or incomplete.
Result<std::vector<OstIdentity>> ReadOstIdentities(meta::MetaStore& store);

struct OpenedOsts {
  // Per OST, in the order asked: its backend, or why it is not this OST
  // (ENOENT: no label; EIO: another filesystem's or OST's label, ...).
  std::vector<Result<std::unique_ptr<ost::Backend>>> backends;
  // The OSTs that had not answered, to abandon at shutdown.
  std::vector<std::shared_ptr<ost::LateAttach>> late;
};

OpenedOsts OpenOsts(const std::vector<OstIdentity>& osts, std::chrono::nanoseconds patience);

}  // namespace sfs::fs
