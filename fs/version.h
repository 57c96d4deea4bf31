#pragma once
namespace sfs::fs {
// On-disk format of the metadata store and OST labels; mount refuses others.
inline constexpr int kFormatVersion = 1;
const char* VersionString();
}  // namespace sfs::fs
