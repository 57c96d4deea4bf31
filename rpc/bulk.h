// Bulk calls (rpc IoBulk, rpc/oss.proto): a read or write of at least
// kBulkBytes travels as a grpc::ByteBuffer of its own framing instead of a
// protobuf message with a `bytes` field, so its payload is never copied
// into or out of a message: a write's bytes go from the caller's buffers
// (slices that refer to them) to the socket, and on the OSS from the
// received slices to the object file; a read's bytes go from the object
// file into a slice that is sent as is, and on the mount from the
// received slices to the reply pipe or the caller's buffers. (gRPC
// generated messages copy a `bytes` field when they serialize and again
// when they parse: docs/design.md, "The transport".)
//
// Framing: u32 little-endian length of the header, the header (an IoCall
// or IoReply without its data field, protobuf), then the payload.
#pragma once

#include <google/protobuf/message_lite.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <vector>

namespace sfs::rpc {

// Reads and writes of at least this many bytes are bulk calls.
inline constexpr uint64_t kBulkBytes = 64 << 10;
inline constexpr const char* kIoBulkPath = "/sfs.rpc.Oss/IoBulk";

// The message: `header` serialized, then `payload` (slices that may refer
// to memory the caller keeps alive until the call completes).
grpc::ByteBuffer EncodeBulk(const google::protobuf::MessageLite& header,
                            const std::vector<grpc::Slice>& payload);

// Splits a message: its header parsed into `header`, its payload as
// slices of the received buffer (no copy), `payload_bytes` in all. False
// for a message that is not one (too short, a header that does not parse).
bool DecodeBulk(const grpc::ByteBuffer& message, google::protobuf::MessageLite* header,
                std::vector<grpc::Slice>* payload, uint64_t* payload_bytes);

}  // namespace sfs::rpc
