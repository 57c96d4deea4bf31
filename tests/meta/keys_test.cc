#include "meta/keys.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

namespace sfs::meta {
namespace {

using namespace std::string_literals;

TEST(KeysTest, IntegersAreBigEndianSoKeysSortNumerically) {
  EXPECT_EQ(InodeKey(0x0102030405060708), "I\x01\x02\x03\x04\x05\x06\x07\x08"s);
  EXPECT_EQ(DecodeU64BE(EncodeU64BE(0x0102030405060708)), 0x0102030405060708u);
  EXPECT_LT(InodeKey(255), InodeKey(256));
  EXPECT_LT(InodeKey(256), InodeKey(uint64_t{1} << 40));
  // Every entry of directory 1 sorts before any of directory 2.
  EXPECT_LT(DirentKey(1, "zzz"), DirentKey(2, "a"));
  EXPECT_LT(DirentKey(1, "a"), DirentKey(1, "b"));
  EXPECT_EQ(DirentKey(7, "x"), DirentPrefix(7) + "x");
}

TEST(KeysTest, PrefixesAreOneLetter) {
  EXPECT_EQ(SettingKey("fs_uuid"), "Sfs_uuid");
  EXPECT_EQ(LayoutKey(1), "L\0\0\0\0\0\0\0\x01"s);
  EXPECT_EQ(OrphanKey(1), "O\0\0\0\0\0\0\0\x01"s);
  EXPECT_EQ(XattrKey(1, "user.a"), "X\0\0\0\0\0\0\0\x01user.a"s);
  EXPECT_EQ(kNextInoKey, "C/next_ino");
  EXPECT_EQ(kNextObjKey, "C/next_obj");
}

TEST(KeysTest, PrefixSuccessor) {
  EXPECT_EQ(PrefixSuccessor("D\0\0\0\0\0\0\0\x01"s), "D\0\0\0\0\0\0\0\x02"s);
  EXPECT_EQ(PrefixSuccessor("a\xff"s), "b");
  EXPECT_EQ(PrefixSuccessor("\xff\xff"s), "");
  // Trailing 0xff bytes drop out: still above every key of directory 0xff
  // and not above any of directory 0x100.
  const std::string bound = PrefixSuccessor(DirentPrefix(0xff));
  EXPECT_EQ(bound, "D\0\0\0\0\0\0\x01"s);
  EXPECT_LT(DirentKey(0xff, "\xff\xff"), bound);
  EXPECT_LE(bound, DirentPrefix(0x100));
}

TEST(KeysTest, DecodeInoKeyAndCounter) {
  auto ino = DecodeInoKey(OrphanKey(42));
  ASSERT_TRUE(ino.ok());
  EXPECT_EQ(*ino, 42u);
  EXPECT_EQ(DecodeInoKey("O\x01").err(), EIO);
  auto counter = DecodeCounter(EncodeU64BE(1026));
  ASSERT_TRUE(counter.ok());
  EXPECT_EQ(*counter, 1026u);
  EXPECT_EQ(DecodeCounter("1234567").err(), EIO);
}

TEST(KeysTest, InodeRoundTrip) {
  Inode in;
  in.ino = 77;
  in.mode = S_IFLNK | 0777;
  in.uid = 1000;
  in.gid = 0xfffffffe;
  in.nlink = 3;
  in.size = uint64_t{1} << 50;
  in.rdev = 0x0807;
  in.parent = 9;
  in.atime = {-5, 999999999};
  in.mtime = {1700000000, 1};
  in.ctime = {1700000001, 2};
  in.allocated = uint64_t{3} << 40;
  in.projid = 0xfffffff0;
  in.may_have_xattrs = false;
  in.symlink = "../target\0with nul"s;
  std::string record = EncodeInode(in);
  EXPECT_EQ(record.size(), kInodeRecordFixedSize + in.symlink.size());
  EXPECT_EQ(record[0], '\x04');
  auto out = DecodeInode(77, record);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->ino, 77u);
  EXPECT_EQ(out->mode, in.mode);
  EXPECT_EQ(out->uid, in.uid);
  EXPECT_EQ(out->gid, in.gid);
  EXPECT_EQ(out->nlink, in.nlink);
  EXPECT_EQ(out->size, in.size);
  EXPECT_EQ(out->rdev, in.rdev);
  EXPECT_EQ(out->parent, in.parent);
  EXPECT_EQ(out->atime.sec, -5);
  EXPECT_EQ(out->atime.nsec, 999999999);
  EXPECT_EQ(out->mtime.sec, 1700000000);
  EXPECT_EQ(out->ctime.nsec, 2);
  EXPECT_EQ(out->allocated, in.allocated);
  EXPECT_EQ(out->projid, in.projid);
  EXPECT_FALSE(out->may_have_xattrs);
  EXPECT_EQ(out->symlink, in.symlink);
  in.may_have_xattrs = true;
  auto with = DecodeInode(77, EncodeInode(in));
  ASSERT_TRUE(with.ok());
  EXPECT_TRUE(with->may_have_xattrs);
}

// A store made before the flags byte holds version 3 records: they decode
// as possibly having extended attributes (so deleting one looks for them).
// A flag bit this version does not know is damage.
TEST(KeysTest, Version3RecordsMayHaveXattrsAndUnknownFlagsAreDamage) {
  Inode in;
  in.mode = S_IFLNK | 0777;
  in.projid = 99;
  in.may_have_xattrs = false;
  in.symlink = "target";
  const std::string v4 = EncodeInode(in);
  std::string v3 = v4.substr(0, kInodeRecordV3FixedSize) + in.symlink;
  v3[0] = 3;
  auto out = DecodeInode(5, v3);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->projid, 99u);
  EXPECT_TRUE(out->may_have_xattrs);
  EXPECT_EQ(out->symlink, "target");
  std::string unknown = v4;
  unknown[kInodeRecordV3FixedSize] = 2;
  EXPECT_EQ(DecodeInode(5, unknown).err(), EIO);
  unknown = v4;
  unknown[0] = 5;
  EXPECT_EQ(DecodeInode(5, unknown).err(), EIO);
}

// A store made before project ids holds version 2 records: they decode,
// with project 0, and the symlink target where it was.
TEST(KeysTest, Version2RecordsDecodeWithoutAProject) {
  Inode in;
  in.mode = S_IFLNK | 0777;
  in.uid = 7;
  in.size = 6;
  in.projid = 99;
  in.symlink = "target";
  std::string v3 = EncodeInode(in);
  std::string v2 = v3.substr(0, kInodeRecordV2FixedSize) + in.symlink;
  v2[0] = 2;
  auto out = DecodeInode(5, v2);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->uid, 7u);
  EXPECT_EQ(out->projid, 0u);
  EXPECT_EQ(out->symlink, "target");
  EXPECT_EQ(DecodeInode(5, v2.substr(0, kInodeRecordV2FixedSize - 1)).err(), EIO);
  v2[0] = 4;
  EXPECT_EQ(DecodeInode(5, v2).err(), EIO);
}

TEST(KeysTest, UsageRecordsRoundTripAndRejectJunk) {
  const QuotaId id{QuotaType::kProject, 0xfedcba98};
  const std::string key = UsageKey(id);
  EXPECT_EQ(key, "Q\x02\xfe\xdc\xba\x98"s);
  auto decoded = DecodeUsageKey(key);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, id);
  EXPECT_EQ(DecodeUsageKey("Q\x03\x00\x00\x00\x01"s).err(), EIO);
  EXPECT_EQ(DecodeUsageKey("Q\x00\x00\x00\x01"s).err(), EIO);
  const QuotaUsage usage{1LL << 40, 12345, 1700000000, -1};
  auto back = DecodeUsage(EncodeUsage(usage));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, usage);
  EXPECT_EQ(DecodeUsage(EncodeUsage(usage).substr(1)).err(), EIO);
  std::string v2 = EncodeUsage(usage);
  v2[0] = 2;
  EXPECT_EQ(DecodeUsage(v2).err(), EIO);
}

TEST(KeysTest, InodeRecordIsLittleEndian) {
  Inode in;
  in.mode = 0x11223344;
  std::string record = EncodeInode(in);
  EXPECT_EQ(record.substr(1, 4), "\x44\x33\x22\x11"s);
}

TEST(KeysTest, DecodeInodeRejectsShortAndUnknownRecords) {
  std::string record = EncodeInode(Inode{});
  EXPECT_EQ(DecodeInode(1, "").err(), EIO);
  EXPECT_EQ(DecodeInode(1, record.substr(0, kInodeRecordFixedSize - 1)).err(), EIO);
  record[0] = 2;
  EXPECT_EQ(DecodeInode(1, record).err(), EIO);
  record[0] = 0;
  EXPECT_EQ(DecodeInode(1, record).err(), EIO);
}

// A fuzzer's input, found when inode records were version 1, in version 2:
// the same fields plus an allocation of 0 after ctime.
std::string AsVersion2(std::string v1) {
  v1[0] = 2;
  return v1.insert(kInodeRecordV2FixedSize - 8, 8, '\0');
}

// Found by fuzz/meta_records_fuzzer: a record with nsec >= 10^9 (which
// EncodeInode never writes) decoded, and stat would have returned it.
TEST(KeysTest, DecodeInodeRejectsNanosecondsOfASecondOrMore) {
  // The crashing input (the selector byte removed): mtime.nsec = 0xff000000.
  const std::string fuzzed =
      "\x01\xa4\x81\x00\x00\xe8\x03\x00\x00\x64\x00\x00\x00\x01\x00\x00\x00\x00\x10\x00"
      "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x49\x00\x00\x00\x00\x00"
      "\x00\x00\x07\x53\x65\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x01\xf1\x53\x65"
      "\x00\x00\x00\x00\xff\xc9\x9a\x3b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"s;
  EXPECT_EQ(DecodeInode(1, AsVersion2(fuzzed)).err(), EIO);
  Inode in;
  in.mode = S_IFREG | 0644;
  in.mtime = {1, 999999999};
  EXPECT_TRUE(DecodeInode(1, EncodeInode(in)).ok());
  for (Timestamp Inode::*field : {&Inode::atime, &Inode::mtime, &Inode::ctime}) {
    Inode bad = in;
    (bad.*field).nsec = 1'000'000'000;
    EXPECT_EQ(DecodeInode(1, EncodeInode(bad)).err(), EIO);
  }
}

// Found by fuzz/meta_records_fuzzer: an inode whose mode has no file type
// (here 01244) decoded; the kernel would fail its lookups with a bare EIO.
TEST(KeysTest, DecodeInodeRejectsAModeWithoutAFileType) {
  const std::string fuzzed =  // the crashing input, selector byte removed
      "\x01\xa4\x02\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x01\x00\x00\x00\x00\x10\x00"
      "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00"
      "\x00\x00\xf1\x53\x65\x00\x00\x00\x00\x05\x00\x00\x00\x01\xf1\x53\x65\x00\x00\x00"
      "\x00\xff\xc9\x9a\x3b\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"s;
  EXPECT_EQ(DecodeInode(1, AsVersion2(fuzzed)).err(), EIO);
  Inode in;
  for (uint32_t mode : {0u, 0644u, 0170644u, 0110644u}) {
    in.mode = mode;
    EXPECT_EQ(DecodeInode(1, EncodeInode(in)).err(), EIO) << std::oct << mode;
  }
  for (uint32_t type : {S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK}) {
    in.mode = type | 07777;
    EXPECT_TRUE(DecodeInode(1, EncodeInode(in)).ok()) << std::oct << type;
  }
}

TEST(KeysTest, DirentRoundTripKeepsOnlyTypeBits) {
  std::string value = EncodeDirent(0x123456789, S_IFDIR | 0755);
  EXPECT_EQ(value.size(), kDirentValueSize);
  auto d = DecodeDirent(value);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->ino, 0x123456789u);
  EXPECT_EQ(d->type, static_cast<uint32_t>(S_IFDIR));
  EXPECT_EQ(DecodeDirent(value.substr(0, 11)).err(), EIO);
  EXPECT_EQ(DecodeDirent(value + "x").err(), EIO);
}

// Found by fuzz/meta_records_fuzzer: type bits EncodeDirent never writes
// (0x404000, beside S_IFDIR) decoded and would reach readdir.
TEST(KeysTest, DecodeDirentRejectsBadTypes) {
  EXPECT_EQ(DecodeDirent("\0\0\0\0\0\0\0*\0@@\0"s).err(), EIO);       // the crashing input
  EXPECT_EQ(DecodeDirent(EncodeU64BE(42) + "\0\0\0\0"s).err(), EIO);  // no type
  for (uint32_t type : {S_IFREG, S_IFDIR, S_IFLNK, S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK}) {
    auto d = DecodeDirent(EncodeDirent(42, type | 0644));
    ASSERT_TRUE(d.ok()) << type;
    EXPECT_EQ(d->type, type);
  }
}

}  // namespace
}  // namespace sfs::meta
