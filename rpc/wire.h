// What of a call its signature covers (rpc/auth.h), and the mapping between
// gRPC's status codes and errno, shared by both sides of the transport.
#pragma once

#include <grpcpp/grpcpp.h>

#include <string>

#include "common/status.h"
#include "rpc/oss.grpc.pb.h"  // generated (rpc/CMakeLists.txt)

namespace sfs::rpc {

// Canonical bytes of a call's identifying fields: everything but a write's
// payload (which only TLS protects).
std::string IoCallFields(const IoCall& call);
// The same for a call whose payload travels apart (rpc/bulk.h).
std::string IoCallFields(const IoCall& call, uint64_t data_bytes);
std::string OstRefFields(const OstRef& ost);
std::string LabelCallFields(const LabelCall& call);
std::string ConfigureCallFields(const ConfigureCall& call);  // the settings' bytes too
std::string NrsStatusCallFields(const NrsStatusCall& call);
std::string ObjectCallFields(const ObjectCall& call);
std::string SteerCallFields(const SteerCall& call);
// The session an authenticated call was signed in (CheckCall passed).
uint64_t SessionOf(const grpc::ServerContextBase& context);

// Method names as they are signed.
inline constexpr const char* kIoMethod = "Io";
inline constexpr const char* kIoBulkMethod = "IoBulk";
inline constexpr const char* kStatusMethod = "Status";
inline constexpr const char* kLabelMethod = "Label";
inline constexpr const char* kConfigureMethod = "Configure";
inline constexpr const char* kNrsStatusMethod = "NrsStatus";
inline constexpr const char* kEpochsMethod = "Epochs";  // signs OstRefFields
// An Epochs call's OST (an OstRef, serialized) in its metadata, so the
// server checks the signature before it reads the stream.
inline constexpr const char* kOstHeader = "sfs-ost-bin";
inline constexpr const char* kObjectStatMethod = "ObjectStat";
inline constexpr const char* kListObjectsMethod = "ListObjects";  // signs ObjectCallFields
inline constexpr const char* kSteerMethod = "Steer";

// A transport failure as the caller of a remote OST sees it: unreachable,
// timed out or cut (EIO: the data is not known to be there), refused
// (EACCES: the key), anything else EIO.
Status FromGrpc(const grpc::Status& status, const std::string& peer);

// Signs `context` for a call (client side).
void SignCall(class ClientSession& session, grpc::ClientContext& context, const char* method,
              const std::string& fields);
// Checks a call's signature (server side): OK, or UNAUTHENTICATED with the
// reason.
grpc::Status CheckCall(class SessionTable& sessions, const grpc::ServerContextBase& context,
                       const char* method, const std::string& fields);

}  // namespace sfs::rpc
