// TLS for the transport, for networks that are not trusted: on top of the
// key proof (rpc/auth.h), it keeps data and names secret and the payload
// whole in flight, and lets each side check the other's certificate
// (docs/design.md, "Security"). Off unless files are given.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

// gRPC's own types, declared only: this header reaches fs/ (through the
// mount's options), which need not compile gRPC's headers.
namespace grpc {
class ChannelCredentials;
class ServerCredentials;
}  // namespace grpc

namespace sfs::rpc {

// PEM files. A client verifies the server against `ca` and presents
// `cert` and `key` if given (the OSS asks for them when it has a CA of its
// own); a server presents `cert` and `key` and, with `ca`, requires a
// client certificate that CA signed.
struct TlsFiles {
  std::string ca;
  std::string cert;
  std::string key;  // private: refused if group or others may read it
  bool on() const { return !ca.empty() || !cert.empty() || !key.empty(); }
};

// Insecure credentials when TLS is off. EINVAL for an incomplete set (a
// client without `ca`, a server without `cert` and `key`, one of `cert`
// and `key` without the other); EACCES for a private key others may
// read; the errno of a file that cannot be read.
Result<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(const TlsFiles& files);
Result<std::shared_ptr<grpc::ServerCredentials>> ServerCredentials(const TlsFiles& files);

}  // namespace sfs::rpc
