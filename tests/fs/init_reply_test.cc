#include "fs/init_reply.h"

#include <gtest/gtest.h>
#include <linux/fuse.h>

#include <cstring>
#include <vector>

namespace sfs::fs {
namespace {

constexpr uint64_t kBit36 = 1ULL << 36;  // a flags2 bit (FUSE_DIRECT_IO_ALLOW_MMAP)

std::vector<char> InitRequestBytes(uint32_t opcode, uint32_t flags, uint32_t flags2) {
  fuse_in_header header{};
  header.opcode = opcode;
  header.unique = 7;
  fuse_init_in init{};
  init.major = 7;
  init.minor = 38;
  init.flags = flags;
  init.flags2 = flags2;
  std::vector<char> bytes(sizeof(header) + sizeof(init));
  std::memcpy(bytes.data(), &header, sizeof(header));
  std::memcpy(bytes.data() + sizeof(header), &init, sizeof(init));
  return bytes;
}

// libfuse 3.14's reply to a kernel offering FUSE_MAX_PAGES: 1 MiB.
fuse_init_out LibfuseReply(uint32_t flags) {
  fuse_init_out reply{};
  reply.major = 7;
  reply.minor = 36;
  reply.flags = flags;
  reply.max_write = 1 << 20;
  reply.max_pages = 256;
  return reply;
}

std::vector<char> Bytes(const fuse_init_out& reply, size_t size = sizeof(fuse_init_out)) {
  std::vector<char> bytes(size);
  std::memcpy(bytes.data(), &reply, size);
  return bytes;
}

fuse_init_out Reply(const std::vector<char>& bytes) {
  fuse_init_out reply{};
  std::memcpy(&reply, bytes.data(), std::min(bytes.size(), sizeof(reply)));
  return reply;
}

TEST(InitReplyTest, ParsesTheOfferIncludingFlags2) {
  const auto bytes = InitRequestBytes(FUSE_INIT, FUSE_INIT_EXT | FUSE_MAX_PAGES, 1u << 4);
  auto init = ParseInitRequest(bytes.data(), bytes.size());
  ASSERT_TRUE(init.has_value());
  EXPECT_EQ(init->unique, 7u);
  EXPECT_EQ(init->offered, FUSE_INIT_EXT | FUSE_MAX_PAGES | kBit36);
}

TEST(InitReplyTest, Flags2CountsOnlyWithInitExt) {
  const auto bytes = InitRequestBytes(FUSE_INIT, FUSE_MAX_PAGES, 1u << 4);
  auto init = ParseInitRequest(bytes.data(), bytes.size());
  ASSERT_TRUE(init.has_value());
  EXPECT_EQ(init->offered, uint64_t{FUSE_MAX_PAGES});
}

TEST(InitReplyTest, OtherRequestsAndShortReadsAreNotInit) {
  const auto write = InitRequestBytes(FUSE_WRITE, FUSE_MAX_PAGES, 0);
  EXPECT_FALSE(ParseInitRequest(write.data(), write.size()).has_value());
  const auto init = InitRequestBytes(FUSE_INIT, FUSE_MAX_PAGES, 0);
  EXPECT_FALSE(ParseInitRequest(init.data(), sizeof(fuse_in_header) + 8).has_value());
}

TEST(InitReplyTest, MaxRequestSetsMaxWriteAndMaxPages) {
  auto bytes = Bytes(LibfuseReply(FUSE_MAX_PAGES | FUSE_BIG_WRITES));
  InitWishes wishes;
  wishes.max_write = 4 << 20;
  const InitGrant grant = AmendInitReply(bytes, FUSE_MAX_PAGES, wishes, 4096);
  const fuse_init_out reply = Reply(bytes);
  EXPECT_EQ(reply.max_write, 4u << 20);
  EXPECT_EQ(reply.max_pages, 1024);
  EXPECT_EQ(reply.flags, uint32_t{FUSE_MAX_PAGES | FUSE_BIG_WRITES});
  EXPECT_TRUE(grant.sized);
  EXPECT_EQ(grant.max_write, 4u << 20);
  EXPECT_EQ(grant.max_pages, 1024u);
  EXPECT_EQ(grant.flags, 0u);
}

TEST(InitReplyTest, MaxPagesRoundsUpToWholePages) {
  auto bytes = Bytes(LibfuseReply(FUSE_MAX_PAGES));
  InitWishes wishes;
  wishes.max_write = (2 << 20) + 1;
  EXPECT_EQ(AmendInitReply(bytes, FUSE_MAX_PAGES, wishes, 4096).max_pages, 513u);
}

// A kernel without FUSE_MAX_PAGES sends 32 pages a request whatever
// max_write says: libfuse's reply stands.
TEST(InitReplyTest, NoMaxPagesOfferedLeavesTheSizeAlone) {
  fuse_init_out libfuse = LibfuseReply(0);
  libfuse.max_write = 128 << 10;
  libfuse.max_pages = 0;
  auto bytes = Bytes(libfuse);
  InitWishes wishes;
  wishes.max_write = 4 << 20;
  const InitGrant grant = AmendInitReply(bytes, 0, wishes, 4096);
  EXPECT_FALSE(grant.sized);
  EXPECT_EQ(grant.max_write, 128u << 10);
  EXPECT_EQ(grant.max_pages, 0u);
  EXPECT_EQ(Reply(bytes).max_write, 128u << 10);
  EXPECT_EQ(Reply(bytes).flags, 0u);
}

TEST(InitReplyTest, NoWishLeavesLibfusesSize) {
  auto bytes = Bytes(LibfuseReply(FUSE_MAX_PAGES));
  const InitGrant grant = AmendInitReply(bytes, FUSE_MAX_PAGES, InitWishes{}, 4096);
  EXPECT_FALSE(grant.sized);
  EXPECT_EQ(grant.max_write, 1u << 20);
  EXPECT_EQ(grant.max_pages, 256u);
  EXPECT_EQ(Bytes(LibfuseReply(FUSE_MAX_PAGES)), bytes);
}

TEST(InitReplyTest, AddsOnlyOfferedFlagsAndFlags2WhereLibfuseSentIt) {
  auto bytes = Bytes(LibfuseReply(FUSE_INIT_EXT));
  InitWishes wishes;
  wishes.flags = FUSE_HANDLE_KILLPRIV_V2 | kBit36 | FUSE_POSIX_ACL;
  const uint64_t offered = FUSE_INIT_EXT | FUSE_HANDLE_KILLPRIV_V2 | kBit36;
  const InitGrant grant = AmendInitReply(bytes, offered, wishes, 4096);
  EXPECT_EQ(grant.flags, FUSE_HANDLE_KILLPRIV_V2 | kBit36);
  EXPECT_EQ(Reply(bytes).flags, uint32_t{FUSE_INIT_EXT | FUSE_HANDLE_KILLPRIV_V2});
  EXPECT_EQ(Reply(bytes).flags2, 1u << 4);

  // Without FUSE_INIT_EXT in libfuse's reply there is no flags2 to set.
  auto plain = Bytes(LibfuseReply(0));
  EXPECT_EQ(AmendInitReply(plain, offered, wishes, 4096).flags, uint64_t{FUSE_HANDLE_KILLPRIV_V2});
  EXPECT_EQ(Reply(plain).flags2, 0u);
}

// Protocol minor below 23: a 24-byte reply, no max_pages field.
TEST(InitReplyTest, ShortReplyGetsNoSize) {
  auto bytes = Bytes(LibfuseReply(FUSE_MAX_PAGES), FUSE_COMPAT_22_INIT_OUT_SIZE);
  InitWishes wishes;
  wishes.max_write = 4 << 20;
  const InitGrant grant = AmendInitReply(bytes, FUSE_MAX_PAGES, wishes, 4096);
  EXPECT_FALSE(grant.sized);
  EXPECT_EQ(grant.max_write, 1u << 20);
  EXPECT_EQ(bytes.size(), size_t{FUSE_COMPAT_22_INIT_OUT_SIZE});
}

}  // namespace
}  // namespace sfs::fs
