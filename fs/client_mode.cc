// A client mount (`stripefs mount mds://ADDRESS:PORT`): the store is the
// MDS's, reached through client/mds_client.h; every OST is on an OSS.
// What else differs is said where it differs (Filesystem::Open, AcquireOpen,
// ReleaseOpen, ForgetRemoved, Unlink, MakeNode, the settings).
#include <unistd.h>

#include <cstring>

#include "common/log.h"
#include "fs/fd_budget.h"
#include "fs/fuse_api.h"
#include "fs/filesystem.h"
#include "fs/ops_common.h"
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
  options.root_squash = config_.root_squash;
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
  client_quota_ = std::make_unique<client::QuotaGrants>(
      [mds = mds_.get()](const control::QuotaOwner& owner, uint32_t caller, size_t ost,
                         uint64_t bytes, const std::vector<uint64_t>& done) {
        return mds->AskQuota(owner, caller, ost, bytes, done);
      });
  client_room_ = std::make_unique<client::RoomGrants>(
      [mds = mds_.get()](const std::map<uint32_t, uint64_t>& per_ost,
                         const std::vector<uint64_t>& done) { return mds->AskRoom(per_ost, done); });
  client::MdsClient::CallbackHandlers handlers;
  handlers.revoke = [this](const std::vector<uint64_t>& inodes,
                           const std::vector<uint64_t>& directories) {
    DropRevoked(inodes, directories);
  };
  handlers.lost = [this] {
    DropAllCached();
    client_quota_->Forget();  // the MDS freed them with the stream
    client_room_->Forget();
    // The MDS dropped this client's extent credits with the stream.
    for (const auto& file : open_.All()) {
      if (file->remote_extent != nullptr) file->remote_extent->Lost();
    }
  };
  handlers.revoke_extents = [this](const std::vector<uint64_t>& files) {
    for (uint64_t ino : files) {
      // Not open here (any more): nothing held, nothing to wait for.
      std::shared_ptr<OpenFile> file = open_.Find(ino);
      if (file != nullptr && file->remote_extent != nullptr) file->remote_extent->Revoke();
    }
  };
  // On a thread of its own: the call-back thread must go on acknowledging
  // while opens are counted again (each a call, each under its shard).
  handlers.revoke_grants = [this](const std::vector<uint64_t>& grants) {
    client_quota_->Revoke(grants);  // each ignores the other's ids
    client_room_->Revoke(grants);
  };
  // (Grants need no word here: the MDS gives none to a client with no
  // stream, and frees an earlier stream's when a new one comes up.)
  handlers.reconnected = [this] { StartReopen(); };
  mds_->StartCallbacks(std::move(handlers));
  return Status::Ok();
}

namespace {

// This thread's operation began at this count of the client's call-back
// events (CacheScope); kNotBegun outside one: nothing is cached.
constexpr uint64_t kNotBegun = UINT64_MAX;
thread_local uint64_t t_begun = kNotBegun;

// FUSE_NOTIFY_INC_EPOCH (Linux 6.16, protocol 7.44): every name the kernel
// caches is looked up again before its next use. No payload, and unlike
// FUSE_NOTIFY_INVAL_ENTRY it takes no directory's lock, so a call-back
// never waits for an operation of this mount that waits for the MDS.
// libfuse 3.14 cannot send it; it is a bare header on /dev/fuse.
constexpr int32_t kNotifyIncEpoch = 8;

int IncrementEpoch(fuse_session* session) {
  struct {
    uint32_t len;
    int32_t error;
    uint64_t unique;
  } header{16, kNotifyIncEpoch, 0};
  const ssize_t n = write(fuse_session_fd(session), &header, sizeof(header));
  return n == static_cast<ssize_t>(sizeof(header)) ? 0 : -errno;
}

void Invalidate(fuse_session* session, uint64_t ino) {
  // Attributes and cached pages: another client changed the inode.
  const int err = fuse_lowlevel_notify_inval_inode(session, ino, 0, 0);
  if (err != 0 && err != -ENOENT) {
    Logger("fs")->warn("inode {}: kernel cache not dropped: {}", ino, strerror(-err));
  }
}

}  // namespace

CacheScope::CacheScope(const Filesystem& fs) : saved_(t_begun) { t_begun = fs.CacheBegin(); }
CacheScope::~CacheScope() { t_begun = saved_; }

bool Filesystem::SquashedRootCaller() const {
  if (mds_ == nullptr || !mds_->squashes_root()) return false;
  const client::MdsCaller* caller = client::CallerScope::Current();
  return caller != nullptr && caller->uid == 0;
}

Status Filesystem::CheckSquashedAccess(uint64_t ino, int mask) {
  return SquashedRootCaller() ? mds_->CheckAccess(ino, mask) : Status::Ok();
}

uint64_t Filesystem::CacheBegin() const {
  return mds_ != nullptr ? mds_->cache_log().Begin() : 0;
}

double Filesystem::AttrTimeout(uint64_t ino) {
  if (mds_ == nullptr) return config_.attr_timeout;
  if (t_begun == kNotBegun || !mds_->cache_log().MayCache(ino, t_begun)) return 0;
  {
    std::lock_guard lock(cached_mu_);
    cached_.insert(ino);
  }
  return config_.attr_timeout;
}

double Filesystem::EntryTimeout(uint64_t parent, uint64_t ino) {
  if (mds_ == nullptr) return config_.attr_timeout;
  if (!KernelDropsNames() || t_begun == kNotBegun ||
      !mds_->cache_log().MayCache(parent, t_begun) ||
      (ino != 0 && !mds_->cache_log().MayCache(ino, t_begun))) {
    return 0;
  }
  std::lock_guard lock(cached_mu_);
  cached_.insert(parent);
  return config_.attr_timeout;
}

bool Filesystem::KernelDropsNames() {
  int known = kernel_drops_names_.load(std::memory_order_acquire);
  if (known != 0) return known > 0;
  fuse_session* session = this->session();
  if (session == nullptr) return false;
  // Tried once, on a mount that caches no name yet: harmless.
  const int err = IncrementEpoch(session);
  known = err == 0 ? 1 : -1;
  kernel_drops_names_.store(known, std::memory_order_release);
  Logger("fs")->info("{}", known > 0 ? "the kernel drops names on call-backs "
                                       "(FUSE_NOTIFY_INC_EPOCH): names are cached"
                                     : "the kernel has no FUSE_NOTIFY_INC_EPOCH (Linux < 6.16): "
                                       "every name is looked up at the MDS");
  return known > 0;
}

void Filesystem::DropRevoked(const std::vector<uint64_t>& inodes,
                             const std::vector<uint64_t>& directories) {
  {
    std::lock_guard lock(cached_mu_);
    for (uint64_t ino : inodes) cached_.erase(ino);
    for (uint64_t ino : directories) cached_.erase(ino);
  }
  fuse_session* session = this->session();
  if (session == nullptr) return;
  for (uint64_t ino : inodes) Invalidate(session, ino);
  for (uint64_t ino : directories) Invalidate(session, ino);
  if (!directories.empty() && kernel_drops_names_.load() > 0) {
    if (int err = IncrementEpoch(session); err != 0) {
      Logger("fs")->warn("cached names not dropped: {}", strerror(-err));
    }
  }
}

void Filesystem::DropAllCached() {
  std::unordered_set<uint64_t> all;
  {
    std::lock_guard lock(cached_mu_);
    all.swap(cached_);
  }
  fuse_session* session = this->session();
  if (session == nullptr) return;
  for (uint64_t ino : all) Invalidate(session, ino);
  if (kernel_drops_names_.load() > 0) (void)IncrementEpoch(session);
}

void Filesystem::StartReopen() {
  std::lock_guard lock(reopen_mu_);
  if (reopen_running_) {
    reopen_again_ = true;  // the running pass goes once more
    return;
  }
  if (reopen_.joinable()) reopen_.join();  // a finished pass
  reopen_running_ = true;
  reopen_ = std::thread([this] {
    for (;;) {
      ReopenAtMds();
      std::lock_guard again_lock(reopen_mu_);
      if (!reopen_again_) {
        reopen_running_ = false;
        return;
      }
      reopen_again_ = false;
    }
  });
}

void Filesystem::ReopenAtMds() {
  // The MDS forgot this client's opens with its stream (or restarted): a
  // file removed meanwhile must still wait for their closes.
  for (const auto& file : open_.All()) {
    // Under its shard, as AcquireOpen: not one whose last close is being
    // queued (the MDS would count it open after it closed).
    OpenTable::Locked table = open_.Lock(file->ino);
    if (table.Find(file->ino) == nullptr) continue;
    Status opened = mds_->Reopen(file->ino);
    if (!opened.ok()) {
      Logger("fs")->warn("inode {}: open not counted again at the MDS: {}", file->ino,
                         opened.ToString());
    }
  }
}

Status Filesystem::AttachAddedOsts() {
  std::lock_guard<std::mutex> lock(ost_add_mu_);
  auto identities = ReadOstIdentities(*meta_);
  if (!identities.ok()) return identities.status();
  for (uint32_t index = osts_.size(); index < identities->size(); ++index) {
    const OstIdentity& id = (*identities)[index];
    if (!client::IsOssPath(id.path)) {
      return Status::Error(EINVAL, "OST " + std::to_string(index) + " (" + id.path +
                                       ") is not on an OSS: a client cannot reach it");
    }
    auto remote = client::ConnectRemoteOst(index, id.path, id.fs_uuid, id.ost_uuid,
                                           config_.oss_credentials, inline_budget_,
                                           /*epochs=*/nullptr);
    if (!remote.ok()) return remote.status();
    SFS_RETURN_IF_ERROR(PublishOst(std::move(remote).value(),
                                   SplitDescriptors(fd_limit_, index + 1, config_.ost_threads)));
    Logger("fs")->info("OST {} ({}), added since this client mounted, attached", index, id.path);
  }
  return Status::Ok();
}

bool Filesystem::IsClientLocalSetting(const std::string& name) {
  // What this mount's own connections and counters show.
  return name == kMetricsAddressName || name == kJobStatsName || name == kOstStatusName ||
         name == kOstCountKey;
}

}  // namespace sfs::fs
