// The label mkfs stamps into every OST directory, so that mount can tell a
// wrong or missing disk from the right one (a clear error, never a silent new
// empty OST).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sfs::ost {

struct Label {
  std::string fs_uuid;
  uint32_t index = 0;
  std::string ost_uuid;
};

inline constexpr const char* kLabelFile = ".stripefs-ost";
// Where WriteLabel writes before it renames; left by a crash mid-write.
inline constexpr const char* kLabelTempFile = ".stripefs-ost.tmp";

// The label's text: "fs_uuid=...\nindex=N\nost_uuid=...\n".
std::string FormatLabel(const Label& label);
// The label in `text`. EINVAL ("malformed label: why") for a missing,
// repeated or empty key, a bad index, an unterminated last line or more
// than 4 KiB; unknown keys are skipped (a newer mkfs may add some).
Result<Label> ParseLabel(std::string_view text);

// Writes `dir`/.stripefs-ost atomically (temp file + fsync + rename).
Status WriteLabel(const std::string& dir, const Label& label);
// ENOENT if there is no label, EINVAL if it is malformed.
Result<Label> ReadLabel(const std::string& dir);

// Whether mkfs may make `dir` an OST of a new filesystem: empty, or (with
// `force`) holding nothing but a previous stripefs OST (label and objects);
// anything else is EEXIST with the reason, and is left alone.
Status CheckReusable(const std::string& dir, bool force);
// Removes a previous OST's label and objects. REQUIRES: CheckReusable(dir,
// true) passed.
void ClearOstDir(const std::string& dir);

// A random RFC 4122 version 4 UUID string.
std::string NewUuid();

}  // namespace sfs::ost
