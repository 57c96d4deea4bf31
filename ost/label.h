// The label mkfs stamps into every OST directory, so that mount can tell a
// wrong or missing disk from the right one (a clear error, never a silent new
// empty OST).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace sfs::ost {

struct Label {
  std::string fs_uuid;
  uint32_t index = 0;
  std::string ost_uuid;
};

inline constexpr const char* kLabelFile = ".stripefs-ost";

// Writes `dir`/.stripefs-ost atomically (temp file + fsync + rename).
Status WriteLabel(const std::string& dir, const Label& label);
// ENOENT if there is no label, EINVAL if it is malformed.
Result<Label> ReadLabel(const std::string& dir);

// A random RFC 4122 version 4 UUID string.
std::string NewUuid();

}  // namespace sfs::ost
