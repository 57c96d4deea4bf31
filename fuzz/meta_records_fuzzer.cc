// The metadata store's record decoders (meta/keys.h): inodes, directory
// entries, counters, inode-number keys, quota usage records and keys. The
// first byte chooses the decoder. An accepted record must encode back to
// the very same bytes and hold only what the encoder can write: a file
// type the kernel accepts and timestamps with nanoseconds below one second.
#include <sys/stat.h>

#include <iterator>
#include <string>

#include "fuzz/fuzz_check.h"
#include "meta/keys.h"

namespace sfs::fuzz {
namespace {

bool ValidType(uint32_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
    case S_IFDIR:
    case S_IFLNK:
    case S_IFCHR:
    case S_IFBLK:
    case S_IFIFO:
    case S_IFSOCK:
      return true;
  }
  return false;
}

bool ValidTime(const meta::Timestamp& t) { return t.nsec >= 0 && t.nsec < 1'000'000'000; }

void Inode(std::string_view value) {
  auto inode = meta::DecodeInode(42, value);
  if (!inode.ok()) {
    Check(inode.err() == EIO, "a bad inode record that is not EIO", value);
    return;
  }
  Check(inode->ino == 42, "the inode number does not come from the key");
  const std::string encoded = meta::EncodeInode(*inode);
  // A version 2 record (from before project ids) encodes as version 4:
  // the same fields with a project of 0 after the allocation; a version 2
  // or 3 record (from before the flags byte) gains one saying it may have
  // extended attributes.
  std::string expected(value);
  if (!value.empty() && (value[0] == 2 || value[0] == 3)) {
    if (value[0] == 2) expected.insert(meta::kInodeRecordV2FixedSize, 4, '\0');
    expected.insert(meta::kInodeRecordV3FixedSize, 1,
                    static_cast<char>(meta::kInodeFlagMayHaveXattrs));
    expected[0] = static_cast<char>(meta::kInodeRecordVersion);
  }
  Check(encoded == expected, "EncodeInode(DecodeInode(record)) differs", expected, encoded);
  Check(ValidType(inode->mode), "an inode record without a valid file type", value);
  Check(ValidTime(inode->atime) && ValidTime(inode->mtime) && ValidTime(inode->ctime),
        "an inode record with nanoseconds outside [0, 1e9)", value);
}

void Dirent(std::string_view value) {
  auto dirent = meta::DecodeDirent(value);
  if (!dirent.ok()) {
    Check(dirent.err() == EIO, "a bad dirent record that is not EIO", value);
    return;
  }
  const std::string encoded = meta::EncodeDirent(dirent->ino, dirent->type);
  Check(encoded == value, "EncodeDirent(DecodeDirent(record)) differs", value, encoded);
  Check(ValidType(dirent->type), "a dirent record without a valid file type", value);
}

void Counter(std::string_view value) {
  auto counter = meta::DecodeCounter(value);
  if (!counter.ok()) {
    Check(counter.err() == EIO && value.size() != 8, "a good counter refused", value);
    return;
  }
  Check(meta::EncodeU64BE(*counter) == value, "a counter changed through its bytes", value);
}

void InoKey(std::string_view key) {
  auto ino = meta::DecodeInoKey(key);
  if (!ino.ok()) return;
  const std::string encoded = meta::InodeKey(*ino);
  Check(encoded.substr(1) == key.substr(1), "an inode key changed through its number", key,
        encoded);
}

void Usage(std::string_view value) {
  auto usage = meta::DecodeUsage(value);
  if (!usage.ok()) {
    Check(usage.err() == EIO, "a bad usage record that is not EIO", value);
    return;
  }
  const std::string encoded = meta::EncodeUsage(*usage);
  Check(encoded == value, "EncodeUsage(DecodeUsage(record)) differs", value, encoded);
}

void UsageKey(std::string_view key) {
  auto id = meta::DecodeUsageKey(key);
  if (!id.ok()) return;
  const std::string encoded = meta::UsageKey(*id);
  Check(encoded == key, "a usage key changed through its id", key, encoded);
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs::fuzz;
  DispatchByFirstByte(data, size, {Inode, Dirent, Counter, InoKey, Usage, UsageKey});
  return 0;
}
