// Bulk framing (rpc/bulk.h): header and payload survive any split into
// slices, and what is not a bulk message is refused.
#include "rpc/bulk.h"

#include <gtest/gtest.h>

#include <string>

#include "rpc/oss.pb.h"

namespace sfs::rpc {
namespace {

std::string Gather(const std::vector<grpc::Slice>& slices) {
  std::string out;
  for (const grpc::Slice& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

TEST(BulkTest, HeaderAndPayloadRoundTripHoweverTheyAreSplit) {
  IoCall call;
  call.set_op(1);
  call.set_object_id(0xabc);
  call.set_length(300000);
  call.mutable_caller()->set_jobid("job.9");
  std::string payload(300000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 31 + 7);
  const grpc::ByteBuffer whole = EncodeBulk(
      call, {grpc::Slice(payload.data(), 1000, grpc::Slice::STATIC_SLICE),
             grpc::Slice(payload.data() + 1000, payload.size() - 1000, grpc::Slice::STATIC_SLICE)});
  // The same bytes cut every 3 bytes at first (the length and the header
  // straddle slices), then in large pieces.
  grpc::Slice flat;
  ASSERT_TRUE(whole.DumpToSingleSlice(&flat).ok());
  const std::string bytes(reinterpret_cast<const char*>(flat.begin()), flat.size());
  std::vector<grpc::Slice> cut;
  for (size_t at = 0; at < bytes.size();) {
    const size_t n = at < 64 ? 3 : 65536;
    cut.emplace_back(bytes.data() + at, std::min(n, bytes.size() - at));
    at += n;
  }
  for (const grpc::ByteBuffer& message : {whole, grpc::ByteBuffer(cut.data(), cut.size())}) {
    IoCall back;
    std::vector<grpc::Slice> data;
    uint64_t data_bytes = 0;
    ASSERT_TRUE(DecodeBulk(message, &back, &data, &data_bytes));
    EXPECT_EQ(back.object_id(), 0xabcu);
    EXPECT_EQ(back.caller().jobid(), "job.9");
    EXPECT_EQ(data_bytes, payload.size());
    EXPECT_TRUE(Gather(data) == payload);
  }
}

TEST(BulkTest, AHeaderAloneHasNoPayload) {
  IoReply reply;
  reply.set_err(5);
  IoReply back;
  std::vector<grpc::Slice> data;
  uint64_t data_bytes = 7;
  ASSERT_TRUE(DecodeBulk(EncodeBulk(reply, {}), &back, &data, &data_bytes));
  EXPECT_EQ(back.err(), 5);
  EXPECT_EQ(data_bytes, 0u);
  EXPECT_TRUE(data.empty());
}

TEST(BulkTest, WhatIsNotABulkMessageIsRefused) {
  IoCall header;
  std::vector<grpc::Slice> data;
  uint64_t data_bytes = 0;
  grpc::Slice short_length("ab", 2);
  EXPECT_FALSE(DecodeBulk(grpc::ByteBuffer(&short_length, 1), &header, &data, &data_bytes));
  // A length past the end of the message.
  const std::string too_long("\xff\x00\x00\x00xyz", 7);
  grpc::Slice s(too_long.data(), too_long.size());
  EXPECT_FALSE(DecodeBulk(grpc::ByteBuffer(&s, 1), &header, &data, &data_bytes));
  // A header that is not a message.
  const std::string garbage("\x03\x00\x00\x00\xff\xff\xff", 7);
  grpc::Slice g(garbage.data(), garbage.size());
  EXPECT_FALSE(DecodeBulk(grpc::ByteBuffer(&g, 1), &header, &data, &data_bytes));
}

}  // namespace
}  // namespace sfs::rpc
