// A client mount (`stripefs mount mds://ADDRESS:PORT`): the store is the
// MDS's, reached through client/mds_client.h; every OST is on an OSS.
// What else differs is said where it differs (Filesystem::Open, AcquireOpen,
// ReleaseOpen, ForgetRemoved, Unlink, MakeNode, the settings).
#include "common/log.h"
#include "fs/fd_budget.h"
#include "fs/filesystem.h"
#include "fs/ost_attach.h"
#include "nrs/epoch_data.h"

namespace sfs::fs {

Status Filesystem::ConnectClient() {
  const client::Credentials& credentials = config_.oss_credentials;
  if (credentials.key_file.empty()) {
    return Status::Error(EINVAL, "a client mount needs the filesystem's key: -o key=FILE");
  }
  auto key = rpc::ReadKeyFile(credentials.key_file);
  if (!key.ok()) return key.status();
  client::MdsOptions options;
  options.address = config_.mds;
  options.key = std::move(key).value();
  options.tls = credentials.tls;
  auto mds = client::MdsClient::Connect(std::move(options));
  if (!mds.ok()) return mds.status();
  mds_ = std::move(mds).value();
  meta_ = client::NewRemoteMetaStore(mds_);
  SFS_RETURN_IF_ERROR(CheckFormat(*meta_));
  auto identities = ReadOstIdentities(*meta_);
  if (!identities.ok()) return identities.status();
  fd_limit_ = RaiseDescriptorLimit();
  inline_budget_ = std::make_shared<std::atomic<int>>(config_.inline_ios);
  // The filesystem's epoch hub is the MDS's (its streams to the OSSs);
  // this one has no participant and only satisfies the OST monitor.
  epochs_ = std::make_shared<nrs::SharedEpochHub>(nrs::CombineEpochData,
                                                  control::NrsControl::kDefaultEhTimeout);
  for (const OstIdentity& id : *identities) {
    if (!client::IsOssPath(id.path)) {
      return Status::Error(EINVAL, "OST " + std::to_string(id.index) + " is the directory " +
                                       id.path + " of the MDS's machine; a client mount "
                                       "needs every OST on an OSS (oss://ADDRESS:PORT/DIR)");
    }
    auto remote = client::ConnectRemoteOst(id.index, id.path, id.fs_uuid, id.ost_uuid,
                                           credentials, inline_budget_, /*epochs=*/nullptr);
    if (!remote.ok()) return remote.status();
    SFS_RETURN_IF_ERROR(osts_.Add(std::move(remote).value()));
  }
  Logger("fs")->info("client of {}{}: {} OSTs on OSSs", client::kMdsScheme, config_.mds,
                     osts_.size());
  return Status::Ok();
}

bool Filesystem::IsClientLocalSetting(const std::string& name) {
  // What this mount's own connections and counters show.
  return name == kMetricsAddressName || name == kJobStatsName || name == kOstStatusName ||
         name == kOstCountKey;
}

}  // namespace sfs::fs
