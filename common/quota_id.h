// Who a quota counts for: a user, a group or a project, and what it counts.
// Shared by meta/ (which keeps usage exact, in the same batch as the change
// it counts) and resource/ (which enforces limits on it).
#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace sfs {

enum class QuotaType : uint8_t { kUser = 0, kGroup = 1, kProject = 2 };

struct QuotaId {
  QuotaType type = QuotaType::kUser;
  uint32_t id = 0;
  auto operator<=>(const QuotaId&) const = default;
};

// 'u', 'g' or 'p': the letter of setting names (quota.u.1000) and keys.
inline char QuotaLetter(QuotaType type) {
  switch (type) {
    case QuotaType::kUser:
      return 'u';
    case QuotaType::kGroup:
      return 'g';
    case QuotaType::kProject:
      return 'p';
  }
  return '?';
}

inline const char* QuotaTypeName(QuotaType type) {
  switch (type) {
    case QuotaType::kUser:
      return "user";
    case QuotaType::kGroup:
      return "group";
    case QuotaType::kProject:
      return "project";
  }
  return "?";
}

// "user 1000", for log lines and errors.
inline std::string ToString(const QuotaId& id) {
  return std::string(QuotaTypeName(id.type)) + " " + std::to_string(id.id);
}

// What one id uses, as stored. A grace end is the wall-clock second (Unix
// time) at which usage above the soft limit stops being allowed; 0 while
// usage is not above it (or no soft limit is set).
struct QuotaUsage {
  int64_t bytes = 0;   // sum of the sizes of its regular files
  int64_t inodes = 0;  // its files, directories, symlinks and special files
  int64_t block_grace_end = 0;
  int64_t inode_grace_end = 0;
  bool operator==(const QuotaUsage&) const = default;
};

// How long usage may stay above a soft limit (Lustre's default: a week).
struct QuotaGrace {
  int64_t block_seconds = 7 * 24 * 3600;
  int64_t inode_seconds = 7 * 24 * 3600;
  bool operator==(const QuotaGrace&) const = default;
};

}  // namespace sfs
