// A client mount's connection to the metadata service (`stripefs mds`,
// mds/server.h): Lustre's mdc. Every metadata operation is one call
// (rpc/mds.proto): the metadata store's own (NewRemoteMetaStore puts them
// behind meta::MetaStore, so the code above does not know which store it
// has) and the filesystem operations that must run where the metadata
// lives (a create with its placement, an unlink, an open and its close, a
// run-time setting).
//
// A call the MDS does not answer (down, restarting) is retried with a new
// session until `patience` runs out, then fails with EIO; one refused for
// the key fails with EACCES at once.
//
// Thread safety: every method from any thread.
#pragma once

#include <fcntl.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "client/cache_log.h"
#include "client/known_dirs.h"
#include "client/quota_grants.h"
#include "client/room_grants.h"
#include "common/status.h"
#include "meta/meta_store.h"
#include "rpc/auth.h"
#include "rpc/tls.h"

// The wire's messages (rpc/mds.proto): declared only, so that the code
// that reaches the MDS through this header does not compile gRPC's and
// protobuf's headers (rpc/meta_wire.h has them).
namespace sfs::rpc {
class MetaCall;
class MetaReply;
}  // namespace sfs::rpc

namespace sfs::client {

// "mds://ADDRESS:PORT", what a client mounts.
inline constexpr const char* kMdsScheme = "mds://";
bool IsMdsPath(const std::string& source);
// ADDRESS:PORT; EINVAL with the reason for anything else.
Result<std::string> ParseMdsPath(const std::string& source);

struct MdsOptions {
  std::string address;  // ADDRESS:PORT
  rpc::Key key;
  rpc::TlsFiles tls;
  // How long a call waits for an MDS that does not answer (restarting)
  // before it fails with EIO.
  std::chrono::nanoseconds patience = std::chrono::seconds(60);
  // `-o root_squash` (the default): the MDS maps this client's root
  // callers to nobody and checks their permissions itself. Off
  // (`-o no_root_squash`) only asks: the MDS keeps root as root only for a
  // client its --trusted list names (mds/squash.h).
  bool root_squash = true;
};

// Who asks, as the MDS records and schedules it.
struct MdsCaller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
  std::string jobid;
};

// The caller of the operation this thread serves (a FUSE request): every
// call it makes that names no caller of its own carries this one, so the
// MDS schedules it by uid and job id and squashes it when it is root.
// Calls with no caller at all are the mount's own work for operations
// already checked (closes, opens told again, size updates).
class CallerScope {
 public:
  // nullopt: calls made under this scope carry no caller (a continuation
  // of work that had none, run on a thread serving another request).
  explicit CallerScope(std::optional<MdsCaller> caller);
  ~CallerScope();
  CallerScope(const CallerScope&) = delete;
  CallerScope& operator=(const CallerScope&) = delete;
  static const MdsCaller* Current();

 private:
  const std::optional<MdsCaller> caller_;
  const MdsCaller* const saved_;
};

class MdsClient {
 public:
  // Connects and opens a session; ECONNREFUSED-like failures as EIO with the
  // address, EACCES for a key the MDS refuses.
  static Result<std::shared_ptr<MdsClient>> Connect(MdsOptions options);
  virtual ~MdsClient() = default;

  // One call; the reply's own error (an errno of the operation) as its
  // status. `call.request_id` is filled in.
  virtual Result<rpc::MetaReply> Call(rpc::MetaCall call) = 0;
  virtual const std::string& address() const = 0;

  // Seed 003's call-backs (rpc Callbacks): keeps a stream to the MDS open
  // on a thread of its own, reopening it after a loss. `revoke` runs for
  // each call-back (after cache_log() recorded it) and must have made the
  // kernel drop what it names when it returns; then the MDS hears the
  // acknowledgement. `lost` runs when a stream ended (every credit is
  // gone); `reconnected` when a new one is up, before any call-back on it.
  struct CallbackHandlers {
    std::function<void(const std::vector<uint64_t>& inodes,
                       const std::vector<uint64_t>& directories)> revoke;
    std::function<void()> lost;
    std::function<void()> reconnected;
    // Extent credits of open files to give back (EXTENT_GET's): returns
    // once no read or write under them is in flight and none will start
    // without asking again; then the MDS hears the acknowledgement. On a
    // thread of its own, not the stream's.
    std::function<void(const std::vector<uint64_t>& files)> revoke_extents;
    // Quota and room grants (QUOTA_GRANT's, ROOM_GRANT's) to give back:
    // returns once no write under them is in flight and none will be made
    // from them. On a thread of its own, as revoke_extents.
    std::function<void(const std::vector<uint64_t>& grants)> revoke_grants;
  };
  virtual void StartCallbacks(CallbackHandlers handlers) = 0;
  // Ends the stream and its thread. Idempotent; also in the destructor.
  virtual void StopCallbacks() = 0;
  // What the kernel may cache (client/cache_log.h).
  virtual CacheLog& cache_log() = 0;
  // Whether `name` is known not to be in `dir` (client/known_dirs.h): a
  // directory this client made and still holds the credit of.
  virtual bool KnownAbsent(uint64_t dir, const std::string& name) const = 0;

  // The filesystem's operations run by the MDS.
  // An open of a file (its first on this client): the inode and its
  // layout blob, as the MDS has them once the open counts.
  struct Opened {
    meta::Inode inode;
    std::string layout;
  };
  // With `opened` (a regular file), the new file is opened in the same
  // call (a create's open), and what the open needs is put there.
  Result<meta::Inode> MakeNode(const MdsCaller& caller, uint64_t parent, const std::string& name,
                               uint32_t mode, uint64_t rdev, const std::string& symlink,
                               Opened* opened = nullptr);
  // The thread's caller (CallerScope) is the unlink's.
  Result<meta::Removed> Unlink(uint64_t parent, const std::string& name);
  // `flags`: the open's access mode (O_ACCMODE, O_TRUNC), which the MDS
  // checks for a squashed root caller.
  virtual Result<Opened> Open(uint64_t ino, int flags = O_RDONLY);
  // Whether this client's root callers are squashed as far as it knows
  // (it asked for it; the MDS may squash a client that did not ask, too).
  virtual bool squashes_root() const = 0;
  // An open this client has, told again after its call-back stream was
  // lost (the MDS ended its opens, or restarted); a file removed meanwhile
  // is counted too, so it stays until its last close.
  Status Reopen(uint64_t ino);
  // This client may read (`write` false) or read and write the open file
  // `ino`'s data until a call-back takes the credit back
  // (CallbackHandlers::revoke_extents); returns once granted.
  Status ExtentGet(uint64_t ino, bool write);
  // A call the MDS answers only once this client's call-back stream is up
  // (EAGAIN before: asked again for up to 30 s, then EIO); the operation's
  // error as its status.
  Result<rpc::MetaReply> CallOnceAttached(const rpc::MetaCall& call);
  // QUOTA_GRANT (client/quota_grants.h's ask): room for at least `bytes`
  // more of `owner`'s usage for a write by `caller` (squashed by the MDS
  // as any call of it), telling the grants in `done` spent.
  Result<QuotaGrant> AskQuota(const control::QuotaOwner& owner, uint32_t caller, size_t ost,
                              uint64_t bytes, const std::vector<uint64_t>& done);
  // ROOM_GRANT (client/room_grants.h's ask): room for at least `per_ost`'s
  // bytes on each of its OSTs, telling the grants in `done` spent.
  Result<RoomGrant> AskRoom(const std::map<uint32_t, uint64_t>& per_ost,
                            const std::vector<uint64_t>& done);
  // CHECK_ACCESS for the thread's caller (CallerScope): EACCES if the MDS
  // squashes it and nobody may not use `ino` as `mask` asks.
  Status CheckAccess(uint64_t ino, int mask);
  // The last close of `ino` on this client.
  Status Close(uint64_t ino);
  // The same without waiting: told by a thread of its own, in order; an
  // Open of the same inode meanwhile takes its place (the MDS never hears
  // the close) or waits for it. Not told if the client stops first (its
  // stream's end closes its files at the MDS).
  virtual void CloseSoon(uint64_t ino) = 0;
  // A name of `ino` went leaving it no link (a rename over it): the MDS
  // destroys it once no client has it open.
  Status ForgetRemoved(uint64_t ino);
  Result<std::string> GetFsSetting(const std::string& name);
  Status SetFsSetting(const MdsCaller& caller, const std::string& name, const std::string& value);
  Status RemoveFsSetting(const MdsCaller& caller, const std::string& name);
  Status SetLayoutXattr(const MdsCaller& caller, uint64_t ino, const std::string& value);
};

// meta::MetaStore over `mds`. Format/Open/Destroy and the whole-store scans
// and repairs are fsck's, run on the MDS's machine: they answer EOPNOTSUPP.
// The usage observer hears the usage as it was when installed.
std::unique_ptr<meta::MetaStore> NewRemoteMetaStore(std::shared_ptr<MdsClient> mds);

}  // namespace sfs::client
