// Internal to meta/: the RocksDB key schema and the value encodings.
//
// One column family (default). Every key starts with a one-letter prefix so
// each kind of record is a contiguous key range; integers inside keys are
// 8-byte big-endian so that keys sort numerically and a prefix scan over
// D<parent> or X<ino> visits one directory or one inode only.
//
//   key                      value
//   S<name>                  setting value (string; mkfs records, tunables)
//   C/next_ino               inode-number high-water mark (8 BE)
//   C/next_obj               object-id high-water mark (8 BE)
//   C/sync                   empty; written by every sync (meta/db_write.h)
//   C/usage                  "1": the Q records below count every inode
//                            (absent in a store from before quotas: Open
//                            counts them once, meta/usage_book.h)
//   I<ino:8>                 inode record (below)
//   D<parent:8><name>        dirent: child ino (8 BE) + type bits S_IFMT (4 BE)
//   L<ino:8>                 layout blob (opaque, encoded by layout/)
//   X<ino:8><name>           xattr value (full name, e.g. "user.foo")
//   O<ino:8>                 orphan mark (empty): nlink 0, objects not yet freed
//   W<ino:8>                 writing mark (empty): a write or preallocation may
//                            have changed objects past what the inode and
//                            layout record (MetaStore::MarkWriting)
//   R<client:8><request:8>   reply record of a client's call (mds/ reply
//                            reconstruction): u8 version=1 | u64 created
//                            ino | u8 flags (1 removed, 2 orphaned, 4
//                            purged) | u64 removed ino | u32 mode | u32
//                            nlink left (LE); written in the batch of the
//                            operation it answers, dropped once the client
//                            has its reply
//   Q<type:1><id:4>          quota usage of a user (0), group (1) or project
//                            (2): u8 version=1 | i64 bytes | i64 inodes |
//                            i64 block grace end | i64 inode grace end (LE);
//                            changed by RocksDB merges (below), set by puts
//
// Usage records are changed by merge operands, one per id per batch, which
// the store's merge operator (meta/usage_merge.h) adds to the record in
// the order they landed; so batches that charge one id need not land in
// any order the store decided, and no lock is held across a write for it.
// An operand: u8 version=2 | i64 bytes delta | i64 inodes delta |
// u64 soft bytes | u64 soft inodes | i64 block grace end | i64 inode grace
// end (LE): the counters move by the deltas, then each grace end is
// cleared if the counter is not above its soft limit (0: none), or set to
// the operand's if it is above and the record has none (the rule of
// meta_store.h "SoftLimit", with the limits and clock of the batch). A
// merge's result is a version-1 record, so a store written before merges
// opens unchanged; a store with operands needs the operator to be read
// (older stripefs binaries cannot open it). A record that counts nothing
// may stay stored with all zeros (a merge cannot delete it); it reads as
// no record. A record or operand that does not decode makes the result
// undecodable (the open counts usage again, as for any damaged record).
//
// A high-water mark is the first identifier never handed out: every id below
// it may be in use, none at or above it is. It is raised (synced) before any
// id of a new range is used, so after a crash allocation restarts above it.
//
// Inode record, version 3, fixed fields little-endian (the inode number is
// the key, not part of the value):
//   u8 version=3 | u32 mode | u32 uid | u32 gid | u32 nlink | u64 size |
//   u64 rdev | u64 parent | {i64 sec, u32 nsec} atime, mtime, ctime |
//   u64 allocated | u32 projid | symlink target bytes (the rest)
// Version 2 (before project ids) is the same without projid and still
// decodes, with project 0; every write stores version 3.
// A record that is short or carries another version decodes as EIO, so a
// newer format is never misread; so does one without a valid file type in
// its mode or with a time whose nsec is not below 10^9, which the encoder is
// never given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/quota_id.h"
#include "common/status.h"
#include "meta/meta_store.h"

namespace sfs::meta {

inline constexpr char kSettingPrefix = 'S';
inline constexpr char kInodePrefix = 'I';
inline constexpr char kDirentPrefix = 'D';
inline constexpr char kLayoutPrefix = 'L';
inline constexpr char kXattrPrefix = 'X';
inline constexpr char kOrphanPrefix = 'O';
inline constexpr char kWritingPrefix = 'W';
inline constexpr char kUsagePrefix = 'Q';
inline constexpr char kReplyPrefix = 'R';
inline constexpr std::string_view kNextInoKey = "C/next_ino";
inline constexpr std::string_view kNextObjKey = "C/next_obj";
// Written (empty) by every sync: a synced write makes the WAL durable.
inline constexpr std::string_view kSyncKey = "C/sync";
inline constexpr std::string_view kUsageCountedKey = "C/usage";

// Version 2: before project ids; 3: before the flags byte; 4: today's.
inline constexpr uint8_t kInodeRecordVersion = 4;
inline constexpr size_t kInodeRecordV2FixedSize = 1 + 4 * 4 + 8 * 3 + 3 * 12 + 8;
inline constexpr size_t kInodeRecordV3FixedSize = kInodeRecordV2FixedSize + 4;
inline constexpr size_t kInodeRecordFixedSize = kInodeRecordV3FixedSize + 1;
// Bits of a version 4 record's flags byte; any other bit set is damage.
inline constexpr uint8_t kInodeFlagMayHaveXattrs = 1;
inline constexpr size_t kUsageValueSize = 1 + 4 * 8;
inline constexpr size_t kDirentValueSize = 12;

// Big-endian integers for keys and counters.
std::string EncodeU64BE(uint64_t v);
// REQUIRES: bytes.size() >= 8; reads the first 8.
uint64_t DecodeU64BE(std::string_view bytes);
// EIO unless the value is exactly 8 bytes.
Result<uint64_t> DecodeCounter(std::string_view value);

std::string SettingKey(std::string_view name);
std::string InodeKey(uint64_t ino);
std::string DirentKey(uint64_t parent, std::string_view name);
std::string DirentPrefix(uint64_t parent);
std::string LayoutKey(uint64_t ino);
std::string XattrKey(uint64_t ino, std::string_view name);
std::string XattrPrefix(uint64_t ino);
std::string OrphanKey(uint64_t ino);
std::string WritingKey(uint64_t ino);
std::string UsageKey(const QuotaId& id);
std::string ReplyKey(uint64_t client, uint64_t request);
inline constexpr size_t kReplyRecordSize = 1 + 8 + 1 + 8 + 4 + 4;
std::string EncodeReplyRecord(const ReplyRecord& record);
// EIO unless version 1 of exactly kReplyRecordSize bytes.
Result<ReplyRecord> DecodeReplyRecord(std::string_view value);
// EIO unless the key is Q, a known type and 4 bytes of id.
Result<QuotaId> DecodeUsageKey(std::string_view key);
std::string EncodeUsage(const QuotaUsage& usage);
// EIO unless version 1 of exactly kUsageValueSize bytes.
Result<QuotaUsage> DecodeUsage(std::string_view value);

// One batch's change to one id's usage record, as its merge operand
// carries it (schema above).
struct UsageDelta {
  int64_t bytes = 0;
  int64_t inodes = 0;
  SoftLimit soft;               // the id's soft limits when the batch was built
  int64_t block_grace_end = 0;  // the grace end to start if bytes go above soft.bytes
  int64_t inode_grace_end = 0;
  bool operator==(const UsageDelta&) const = default;
};
inline constexpr size_t kUsageDeltaSize = 1 + 6 * 8;
std::string EncodeUsageDelta(const UsageDelta& delta);
// EIO unless version 2 of exactly kUsageDeltaSize bytes.
Result<UsageDelta> DecodeUsageDelta(std::string_view value);

// The smallest key greater than every key starting with `prefix`, or "" when
// there is none (prefix all 0xff): the exclusive upper bound of a scan.
std::string PrefixSuccessor(std::string_view prefix);

// The part of `key` after a prefix of `prefix_len` bytes (the name in D/X/S
// keys). REQUIRES: key.size() >= prefix_len.
std::string_view KeySuffix(std::string_view key, size_t prefix_len);
// The ino in an I/L/O key. EIO if the key is not prefix + 8 bytes.
Result<uint64_t> DecodeInoKey(std::string_view key);

std::string EncodeInode(const Inode& inode);
// `ino` comes from the key. EIO on a short record, an unknown version, a
// mode without a file type or a time with nanoseconds of a second or more.
Result<Inode> DecodeInode(uint64_t ino, std::string_view value);

struct DirentValue {
  uint64_t ino = 0;
  uint32_t type = 0;  // mode & S_IFMT of the child
};
std::string EncodeDirent(uint64_t ino, uint32_t mode);
// EIO unless 12 bytes whose type is one of the S_IFMT file types.
Result<DirentValue> DecodeDirent(std::string_view value);

}  // namespace sfs::meta
