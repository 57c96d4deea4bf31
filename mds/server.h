// The metadata service (`stripefs mds`): the filesystem's metadata store
// and everything that must happen in one place for many client mounts:
// placement of new files (RTDS, pools, weights), the settings (sent to the
// OSSs from here), the quota counts, identifier ranges, the epoch hub the
// OSSs' schedulers meet in, the opens of every client (a removed file is
// destroyed once no client has it open), and the settling and reclaiming
// an unclean stop leaves. Served over gRPC (rpc/mds.proto) with the
// filesystem's key, as an OSS is.
//
// Today these parts are the one-process mount's own (fs::Filesystem,
// opened without a FUSE session): the MDS composes them and serves them;
// docs/design.md, "Client mounts", says what moves where next.
//
// Thread safety: Start, Shutdown and the destructor from one thread; gRPC's
// threads serve the calls.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "mds/squash.h"
#include "rpc/auth.h"
#include "rpc/tls.h"

namespace sfs::mds {

struct ServerOptions {
  std::string listen;  // ADDRESS:PORT (port 0: any free one, see Server::port)
  rpc::Key key;
  std::string key_file;  // the same key, for the MDS's own calls to the OSSs
  rpc::TlsFiles tls;     // off unless given (also used towards the OSSs)
  std::string meta_dir;  // absolute
  uint32_t admin_uid = 0;
  int ost_threads = 2;
  std::chrono::nanoseconds ost_timeout = std::chrono::seconds(30);
  // A client that leaves a call-back unanswered this long is evicted: its
  // cached credits end and the change that waited goes on.
  std::chrono::nanoseconds callback_timeout = std::chrono::seconds(10);
  // Fault injection for tests (`--lose-replies N`): every N-th call that
  // leaves a reply record is applied, then answered UNAVAILABLE as if its
  // reply was lost, so its client sends it again. 0: never.
  uint32_t lose_reply_every = 0;
  // The most credits one client session holds (`--max-cached N`): past
  // it, those granted least recently are revoked (its kernel drops them)
  // down to nine tenths, so the MDS's table stays bounded whatever a
  // client looks at (mds/cache_credits.h Trim).
  size_t max_cached_per_client = 200000;
  // Client machines whose root callers stay root (`--trusted LIST`), if
  // they mount with -o no_root_squash; every other client's root is
  // squashed to nobody (mds/squash.h).
  std::vector<AddressRange> trusted;
};

class Server {
 public:
  virtual ~Server() = default;
  virtual int port() const = 0;
  // Stops taking calls, finishes those under way, closes the store.
  // Idempotent.
  virtual void Shutdown() = 0;
};

// Opens the store (EBUSY while a mount or another MDS has it), connects to
// the OSSs, settles and reclaims, then listens. EADDRINUSE when the address
// is taken.
Result<std::unique_ptr<Server>> StartServer(ServerOptions options);

}  // namespace sfs::mds
