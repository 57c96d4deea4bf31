#pragma once
namespace sfs::fs {
// On-disk format of the metadata store and OST labels; mount refuses others.
// 2: inode records carry the allocated blocks, layouts per-object state
// (created mark, allocation). Format 1 filesystems are not upgraded.
inline constexpr int kFormatVersion = 2;
const char* VersionString();
}  // namespace sfs::fs
