// The object storage server (`stripefs oss`): the OSTs of one storage node,
// each a LocalService (ost/local_service.h) with its NRS heads, policies,
// monitor, ost_timeout and space samples, served to mounts over gRPC
// (rpc/oss.proto). Every request of every mount meets that OST's NRS here.
//
// An OST directory is made private (0700) and served once it carries a
// label; one without is served from the moment a mount's mkfs or `ost add`
// labels it through this server (rpc Label). A call that names a directory
// this server was not given, or an OST by the wrong label, is refused with
// the reason; a call without proof of the key gets UNAUTHENTICATED and
// nothing is read, written or changed (rpc/auth.h).
//
// Thread safety: Start, Shutdown and the destructor from one thread; gRPC's
// threads serve the calls.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "rpc/auth.h"
#include "rpc/tls.h"

namespace sfs::oss {

struct ServerOptions {
  std::string listen;  // ADDRESS:PORT (port 0: any free one, see Server::port)
  rpc::Key key;
  int ost_threads = 2;
  std::chrono::nanoseconds ost_timeout = std::chrono::seconds(30);
  std::vector<std::string> dirs;  // absolute paths
  rpc::TlsFiles tls;              // off unless given
};

class Server {
 public:
  virtual ~Server() = default;
  // The port it listens on.
  virtual int port() const = 0;
  // Stops taking calls, serves those under way (throttles ignored: see
  // ost::Service::Drain) and stops the OSTs. Idempotent.
  virtual void Shutdown() = 0;
};

// Checks and opens every directory, then listens. EINVAL for a bad address
// or a directory given twice; the directory's own error (ENOENT, ENOTDIR,
// EIO for a label that is not readable); the TLS files' (rpc/tls.h);
// EADDRINUSE when the address is taken.
Result<std::unique_ptr<Server>> StartServer(ServerOptions options);

}  // namespace sfs::oss
