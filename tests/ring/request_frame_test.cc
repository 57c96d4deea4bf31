#include "ring/request_frame.h"

#include <gtest/gtest.h>
#include <linux/fuse.h>

#include <cstring>
#include <string>
#include <vector>

namespace sfs::ring {
namespace {

// An entry's memory as fuse_ring.cc lays it out: header, room, payload.
struct FakeEntry {
  static constexpr size_t kPayload = 64 * 1024;
  std::vector<char> memory = std::vector<char>(4096 + kPayload);
  uapi::ReqHeader& header() { return *reinterpret_cast<uapi::ReqHeader*>(memory.data()); }
  char* payload() { return memory.data() + 4096; }

  // Writes a request as the kernel does: in header in in_out, the first
  // argument in op_in, the rest in the payload.
  void Put(uint32_t opcode, uint64_t unique, const std::string& first, const std::string& rest) {
    fuse_in_header in{};
    in.len = static_cast<uint32_t>(sizeof(in) + first.size() + rest.size());
    in.opcode = opcode;
    in.unique = unique;
    in.nodeid = 7;
    std::memcpy(header().in_out, &in, sizeof(in));
    std::memcpy(header().op_in, first.data(), first.size());
    std::memcpy(payload(), rest.data(), rest.size());
    header().ring_ent_in_out.payload_sz = static_cast<uint32_t>(rest.size());
    header().ring_ent_in_out.commit_id = unique;
  }
};

TEST(AssembleRequestTest, WriteIsContiguousWithItsDataInPlace) {
  FakeEntry entry;
  fuse_write_in write{};
  write.offset = 4096;
  write.size = 5;
  const std::string first(reinterpret_cast<const char*>(&write), sizeof(write));
  entry.Put(FUSE_WRITE, 42, first, "hello");
  auto frame = AssembleRequest(entry.header(), entry.payload(), FakeEntry::kPayload);
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  EXPECT_EQ(frame->unique, 42u);
  EXPECT_EQ(frame->size, sizeof(fuse_in_header) + sizeof(write) + 5);
  // The data was not moved: the frame ends where the payload's bytes are.
  EXPECT_EQ(frame->data + sizeof(fuse_in_header) + sizeof(write), entry.payload());
  fuse_in_header in;
  std::memcpy(&in, frame->data, sizeof(in));
  EXPECT_EQ(in.opcode, static_cast<uint32_t>(FUSE_WRITE));
  EXPECT_EQ(in.nodeid, 7u);
  fuse_write_in copied;
  std::memcpy(&copied, frame->data + sizeof(in), sizeof(copied));
  EXPECT_EQ(copied.offset, 4096u);
  EXPECT_EQ(std::string(frame->data + sizeof(in) + sizeof(copied), 5), "hello");
}

TEST(AssembleRequestTest, LookupHasAnEmptyFirstArgument) {
  FakeEntry entry;
  const std::string name("file.txt", 9);  // with its NUL
  entry.Put(FUSE_LOOKUP, 9, "", name);
  auto frame = AssembleRequest(entry.header(), entry.payload(), FakeEntry::kPayload);
  ASSERT_TRUE(frame.ok());
  EXPECT_EQ(frame->size, sizeof(fuse_in_header) + name.size());
  EXPECT_STREQ(frame->data + sizeof(fuse_in_header), "file.txt");
}

TEST(AssembleRequestTest, RefusesContradictoryHeaders) {
  FakeEntry entry;
  entry.Put(FUSE_GETATTR, 5, std::string(16, 'a'), "");
  // A length that does not hold the payload.
  entry.header().ring_ent_in_out.payload_sz = 100;
  EXPECT_EQ(AssembleRequest(entry.header(), entry.payload(), FakeEntry::kPayload).err(), EIO);
  // A first argument longer than op_in.
  entry.Put(FUSE_GETATTR, 5, "", std::string(10, 'b'));
  entry.header().ring_ent_in_out.payload_sz = 0;
  fuse_in_header in;
  std::memcpy(&in, entry.header().in_out, sizeof(in));
  in.len = sizeof(in) + 129;
  std::memcpy(entry.header().in_out, &in, sizeof(in));
  EXPECT_EQ(AssembleRequest(entry.header(), entry.payload(), FakeEntry::kPayload).err(), EIO);
  // A payload larger than the buffer.
  entry.Put(FUSE_WRITE, 6, std::string(40, 'c'), std::string(100, 'd'));
  EXPECT_EQ(AssembleRequest(entry.header(), entry.payload(), 99).err(), EIO);
  // A commit id that is not the unique.
  entry.Put(FUSE_GETATTR, 7, std::string(16, 'a'), "");
  entry.header().ring_ent_in_out.commit_id = 8;
  EXPECT_EQ(AssembleRequest(entry.header(), entry.payload(), FakeEntry::kPayload).err(), EIO);
}

TEST(StoreReplyTest, CopiesArgumentsBehindTheOutHeader) {
  FakeEntry entry;
  fuse_out_header out{sizeof(fuse_out_header) + 7, 0, 77};
  char a[] = "abc";
  char b[] = "defg";
  iovec iov[3] = {{&out, sizeof(out)}, {a, 3}, {b, 4}};
  EXPECT_EQ(ReplyUnique(iov, 3), 77u);
  auto stored = StoreReply(iov, 3, entry.header(), entry.payload(), FakeEntry::kPayload);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*stored, sizeof(out) + 7);
  EXPECT_EQ(entry.header().ring_ent_in_out.payload_sz, 7u);
  EXPECT_EQ(std::string(entry.payload(), 7), "abcdefg");
  fuse_out_header back;
  std::memcpy(&back, entry.header().in_out, sizeof(back));
  EXPECT_EQ(back.unique, 77u);
  EXPECT_EQ(back.error, 0);
}

TEST(StoreReplyTest, AReplyAlreadyInThePayloadIsNotCopied) {
  FakeEntry entry;
  std::memset(entry.payload(), 'x', 4096);
  fuse_out_header out{sizeof(fuse_out_header) + 4096, 0, 3};
  iovec iov[2] = {{&out, sizeof(out)}, {entry.payload(), 4096}};
  auto stored = StoreReply(iov, 2, entry.header(), entry.payload(), FakeEntry::kPayload);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(entry.header().ring_ent_in_out.payload_sz, 4096u);
  EXPECT_EQ(entry.payload()[4095], 'x');
}

TEST(StoreReplyTest, TooLargeBecomesAnErrorReply) {
  FakeEntry entry;
  std::vector<char> big(FakeEntry::kPayload + 1, 'y');
  fuse_out_header out{static_cast<uint32_t>(sizeof(fuse_out_header) + big.size()), 0, 4};
  iovec iov[2] = {{&out, sizeof(out)}, {big.data(), big.size()}};
  auto stored = StoreReply(iov, 2, entry.header(), entry.payload(), FakeEntry::kPayload);
  ASSERT_TRUE(stored.ok());
  fuse_out_header back;
  std::memcpy(&back, entry.header().in_out, sizeof(back));
  EXPECT_EQ(back.error, -EIO);
  EXPECT_EQ(back.unique, 4u);
  EXPECT_EQ(entry.header().ring_ent_in_out.payload_sz, 0u);
}

TEST(StoreReplyTest, RefusesAnIovecWithoutAnOutHeader) {
  FakeEntry entry;
  char half[8] = {};
  iovec iov[1] = {{half, sizeof(half)}};
  EXPECT_EQ(ReplyUnique(iov, 1), 0u);
  EXPECT_EQ(StoreReply(iov, 1, entry.header(), entry.payload(), FakeEntry::kPayload).err(), EINVAL);
}

}  // namespace
}  // namespace sfs::ring
