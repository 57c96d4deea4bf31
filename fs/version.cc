#include "fs/version.h"
namespace sfs::fs {
const char* VersionString() { return "stripefs 0.2 (format 2)"; }
}  // namespace sfs::fs
