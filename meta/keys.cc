#include "meta/keys.h"

#include <sys/stat.h>

namespace sfs::meta {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

// One of the seven S_IFMT file types, and nothing else.
bool IsFileType(uint32_t type) {
  switch (type) {
    case S_IFREG:
    case S_IFDIR:
    case S_IFLNK:
    case S_IFCHR:
    case S_IFBLK:
    case S_IFIFO:
    case S_IFSOCK:
      return true;
    default:
      return false;
  }
}

// Little-endian by shifts rather than memcpy so the on-disk record does not
// depend on the host's byte order.
void PutLE(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLE(std::string_view in, size_t* pos, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= uint64_t{static_cast<unsigned char>(in[*pos + i])} << (8 * i);
  }
  *pos += bytes;
  return v;
}

void PutTime(std::string* out, const Timestamp& t) {
  PutLE(out, static_cast<uint64_t>(t.sec), 8);
  PutLE(out, static_cast<uint64_t>(t.nsec), 4);
}

Timestamp GetTime(std::string_view in, size_t* pos) {
  Timestamp t;
  t.sec = static_cast<int64_t>(GetLE(in, pos, 8));
  t.nsec = static_cast<int64_t>(GetLE(in, pos, 4));
  return t;
}

std::string PrefixedIno(char prefix, uint64_t ino) {
  std::string key(1, prefix);
  key += EncodeU64BE(ino);
  return key;
}

}  // namespace

std::string EncodeU64BE(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

uint64_t DecodeU64BE(std::string_view bytes) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

Result<uint64_t> DecodeCounter(std::string_view value) {
  if (value.size() != 8) return Status::Error(EIO, "meta: bad counter record");
  return DecodeU64BE(value);
}

std::string SettingKey(std::string_view name) {
  std::string key(1, kSettingPrefix);
  key += name;
  return key;
}

std::string InodeKey(uint64_t ino) { return PrefixedIno(kInodePrefix, ino); }
std::string DirentPrefix(uint64_t parent) { return PrefixedIno(kDirentPrefix, parent); }
std::string LayoutKey(uint64_t ino) { return PrefixedIno(kLayoutPrefix, ino); }
std::string XattrPrefix(uint64_t ino) { return PrefixedIno(kXattrPrefix, ino); }
std::string OrphanKey(uint64_t ino) { return PrefixedIno(kOrphanPrefix, ino); }
std::string WritingKey(uint64_t ino) { return PrefixedIno(kWritingPrefix, ino); }

std::string ReplyKey(uint64_t client, uint64_t request) {
  std::string key = PrefixedIno(kReplyPrefix, client);
  key += EncodeU64BE(request);
  return key;
}

std::string EncodeReplyRecord(const ReplyRecord& record) {
  std::string out;
  out.reserve(kReplyRecordSize);
  out.push_back(1);
  PutLE(&out, record.created_ino, 8);
  const Removed removed = record.removed.value_or(Removed{});
  const uint8_t flags = (record.removed ? 1 : 0) | (removed.orphaned ? 2 : 0) |
                        (removed.purged ? 4 : 0);
  out.push_back(static_cast<char>(flags));
  PutLE(&out, removed.ino, 8);
  PutLE(&out, removed.mode, 4);
  PutLE(&out, removed.nlink_left, 4);
  return out;
}

Result<ReplyRecord> DecodeReplyRecord(std::string_view value) {
  if (value.size() != kReplyRecordSize || value[0] != 1) {
    return Status::Error(EIO, "meta: reply record of an unknown format");
  }
  size_t pos = 1;
  ReplyRecord record;
  record.created_ino = GetLE(value, &pos, 8);
  const auto flags = static_cast<uint8_t>(value[pos++]);
  Removed removed;
  removed.ino = GetLE(value, &pos, 8);
  removed.mode = static_cast<uint32_t>(GetLE(value, &pos, 4));
  removed.nlink_left = static_cast<uint32_t>(GetLE(value, &pos, 4));
  removed.orphaned = (flags & 2) != 0;
  removed.purged = (flags & 4) != 0;
  if (flags & 1) record.removed = removed;
  return record;
}

std::string DirentKey(uint64_t parent, std::string_view name) {
  std::string key = DirentPrefix(parent);
  key += name;
  return key;
}

std::string XattrKey(uint64_t ino, std::string_view name) {
  std::string key = XattrPrefix(ino);
  key += name;
  return key;
}

std::string PrefixSuccessor(std::string_view prefix) {
  std::string s(prefix);
  while (!s.empty()) {
    auto last = static_cast<unsigned char>(s.back());
    if (last != 0xff) {
      s.back() = static_cast<char>(last + 1);
      return s;
    }
    s.pop_back();
  }
  return s;
}

std::string_view KeySuffix(std::string_view key, size_t prefix_len) {
  return key.substr(prefix_len);
}

Result<uint64_t> DecodeInoKey(std::string_view key) {
  if (key.size() != 9) return Status::Error(EIO, "meta: bad inode-number key");
  return DecodeU64BE(key.substr(1));
}

std::string EncodeInode(const Inode& inode) {
  std::string out;
  out.reserve(kInodeRecordFixedSize + inode.symlink.size());
  out.push_back(static_cast<char>(kInodeRecordVersion));
  PutLE(&out, inode.mode, 4);
  PutLE(&out, inode.uid, 4);
  PutLE(&out, inode.gid, 4);
  PutLE(&out, inode.nlink, 4);
  PutLE(&out, inode.size, 8);
  PutLE(&out, inode.rdev, 8);
  PutLE(&out, inode.parent, 8);
  PutTime(&out, inode.atime);
  PutTime(&out, inode.mtime);
  PutTime(&out, inode.ctime);
  PutLE(&out, inode.allocated, 8);
  PutLE(&out, inode.projid, 4);
  out.push_back(static_cast<char>(inode.may_have_xattrs ? kInodeFlagMayHaveXattrs : 0));
  out += inode.symlink;
  return out;
}

Result<Inode> DecodeInode(uint64_t ino, std::string_view value) {
  if (value.empty()) return Status::Error(EIO, "meta: empty inode record for " + std::to_string(ino));
  const uint8_t version = static_cast<uint8_t>(value[0]);
  if (version < 2 || version > kInodeRecordVersion) {
    return Status::Error(EIO, "meta: unknown inode record version for " + std::to_string(ino));
  }
  const size_t fixed_size = version == 2   ? kInodeRecordV2FixedSize
                            : version == 3 ? kInodeRecordV3FixedSize
                                           : kInodeRecordFixedSize;
  if (value.size() < fixed_size) {
    return Status::Error(EIO, "meta: short inode record for " + std::to_string(ino));
  }
  Inode inode;
  inode.ino = ino;
  size_t pos = 1;
  inode.mode = static_cast<uint32_t>(GetLE(value, &pos, 4));
  // Every node is made with a type; the kernel fails a lookup that returns
  // none (or an unknown one) with EIO anyway, so say here which record it is.
  if (!IsFileType(inode.mode & S_IFMT)) {
    return Status::Error(EIO, "meta: inode record for " + std::to_string(ino) +
                                  " has no valid file type (mode " + std::to_string(inode.mode) +
                                  ")");
  }
  inode.uid = static_cast<uint32_t>(GetLE(value, &pos, 4));
  inode.gid = static_cast<uint32_t>(GetLE(value, &pos, 4));
  inode.nlink = static_cast<uint32_t>(GetLE(value, &pos, 4));
  inode.size = GetLE(value, &pos, 8);
  inode.rdev = GetLE(value, &pos, 8);
  inode.parent = GetLE(value, &pos, 8);
  inode.atime = GetTime(value, &pos);
  inode.mtime = GetTime(value, &pos);
  inode.ctime = GetTime(value, &pos);
  inode.allocated = GetLE(value, &pos, 8);
  if (version >= 3) inode.projid = static_cast<uint32_t>(GetLE(value, &pos, 4));
  if (version >= 4) {
    const auto flags = static_cast<uint8_t>(GetLE(value, &pos, 1));
    if ((flags & ~kInodeFlagMayHaveXattrs) != 0) {
      return Status::Error(EIO, "meta: inode record for " + std::to_string(ino) +
                                    " has unknown flags " + std::to_string(flags));
    }
    inode.may_have_xattrs = (flags & kInodeFlagMayHaveXattrs) != 0;
  }
  // EncodeInode never writes such a time (the kernel refuses them at
  // utimensat), and stat would hand it on to every caller.
  for (const Timestamp* t : {&inode.atime, &inode.mtime, &inode.ctime}) {
    if (t->nsec >= kNanosPerSecond) {
      return Status::Error(EIO, "meta: inode record for " + std::to_string(ino) +
                                    " has a time with nanoseconds of a second or more");
    }
  }
  inode.symlink.assign(value.substr(pos));
  return inode;
}

std::string UsageKey(const QuotaId& id) {
  std::string key(1, kUsagePrefix);
  key.push_back(static_cast<char>(id.type));
  for (int i = 3; i >= 0; --i) key.push_back(static_cast<char>((id.id >> (8 * i)) & 0xff));
  return key;
}

Result<QuotaId> DecodeUsageKey(std::string_view key) {
  if (key.size() != 6 || key[0] != kUsagePrefix ||
      static_cast<uint8_t>(key[1]) > static_cast<uint8_t>(QuotaType::kProject)) {
    return Status::Error(EIO, "meta: bad quota usage key");
  }
  QuotaId id;
  id.type = static_cast<QuotaType>(key[1]);
  for (int i = 2; i < 6; ++i) id.id = (id.id << 8) | static_cast<unsigned char>(key[i]);
  return id;
}

std::string EncodeUsage(const QuotaUsage& usage) {
  std::string out;
  out.reserve(kUsageValueSize);
  out.push_back(1);
  for (int64_t v : {usage.bytes, usage.inodes, usage.block_grace_end, usage.inode_grace_end}) {
    PutLE(&out, static_cast<uint64_t>(v), 8);
  }
  return out;
}

Result<QuotaUsage> DecodeUsage(std::string_view value) {
  if (value.size() != kUsageValueSize || value[0] != 1) {
    return Status::Error(EIO, "meta: bad quota usage record");
  }
  size_t pos = 1;
  QuotaUsage usage;
  for (int64_t* v : {&usage.bytes, &usage.inodes, &usage.block_grace_end, &usage.inode_grace_end}) {
    *v = static_cast<int64_t>(GetLE(value, &pos, 8));
  }
  return usage;
}

std::string EncodeUsageDelta(const UsageDelta& delta) {
  std::string out;
  out.reserve(kUsageDeltaSize);
  out.push_back(2);
  for (int64_t v :
       {delta.bytes, delta.inodes, static_cast<int64_t>(delta.soft.bytes),
        static_cast<int64_t>(delta.soft.inodes), delta.block_grace_end, delta.inode_grace_end}) {
    PutLE(&out, static_cast<uint64_t>(v), 8);
  }
  return out;
}

Result<UsageDelta> DecodeUsageDelta(std::string_view value) {
  if (value.size() != kUsageDeltaSize || value[0] != 2) {
    return Status::Error(EIO, "meta: bad quota usage operand");
  }
  size_t pos = 1;
  UsageDelta delta;
  delta.bytes = static_cast<int64_t>(GetLE(value, &pos, 8));
  delta.inodes = static_cast<int64_t>(GetLE(value, &pos, 8));
  delta.soft.bytes = GetLE(value, &pos, 8);
  delta.soft.inodes = GetLE(value, &pos, 8);
  delta.block_grace_end = static_cast<int64_t>(GetLE(value, &pos, 8));
  delta.inode_grace_end = static_cast<int64_t>(GetLE(value, &pos, 8));
  return delta;
}

std::string EncodeDirent(uint64_t ino, uint32_t mode) {
  std::string out = EncodeU64BE(ino);
  uint32_t type = mode & S_IFMT;
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((type >> (8 * i)) & 0xff));
  return out;
}

Result<DirentValue> DecodeDirent(std::string_view value) {
  if (value.size() != kDirentValueSize) return Status::Error(EIO, "meta: bad dirent record");
  DirentValue d;
  d.ino = DecodeU64BE(value);
  for (int i = 8; i < 12; ++i) d.type = (d.type << 8) | static_cast<unsigned char>(value[i]);
  // EncodeDirent writes only the S_IFMT bits of a file type; anything else
  // would reach readdir's d_type and the kernel as garbage.
  if (!IsFileType(d.type)) {
    return Status::Error(EIO, "meta: dirent record with a bad file type " + std::to_string(d.type));
  }
  return d;
}

}  // namespace sfs::meta
