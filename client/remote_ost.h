// An OST another machine serves (`stripefs oss`, oss/server.h), behind the
// interface of a local one (ost::Service), so that striping, placement,
// grants, quotas, df and job stats work over a mix of local and remote
// OSTs without knowing which they have.
//
// Every request is one gRPC call (rpc/oss.proto) to the OSS, whose
// LocalService of that OST schedules it by its NRS and serves it; the
// reply completes the request here (its observer runs on a gRPC thread).
// Space, health and counters come from a status call every Tick (the
// mount's OST monitor), so statfs and placement never wait on the network.
// An OSS that cannot be reached fails each request with EIO and is
// unresponsive (weight 0 in placement) until it answers again; the channel
// reconnects by itself.
//
// Thread safety: as ost::Service: every method from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "common/status.h"
#include "nrs/epoch_hub.h"
#include "ost/service.h"
#include "rpc/auth.h"
#include "rpc/tls.h"

namespace sfs::client {

// Where an OST of the filesystem lives, as mkfs records it:
// "oss://ADDRESS:PORT/DIR".
struct OssAddress {
  std::string address;  // ADDRESS:PORT
  std::string dir;      // absolute, as the OSS serves it
};
inline constexpr const char* kOssScheme = "oss://";
bool IsOssPath(const std::string& path);
// EINVAL, with the reason, for anything else.
Result<OssAddress> ParseOssPath(const std::string& path);

struct RemoteOstOptions {
  uint32_t index = 0;
  OssAddress oss;
  std::string fs_uuid;   // the labels the OSS must find (mkfs's)
  std::string ost_uuid;
  rpc::Key key;
  rpc::TlsFiles tls;  // off unless given
  // As ost::ServiceOptions::inline_budget: how many callers' threads may
  // wait on the network at once in SubmitOrRun (a call made on the
  // caller's thread, whose reply wakes that thread alone); null: never.
  std::shared_ptr<std::atomic<int>> inline_budget;
  // The mount's epoch hub (the one its local OSTs share): the OST's
  // scheduler on the OSS takes part in it over an Epochs stream
  // (rpc/oss.proto). Null: no stream; the OSS's OSTs share a hub of their
  // own.
  std::shared_ptr<nrs::EpochHub> epochs;
};

// Reaches the OST, checking (a few seconds' patience) that its OSS takes
// the key (EACCES if not) and serves it under its label (the OSS's errno
// and reason if not). An OSS that does not answer yet is no error: the OST
// is unresponsive until it does.
Result<std::unique_ptr<ost::Service>> ConnectRemoteOst(RemoteOstOptions options);

// What a mount or mkfs is given to reach OSSs: the key file, and TLS files
// where the network is not trusted.
struct Credentials {
  std::string key_file;
  rpc::TlsFiles tls;
};

// The same from what the metadata store records of the OST: its path
// (oss://...), labels and the credentials the mount was given. EINVAL if
// no key file was given; the key file's error (rpc::ReadKeyFile).
Result<std::unique_ptr<ost::Service>> ConnectRemoteOst(
    uint32_t index, const std::string& path, const std::string& fs_uuid,
    const std::string& ost_uuid, const Credentials& credentials,
    std::shared_ptr<std::atomic<int>> inline_budget, std::shared_ptr<nrs::EpochHub> epochs);

// mkfs and `ost add`: labels directory `oss.dir` on its OSS (check_only:
// only whether it could). EACCES without the key; the OSS's reason
// otherwise (EEXIST: holds something else; ENOENT: not served there).
Status LabelRemoteOst(const OssAddress& oss, const rpc::Key& key, const rpc::TlsFiles& tls,
                      const std::string& fs_uuid,
                      uint32_t index, const std::string& ost_uuid, bool force, bool check_only);

}  // namespace sfs::client
