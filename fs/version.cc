#include "fs/version.h"
namespace sfs::fs {
const char* VersionString() { return "stripefs 0.1 (format 1)"; }
}  // namespace sfs::fs
