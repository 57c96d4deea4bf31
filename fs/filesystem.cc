#include "fs/filesystem.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <chrono>
#include <thread>

#include "client/remote_ost.h"
#include "common/coarse_clock.h"
#include "common/log.h"
#include "common/private_dir.h"
#include "common/text.h"
#include "fs/fd_budget.h"
#include "fs/fuse_api.h"
#include "fs/io.h"
#include "fs/ost_attach.h"
#include "control/ost_df.h"
#include "fs/ost_status.h"
#include "nrs/epoch_data.h"
#include "fs/settings_keys.h"
#include "fs/version.h"
#include "jobstats/report.h"
#include "ost/local_service.h"
#include "ost/label.h"

namespace sfs::fs {
namespace {

constexpr int kMountLockWaitMs = 10000;

// Removes a destroyed file's metadata once all its objects are gone. If an
// OST fails the destroy, the orphan mark stays and the next mount retries.
class DestroyOp final : public MultiPartOp {
 public:
  DestroyOp(Filesystem* fs, uint64_t ino, std::function<void()> done)
      : fs_(fs), ino_(ino), done_(std::move(done)) {}
  layout::Layout layout;
  std::vector<std::shared_ptr<ost::ObjectHandle>> objects;

 private:
  void Finish(const Status& status) override {
    if (status.ok()) {
      Status purged = fs_->meta().Purge(ino_);
      if (!purged.ok()) Logger("fs")->error("purge of inode {} failed: {}", ino_, purged.ToString());
    } else {
      Logger("fs")->error("destroying objects of inode {} failed, kept as orphan: {}", ino_,
                          status.ToString());
    }
    done_();
  }
  Filesystem* const fs_;
  const uint64_t ino_;
  std::function<void()> done_;
};

Result<uint64_t> SettingNumber(meta::MetaStore& meta, const std::string& name) {
  auto text = meta.GetSetting(name);
  if (!text.ok()) return Status::Error(EIO, "metadata store lacks setting " + name);
  try {
    return static_cast<uint64_t>(std::stoull(*text));
  } catch (...) {
    return Status::Error(EIO, "setting " + name + " is not a number: " + *text);
  }
}

}  // namespace

Status CheckFormat(meta::MetaStore& store) {
  auto version = SettingNumber(store, kFormatVersionKey);
  if (!version.ok()) return version.status();
  if (*version != kFormatVersion) {
    return Status::Error(EINVAL, "metadata format " + std::to_string(*version) +
                                     " is not the supported " + std::to_string(kFormatVersion));
  }
  return Status::Ok();
}

namespace {

constexpr const char* kMdtNrsOff =
    "the metadata service's request scheduling is off (mounted with mdt_nrs=off)";

}  // namespace

Filesystem::MountLock::~MountLock() {
  if (fd >= 0) close(fd);  // releases the flock
}

Filesystem::Filesystem(const Config& config, nrs::PolicyRegistry registry)
    : config_(config), registry_(std::move(registry)) {}

Filesystem::~Filesystem() {
  // Its handlers use this object.
  if (mds_ != nullptr) mds_->StopCallbacks();
  {
    std::unique_lock lock(reopen_mu_);
    reopen_again_ = false;
  }
  if (reopen_.joinable()) reopen_.join();
  // Ops waiting for room are answered (and launched) while the OSTs serve.
  if (space_ != nullptr) space_->StopWaiter();
  if (client_room_ != nullptr) client_room_->StopAsker();
  // REQUIRES: no op in flight that a stuck call could still finish (the
  // daemon exits instead, see Quiesce).
  const bool quiet = Quiesce();
  SaveStillOpen(/*settled=*/quiet);
  monitor_.reset();  // it ticks the services
  if (!quiet) {
    // A service thread is stuck in a call into a hung OST (a mount that
    // failed after the OSTs were opened, with nothing in flight): it cannot
    // be joined, so the services are left to the process's end.
    Logger("fs")->warn("leaving service threads stuck on unresponsive OSTs");
    osts_.Abandon();
  }
  // The controls borrow the services (the automatic weights sample them on
  // their own thread), so they go first.
  placement_control_.reset();
  nrs_control_.reset();
  mdt_nrs_control_.reset();
  // Serves what it still holds (nothing after Quiesce) while the OSTs and
  // the store are there.
  mdt_.reset();
  // Services drain their queues (including destroys) before meta_ closes.
  osts_.Clear();
  Status synced = meta_ ? meta_->Sync() : Status::Ok();
  if (!synced.ok()) Logger("fs")->error("final sync of the metadata store: {}", synced.ToString());
}

void Filesystem::AwaitFirstSpaceSamples(std::chrono::nanoseconds patience) {
  // So that the first statfs after the mount already has figures; an OST
  // that does not answer this quickly is shown without (statfs never waits).
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (auto& service : osts_.All()) {
    service->RequestSpaceSample();
    while (!service->LastSpace().space.has_value() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
}

bool Filesystem::Quiesce() {
  // Only at shutdown. Calls waiting for an OST that never answered give up,
  // and throttled requests are released, so a stop never waits on a TBF rate
  // or a delay policy; requests queued on an unresponsive OST fail at once
  // (ost::Service::Tick). Services take no new space samples from here on.
  for (auto& late : late_osts_) late->Abandon();
  // Metadata requests a policy holds are served now (and counted in
  // in_flight_ until they are).
  if (mdt_ != nullptr) mdt_->Drain();
  for (auto& service : osts_.All()) service->Drain();
  // Whether what is left in flight can only be calls stuck on an OST that
  // stopped answering, which may never return: nothing queued anywhere, no
  // request in service on an OST that still answers, and some in service on
  // one that does not.
  auto only_stuck = [&] {
    bool stuck = false;
    for (auto& service : osts_.All()) {
      const ost::ServiceCounters counters = service->Counters();
      if (counters.queued > 0) return false;
      if (counters.active > 0 && counters.responsive) return false;
      stuck = stuck || (counters.active > 0 && !counters.responsive);
    }
    return stuck;
  };
  // Polling keeps the per-op cost to one atomic add.
  int stuck_ms = 0;
  for (int waited_ms = 0; in_flight_.load(std::memory_order_acquire) > 0; waited_ms += 5) {
    stuck_ms = only_stuck() ? stuck_ms + 5 : 0;
    if (stuck_ms >= 1000) return false;
    if (waited_ms > 0 && waited_ms % 10000 == 0) {
      Logger("fs")->warn("shutdown waits for {} operations still with the OSTs",
                         in_flight_.load());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // Nor may a service thread still be in a call (a space sample, a close):
  // it could not be joined. Such a call either ends (calls released above
  // end at once) or, on a hung disk, makes its OST unresponsive within
  // ost_timeout; then it is stuck.
  const auto deadline = std::chrono::steady_clock::now() + config_.ost_timeout +
                        ost::Monitor::IntervalFor(config_.ost_timeout) * 2;
  stuck_ms = 0;
  for (;;) {
    bool busy = false, stuck = false;
    for (auto& service : osts_.All()) {
      const ost::ServiceCounters counters = service->Counters();
      busy = busy || counters.oldest_in_service.count() > 0;
      stuck = stuck || (counters.oldest_in_service.count() > 0 && !counters.responsive);
    }
    if (!busy) return true;
    // Stuck for a second (not a call released a moment ago), or for longer
    // than a hung disk takes to be noticed.
    stuck_ms = stuck ? stuck_ms + 5 : 0;
    if (stuck_ms >= 1000 || std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void Filesystem::Abandon() {
  SaveStillOpen(/*settled=*/false);
  Status synced = meta_->Sync();
  if (!synced.ok()) Logger("fs")->error("final sync of the metadata store: {}", synced.ToString());
  std::string stuck;
  for (auto& service : osts_.All()) {
    if (!service->responsive()) stuck += (stuck.empty() ? "" : ", ") + std::to_string(service->index());
  }
  Logger("fs")->warn("exiting with {} operations still in service on unresponsive OSTs ({}); "
                     "their callers get an error from the kernel, nothing queued was started",
                     in_flight_.load(), stuck);
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& logger) { logger->flush(); });
}

void Filesystem::SaveStillOpen(bool settled) {
  // Files still open when the session ended (a signal, a lazy unmount) get
  // no release: their unsaved mtimes are stored here.
  const std::vector<std::shared_ptr<OpenFile>> still_open = open_.All();
  for (const auto& file : still_open) {
    Status saved = SaveTimes(*file);
    if (!saved.ok()) Logger("fs")->error("saving mtime of inode {}: {}", file->ino, saved.ToString());
    if (settled && file->writing_marked.load()) (void)meta_->MarkWriting(file->ino, false);
  }
}

Status Filesystem::OpenStoreAndOsts() {
  // A metadata directory others can enter would show them every name and
  // xattr (the WAL is plain bytes): repaired, with a log line.
  auto made_private = MakePrivate(config_.meta_dir, "metadata directory " + config_.meta_dir);
  if (!made_private.ok()) return made_private.status();
  // One daemon per store. A daemon that was just unmounted may still be
  // closing its store (fusermount returns when the kernel lets go, not when
  // the daemon exits), so `umount; mount` waits for it a little rather than
  // failing on RocksDB's lock.
  const std::string lock_path = config_.meta_dir + "/stripefs.lock";
  mount_lock_.fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (mount_lock_.fd < 0) return ErrnoStatus(errno, "open " + lock_path);
  for (int waited_ms = 0; flock(mount_lock_.fd, LOCK_EX | LOCK_NB) != 0; waited_ms += 50) {
    if (errno != EWOULDBLOCK) return ErrnoStatus(errno, "lock " + lock_path);
    if (waited_ms >= kMountLockWaitMs) {
      return Status::Error(EBUSY, config_.meta_dir + " is in use by another stripefs daemon");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // RocksDB's share does not depend on the OST count, which the store holds.
  const uint64_t fd_limit = RaiseDescriptorLimit();
  fd_limit_ = fd_limit;
  meta::StoreOptions store_options;
  store_options.max_open_files = SplitDescriptors(fd_limit, 1, config_.ost_threads).rocksdb_files;
  auto meta = meta::MetaStore::Open(config_.meta_dir, store_options);
  if (!meta.ok()) return meta.status();
  meta_ = std::move(meta).value();
  meta::MetaStore& store = *meta_;

  SFS_RETURN_IF_ERROR(CheckFormat(store));
  auto read_identities = ReadOstIdentities(store);
  if (!read_identities.ok()) return read_identities.status();
  const std::vector<OstIdentity>& identities = *read_identities;

  const FdBudget fds = SplitDescriptors(fd_limit, identities.size(), config_.ost_threads);
  Logger("fs")->info("{} file descriptors: up to {} open objects per OST, {} metadata table files",
                     fds.limit, fds.objects_per_ost, fds.rocksdb_files);
  // However long an OST takes, the mount waits at most ost_timeout for it.
  // OSTs on OSSs are reached over the network (client/remote_ost.h); the
  // local ones are opened here, each on a thread of its own.
  std::vector<OstIdentity> local_identities;
  for (const OstIdentity& id : identities) {
    if (!client::IsOssPath(id.path)) local_identities.push_back(id);
  }
  OpenedOsts opened = OpenOsts(local_identities, config_.ost_timeout);
  size_t next_local = 0;
  late_osts_ = std::move(opened.late);
  inline_budget_ = std::make_shared<std::atomic<int>>(config_.inline_ios);
  epochs_ = std::make_shared<nrs::SharedEpochHub>(nrs::CombineEpochData,
                                                      control::NrsControl::kDefaultEhTimeout);
  for (uint32_t index = 0; index < identities.size(); ++index) {
    const OstIdentity& id = identities[index];
    if (client::IsOssPath(id.path)) {
      auto remote = client::ConnectRemoteOst(index, id.path, id.fs_uuid, id.ost_uuid,
                                             config_.oss_credentials, inline_budget_,
                                             epochs_);
      if (!remote.ok()) return remote.status();
      SFS_RETURN_IF_ERROR(osts_.Add(std::move(remote).value()));
      continue;
    }
    auto& backend = opened.backends[next_local++];
    if (!backend.ok()) return backend.status();
    ost::ServiceOptions options;
    options.index = index;
    options.threads = config_.ost_threads;
    options.open_objects = fds.objects_per_ost;
    options.timeout = config_.ost_timeout;
    options.inline_budget = inline_budget_;
    options.epochs = epochs_;
    SFS_RETURN_IF_ERROR(
        osts_.Add(std::make_unique<ost::LocalService>(options, std::move(backend).value())));
  }

  return Status::Ok();
}

Result<std::unique_ptr<Filesystem>> Filesystem::Open(const Config& config,
                                                     nrs::PolicyRegistry registry) {
  std::unique_ptr<Filesystem> fs(new Filesystem(config, std::move(registry)));
  // The store and the OSTs: here, or behind the MDS and the OSSs.
  SFS_RETURN_IF_ERROR(config.mds.empty() ? fs->OpenStoreAndOsts() : fs->ConnectClient());
  SFS_RETURN_IF_ERROR(fs->LoadRunSettings());

  // Space figures first: statfs and automatic weights (loaded below, and
  // run at once if stored on) read these samples; a missing one counts as a
  // failed OST.
  fs->AwaitFirstSpaceSamples(std::min<std::chrono::nanoseconds>(config.ost_timeout,
                                                                 std::chrono::seconds(1)));
  std::vector<ost::Service*> services;
  for (auto& service : fs->osts_.All()) services.push_back(service.get());
  // A client mount's NRS settings are the MDS's, which sends them to the
  // OSSs and schedules the metadata requests of every client.
  if (!fs->is_client()) {
    fs->nrs_control_ = std::make_unique<control::NrsControl>(
        control::NrsControl::Scope::kOsts, fs->meta_.get(),
        std::vector<nrs::Target*>(services.begin(), services.end()), &fs->registry_,
        fs->epochs_.get());
    if (Status loaded = fs->nrs_control_->Load(); !loaded.ok()) return loaded;
  }
  if (config.mdt_nrs && !fs->is_client()) {
    mdt::ServiceOptions mdt_options;
    mdt_options.max_active = config.mdt_active;
    mdt_options.epoch_length = control::NrsControl::kDefaultEpochLength;
    fs->mdt_ = std::make_unique<mdt::Service>(mdt_options);
    fs->mdt_nrs_control_ = std::make_unique<control::NrsControl>(
        control::NrsControl::Scope::kMdt, fs->meta_.get(), std::vector<nrs::Target*>{fs->mdt_.get()},
        &fs->registry_, /*epochs=*/nullptr);
    if (Status loaded = fs->mdt_nrs_control_->Load(); !loaded.ok()) return loaded;
  }
  fs->placement_control_ = std::make_unique<control::PlacementControl>(fs->meta_.get(), services);
  if (Status loaded = fs->placement_control_->Load(); !loaded.ok()) return loaded;
  if (fs->is_client()) {
    fs->quota_gate_ = fs->client_quota_.get();  // the limits are the MDS's
  } else {
    fs->quota_ = std::make_unique<control::QuotaControl>(fs->meta_.get(), fs->osts_.size());
    if (Status loaded = fs->quota_->Load(); !loaded.ok()) return loaded;
    fs->quota_gate_ = fs->quota_.get();
  }
  if (fs->is_client()) {
    fs->space_gate_ = fs->client_room_.get();  // the MDS follows the OSTs' room
  } else {
    fs->space_ = std::make_unique<control::SpaceGrants>(
        [osts = &fs->osts_](uint32_t ost) { return osts->at(ost).LastSpace(); },
        [osts = &fs->osts_](uint32_t ost) { osts->at(ost).RequestSpaceSample(); },
        [fs = fs.get()](uint32_t ost) {
          return fs->osts_.at(ost).DestroysInFlight() + fs->RemovedNotDestroyed();
        });
    fs->space_gate_ = fs->space_.get();
  }
  // An OST that stops answering gets no new files until it answers again;
  // what its truncates, punches and destroys free is granted again at once.
  for (auto& service : fs->osts_.All()) {
    service->SetSpaceFreedListener(
        [space = fs->space_gate_](uint32_t index, uint64_t bytes, nrs::TimePoint from) {
          space->Freed(index, bytes, from);
        });
    service->SetHealthListener([control = fs->placement_control_.get()](uint32_t index,
                                                                       bool responsive) {
      control->SetResponsive(index, responsive);
    });
  }
  fs->monitor_ =
      std::make_unique<ost::Monitor>(services, ost::Monitor::IntervalFor(config.ost_timeout),
                                     fs->epochs_);

  // Settling and reclaiming are the MDS's: its own mount of the store
  // does them when it starts.
  if (fs->is_client()) return fs;
  // Before the orphans: an orphan's objects written just before the stop
  // must be recorded for its destroy to free them.
  if (Status settled = fs->SettleWrites(); !settled.ok()) return settled;
  if (config.reclaim_orphans) SFS_RETURN_IF_ERROR(fs->ReclaimOrphans());
  return fs;
}

Status Filesystem::ReclaimOrphans() {
  auto orphans = meta_->Orphans();
  if (!orphans.ok()) return orphans.status();
  if (!orphans->empty()) {
    Logger("fs")->info("reclaiming {} orphaned files left by an earlier run", orphans->size());
  }
  // One open now (a client of an MDS counted it again) goes at its last
  // close instead.
  for (uint64_t ino : *orphans) ForgetRemoved(ino);
  return Status::Ok();
}

Status Filesystem::LoadRunSettings() {
  meta::MetaStore& store = *meta_;
  auto settings = std::make_shared<Settings>();
  auto count = SettingNumber(store, kStripeCountKey);
  auto size = SettingNumber(store, kStripeSizeKey);
  if (!count.ok() || !size.ok()) return Status::Error(EIO, "metadata store lacks the default layout");
  settings->default_layout.stripe_count = static_cast<uint32_t>(*count);
  settings->default_layout.stripe_size = *size;
  if (auto var = store.GetSetting(kJobidVarKey); var.ok()) settings->jobid.var = *var;
  if (auto name = store.GetSetting(kJobidNameKey); name.ok()) settings->jobid.name = *name;
  settings_.store(std::move(settings));
  int64_t cleanup_seconds = kDefaultJobCleanupSeconds;
  if (store.GetSetting(kJobCleanupKey).ok()) {
    auto seconds = SettingNumber(store, kJobCleanupKey);
    if (!seconds.ok() || *seconds > static_cast<uint64_t>(kMaxJobCleanupSeconds)) {
      return Status::Error(EIO, "the stored job_cleanup_interval is unreadable");
    }
    cleanup_seconds = static_cast<int64_t>(*seconds);
  }
  ApplyJobCleanup(cleanup_seconds);

  return Status::Ok();
}

void Filesystem::ReloadJobidSettings() {
  std::lock_guard<std::mutex> lock(settings_mu_);
  auto next = std::make_shared<Settings>(*settings());
  if (auto var = meta_->GetSetting(kJobidVarKey); var.ok()) next->jobid.var = *var;
  if (auto name = meta_->GetSetting(kJobidNameKey); name.ok()) next->jobid.name = *name;
  settings_.store(std::move(next));
  jobids_.Clear();
}

Result<layout::Layout> Filesystem::NewLayout(const layout::PlacementContext& context,
                                             const layout::LayoutSpec& spec) {
  const auto settings = this->settings();
  const layout::LayoutRequest& fallback = settings->default_layout;
  uint32_t count = fallback.stripe_count;
  if (spec.stripe_count == -1) count = layout::kAllStripes;
  if (spec.stripe_count > 0) count = static_cast<uint32_t>(spec.stripe_count);
  layout::PlacementContext where = context;
  if (!spec.osts.empty()) {
    where.osts = spec.osts;
    if (spec.stripe_count == 0) count = static_cast<uint32_t>(spec.osts.size());
  }
  auto choice = placement_control_->placement().Choose(count, where);
  if (!choice.ok()) return choice.status();
  if (choice->fallback_pool_missing) {
    Logger("layout")->warn("pool '{}' of a directory layout no longer exists; using all OSTs",
                           where.fallback_pool);
  }
  if (choice->short_count() && count != layout::kAllStripes) {
    Logger("layout")->info("pool '{}' has {} usable OSTs: file gets {} of the {} stripes asked",
                           choice->pool, choice->osts.size(), choice->osts.size(), count);
  }
  auto first_id = meta_->AllocateObjectIds(static_cast<uint32_t>(choice->osts.size()));
  if (!first_id.ok()) return first_id.status();
  layout::Layout layout;
  layout.stripe_size = spec.stripe_size != 0 ? spec.stripe_size : fallback.stripe_size;
  layout.pool = choice->pool;
  for (size_t i = 0; i < choice->osts.size(); ++i) {
    layout.objects.push_back({choice->osts[i], *first_id + i});
  }
  return layout;
}

std::vector<std::shared_ptr<ost::ObjectHandle>> Filesystem::Handles(const layout::Layout& layout) {
  std::vector<std::shared_ptr<ost::ObjectHandle>> handles;
  handles.reserve(layout.objects.size());
  for (const auto& object : layout.objects) {
    handles.push_back(osts_.at(object.ost).Object(object.object_id));
  }
  return handles;
}

void Filesystem::CloseObjects(const layout::Layout& layout) {
  for (const auto& object : layout.objects) osts_.at(object.ost).CloseObject(object.object_id);
}

Result<layout::Layout> Filesystem::LoadLayout(uint64_t ino) {
  auto blob = meta_->GetLayout(ino);
  if (!blob.ok()) return blob.status();
  return CheckLayout(ino, *blob);
}

Result<layout::Layout> Filesystem::CheckLayout(uint64_t ino, const std::string& blob) {
  auto decoded = layout::Decode(blob);
  if (!decoded.ok()) return decoded.status();
  for (const auto& object : decoded->objects) {
    // An OST added since this client mounted: attached now.
    if (object.ost >= osts_.size() && mds_ != nullptr) {
      Status attached = AttachAddedOsts();
      if (!attached.ok()) Logger("fs")->warn("OSTs added at the MDS: {}", attached.ToString());
    }
    if (object.ost >= osts_.size()) {
      return Status::Error(EIO, "inode " + std::to_string(ino) + " names OST " +
                                    std::to_string(object.ost) + ", which does not exist");
    }
  }
  return decoded;
}

Result<Filesystem::Opened> Filesystem::AcquireOpen(uint64_t ino,
                                                   const client::MdsClient::Opened* known,
                                                   bool removed_ok, int flags) {
  // The inode is read and the file inserted under one hold of its shard,
  // so an open cannot interleave with an unlink's ForgetRemoved (which
  // checks the table under the same shard) or miss a truncate's size
  // (TruncateOp updates the open file it finds after storing the size).
  // Reading the store under the shard delays only the opens, closes and
  // unlinks of the inodes of that shard, not every lookup.
  OpenTable::Locked table = open_.Lock(ino);
  if (std::shared_ptr<OpenFile> open = table.Find(ino)) {
    if (known == nullptr && SquashedRootCaller()) {
      // Open here already, maybe by a user who may: the MDS checks this
      // caller (it counts this client's open once whatever it is told).
      auto checked = mds_->Open(ino, flags);
      if (!checked.ok()) return checked.status();
    }
    open->opens++;
    return Opened{std::move(open)};
  }
  if (table.Destroying(ino)) return Status::Error(ENOENT, "file is being deleted");
  Result<meta::Inode> inode = Status::Error(ENOENT, "");
  Result<layout::Layout> layout = Status::Error(ENOENT, "");
  if (mds_ != nullptr) {
    // The MDS counts the open (a removed file stays until every client
    // closed it) and answers with what the open needs, in one call.
    auto opened =
        known != nullptr ? Result<client::MdsClient::Opened>(*known) : mds_->Open(ino, flags);
    if (!opened.ok()) return opened.status();
    inode = opened->inode;
    layout = CheckLayout(ino, opened->layout);
    if (!layout.ok()) {
      (void)mds_->Close(ino);
      return layout.status();
    }
  } else {
    inode = meta_->GetInode(ino);
    if (!inode.ok()) return inode.status();
    if (inode->nlink == 0 && !removed_ok) return Status::Error(ENOENT, "file was deleted");
    layout = LoadLayout(ino);
    if (!layout.ok()) return layout.status();
  }
  auto file = std::make_shared<OpenFile>();
  file->ino = ino;
  file->layout = std::move(layout).value();
  file->objects = Handles(file->layout);
  const uint32_t stripes = file->layout.stripe_count();
  file->created = std::make_unique<std::atomic<bool>[]>(stripes);
  file->allocated = std::make_unique<std::atomic<uint64_t>[]>(stripes);
  for (uint32_t i = 0; i < stripes; ++i) {
    file->created[i].store(file->layout.objects[i].created);
    file->allocated[i].store(file->layout.objects[i].allocated);
  }
  file->stored = file->layout;
  file->size.store(inode->size);
  file->setid.store(HasSetId(inode->mode));
  file->uid.store(inode->uid);
  file->gid.store(inode->gid);
  file->projid.store(inode->projid);
  file->opens = 1;
  // The managers' only use of time is the 10 s lease of a cached credit,
  // and an extent credit reads the clock twice per read or write: the
  // coarse clock (common/coarse_clock.h) is enough and cheaper.
  if (config_.extent_credits) {
    file->extents = std::make_unique<resource::SharedCreditManager>(
        resource::NewExtentType(), resource::Tunables{}, CoarseSteadyNow);
    if (mds_ != nullptr) {
      file->remote_extent = std::make_shared<client::RemoteExtent>(
          [mds = mds_, ino](bool write) { return mds->ExtentGet(ino, write); });
    }
  }
  table.Insert(ino, file);
  return Opened{std::move(file)};
}

void Filesystem::InvalidateAttrs(uint64_t ino) {
  fuse_session* session = session_.load();
  if (session == nullptr) return;
  // A negative offset: attributes only, no page of the file is touched.
  const int err = fuse_lowlevel_notify_inval_inode(session, ino, -1, 0);
  // ENOENT: the kernel holds nothing of the inode, so nothing is stale.
  if (err != 0 && err != -ENOENT) {
    Logger("fs")->warn("attributes of inode {} not invalidated: {}", ino, strerror(-err));
  }
}

void Filesystem::OpenDir(uint64_t ino) {
  std::lock_guard<std::mutex> lock(dirs_mu_);
  open_dirs_[ino].opens++;
  open_dir_count_.store(open_dirs_.size(), std::memory_order_relaxed);
}

void Filesystem::ReleaseDir(uint64_t ino) {
  std::lock_guard<std::mutex> lock(dirs_mu_);
  auto it = open_dirs_.find(ino);
  if (it == open_dirs_.end() || --it->second.opens > 0) return;
  open_dirs_.erase(it);
  open_dir_count_.store(open_dirs_.size(), std::memory_order_relaxed);
}

std::optional<meta::Inode> Filesystem::OpenDirAt(uint64_t parent, const std::string& name) {
  if (open_dir_count_.load(std::memory_order_relaxed) == 0) return std::nullopt;
  auto inode = meta_->Lookup(parent, name);
  if (!inode.ok() || !S_ISDIR(inode->mode)) return std::nullopt;
  std::lock_guard<std::mutex> lock(dirs_mu_);
  if (open_dirs_.count(inode->ino) == 0) return std::nullopt;
  return std::move(inode).value();
}

void Filesystem::DirRemoved(meta::Inode dir) {
  std::lock_guard<std::mutex> lock(dirs_mu_);
  auto it = open_dirs_.find(dir.ino);
  if (it == open_dirs_.end()) return;  // released meanwhile
  dir.nlink = 0;
  dir.ctime = meta::Timestamp::Now();
  it->second.removed = std::move(dir);
}

Result<meta::Inode> Filesystem::RemovedDir(uint64_t ino) {
  std::lock_guard<std::mutex> lock(dirs_mu_);
  auto it = open_dirs_.find(ino);
  if (it == open_dirs_.end() || !it->second.removed.has_value()) {
    return Status::Error(ENOENT, "inode " + std::to_string(ino) + " does not exist");
  }
  return *it->second.removed;
}

uint64_t Filesystem::FileSizeLimit(const layout::Layout& layout, bool* complete) {
  std::vector<uint64_t> limits(layout.stripe_count(), ost::kNoObjectLimit);
  bool all_known = true;
  for (uint32_t i = 0; i < layout.stripe_count(); ++i) {
    const uint32_t index = layout.objects[i].ost;
    if (index >= osts_.size()) continue;
    const ost::SpaceSample sample = osts_[index].LastSpace();
    if (sample.space.has_value()) limits[i] = sample.space->max_object_size;
    all_known = all_known && limits[i] != ost::kNoObjectLimit;
  }
  if (complete != nullptr) *complete = all_known;
  return layout::MaxFileSize(layout, limits);
}

uint64_t Filesystem::FileSizeLimit(OpenFile& file) {
  const uint64_t known = file.size_limit.load(std::memory_order_relaxed);
  if (known != 0) return known;
  bool complete = false;
  const uint64_t limit = FileSizeLimit(file.layout, &complete);
  if (complete) file.size_limit.store(limit, std::memory_order_relaxed);
  return limit;
}

std::shared_ptr<OpenFile> Filesystem::FindOpen(uint64_t ino) { return open_.Find(ino); }

void Filesystem::ReleaseOpen(const std::shared_ptr<OpenFile>& file) {
  bool removed = false;
  {
    OpenTable::Locked table = open_.Lock(file->ino);
    if (--file->opens > 0) return;
    // Stored before the file leaves the table, under the shard AcquireOpen
    // reads the store under: an open right after this close loads what it
    // stored, and cannot later store back the older state.
    bool unsaved;
    {
      std::lock_guard<std::mutex> times_lock(file->times_mu);
      unsaved = file->unsaved_mtime.has_value();
    }
    Status saved = SaveTimes(*file);
    if (!saved.ok()) {
      Logger("fs")->error("saving mtime of inode {} at close: {}", file->ino, saved.ToString());
    } else if (unsaved) {
      Logger("fs")->debug("inode {}: mtime of in-place writes stored at its last release",
                          file->ino);
    }
    // Every op of the file has replied (the kernel releases a file after
    // its last write returned): nothing is in flight any more.
    if (file->writing_marked.load()) {
      Status cleared = meta_->MarkWriting(file->ino, false);
      if (!cleared.ok()) {
        Logger("fs")->warn("inode {}: writing mark not erased (the next mount settles it): {}",
                           file->ino, cleared.ToString());
      }
    }
    // Its last name went while it was open (ForgetRemoved marked it): it
    // goes now. One that went after this close is destroyed by the
    // ForgetRemoved of its unlink or rename, which always follows the
    // store's commit and finds it closed: no read of the store here.
    removed = table.Removed(file->ino);
    table.Erase(file->ino);
    // This client's last close: the MDS destroys the file once told if it
    // was removed and no other client has it open. Told after the reply
    // (nothing the caller sees depends on it), but queued under the shard:
    // an open that comes next finds it queued and takes its place
    // (MdsClient::Open), instead of being counted before it and undone by it.
    if (mds_ != nullptr) mds_->CloseSoon(file->ino);
  }
  if (file->touched.load(std::memory_order_relaxed)) CloseObjects(file->layout);
  if (mds_ != nullptr) return;
  if (removed) ForgetRemoved(file->ino);
}

namespace {
bool Before(const meta::Timestamp& a, const meta::Timestamp& b) {
  return a.sec < b.sec || (a.sec == b.sec && a.nsec < b.nsec);
}
}  // namespace

void Filesystem::OverlayOpen(meta::Inode* inode) {
  std::shared_ptr<OpenFile> file = FindOpen(inode->ino);
  if (!file) return;
  uint64_t allocated = 0;
  for (uint32_t i = 0; i < file->layout.stripe_count(); ++i) {
    allocated += file->allocated[i].load(std::memory_order_relaxed);
  }
  inode->allocated = allocated;
  std::lock_guard<std::mutex> lock(file->times_mu);
  if (!file->unsaved_mtime.has_value()) return;
  inode->mtime = *file->unsaved_mtime;
  // A later setxattr, link or rename stored a newer ctime: keep it.
  if (Before(inode->ctime, *file->unsaved_mtime)) inode->ctime = *file->unsaved_mtime;
}

Result<meta::Inode> Filesystem::StoreAttr(uint64_t ino, meta::AttrChange change) {
  Result<meta::Inode> stored = Status::Error(EIO, "unset");
  if (std::shared_ptr<OpenFile> file = FindOpen(ino)) {
    // Held across the store write so a write finishing meanwhile cannot
    // have its newer mtime cleared unstored.
    std::lock_guard<std::mutex> lock(file->times_mu);
    if (file->unsaved_mtime.has_value() && !change.mtime.has_value() && !change.size.has_value()) {
      change.mtime = file->unsaved_mtime;
    }
    stored = meta_->SetAttr(ino, change);
    if (stored.ok()) file->unsaved_mtime.reset();
    // A truncate or preallocation changed the objects' allocation.
    if (stored.ok()) SaveAllocation(*file);
  } else {
    stored = meta_->SetAttr(ino, change);
  }
  if (!stored.ok()) return stored;
  if (std::shared_ptr<OpenFile> now_open = FindOpen(ino)) {
    if (change.size.has_value()) now_open->size.store(stored->size);
    now_open->setid.store(HasSetId(stored->mode));
    now_open->uid.store(stored->uid);
    now_open->gid.store(stored->gid);
  }
  return stored;
}

Status Filesystem::SaveObjects(OpenFile& file) {
  layout::Layout next = file.stored;
  uint64_t allocated = 0;
  for (uint32_t i = 0; i < next.stripe_count(); ++i) {
    next.objects[i].created = file.created[i].load();
    next.objects[i].allocated = file.allocated[i].load(std::memory_order_relaxed);
    allocated += next.objects[i].allocated;
  }
  if (next == file.stored) return Status::Ok();
  SFS_RETURN_IF_ERROR(meta_->PutLayout(file.ino, layout::Encode(next), allocated));
  file.stored = std::move(next);
  return Status::Ok();
}

void Filesystem::SaveAllocation(OpenFile& file) {
  Status saved = SaveObjects(file);
  if (!saved.ok()) {
    Logger("fs")->warn("allocation of inode {} not stored: {}", file.ino, saved.ToString());
  }
}

Status Filesystem::SaveTimes(OpenFile& file) {
  // Held across the store write so a newer write's mtime cannot be
  // overwritten by this older one.
  std::lock_guard<std::mutex> lock(file.times_mu);
  SaveAllocation(file);
  if (!file.unsaved_mtime.has_value()) return Status::Ok();
  meta::AttrChange change;
  change.mtime = *file.unsaved_mtime;
  auto stored = meta_->SetAttr(file.ino, change);
  if (!stored.ok()) return stored.status();
  file.unsaved_mtime.reset();
  return Status::Ok();
}

Status Filesystem::MarkWriting(OpenFile& file) {
  if (file.writing_marked.load(std::memory_order_acquire)) return Status::Ok();
  // times_mu orders concurrent first writes: none starts before the mark
  // is stored.
  std::lock_guard<std::mutex> lock(file.times_mu);
  if (file.writing_marked.load(std::memory_order_relaxed)) return Status::Ok();
  SFS_RETURN_IF_ERROR(meta_->MarkWriting(file.ino, true));
  file.writing_marked.store(true, std::memory_order_release);
  return Status::Ok();
}

void Filesystem::ForgetRemoved(uint64_t ino) {
  if (mds_ != nullptr) {
    // The MDS knows every client's opens: it destroys the file now or at
    // the last close.
    Status told = mds_->ForgetRemoved(ino);
    if (!told.ok()) Logger("fs")->warn("inode {}: removal not told to the MDS (fsck finds it): {}", ino, told.ToString());
    return;
  }
  {
    OpenTable::Locked table = open_.Lock(ino);
    if (table.IsOpen(ino)) {
      table.MarkRemoved(ino);
      return;  // the last close destroys it
    }
    if (!table.BeginDestroy(ino)) return;
  }
  DestroyObjects(ino);
  // Counted until its destroys are queued, where the OSTs count them.
  open_.Lock(ino).UnmarkRemoved(ino);
}

size_t Filesystem::RemovedNotDestroyed() { return open_.removed(); }

Result<meta::Removed> Filesystem::Unlink(uint64_t parent, const std::string& name) {
  // The inode's shard is taken in the store's check, under the store's
  // lock, and held until its commit has landed, so that no open can take
  // the inode between the check and the purge. The lock order is the
  // shard's first (an open reads the store under it), so here it is only
  // tried: if another thread holds the shard this moment, the file is not
  // purged at once and goes the orphan way (ForgetRemoved), which checks
  // again. Opens of that shard's inodes wait one commit; nothing else does.
  if (mds_ != nullptr) return mds_->Unlink(parent, name);
  std::optional<OpenTable::Locked> table;
  auto removed = meta_->Unlink(parent, name, [&](uint64_t ino, const std::string& blob) {
    table = open_.TryLock(ino);
    if (!table.has_value()) return false;
    if (table->IsOpen(ino) || table->Destroying(ino)) return false;
      if (blob.empty()) return true;  // no layout: no objects
    auto decoded = layout::Decode(blob);
    if (!decoded.ok()) return false;  // the orphan path logs and decides
    for (const auto& object : decoded->objects) {
      if (object.created) return false;
    }
    return true;
  });
  table.reset();
  if (removed.ok() && removed->orphaned) ForgetRemoved(removed->ino);
  return removed;
}

void Filesystem::DestroyObjects(uint64_t ino) {
  auto finished = [this, ino] { open_.Lock(ino).EndDestroy(ino); };
  auto decoded = LoadLayout(ino);
  if (!decoded.ok()) {
    // No objects to remove (or an unreadable layout): drop the metadata.
    Logger("fs")->warn("inode {} has no usable layout ({}); purging metadata only", ino,
                       decoded.status().ToString());
    Status purged = meta_->Purge(ino);
    if (!purged.ok()) Logger("fs")->error("purge of inode {}: {}", ino, purged.ToString());
    finished();
    return;
  }
  auto* op = new DestroyOp(this, ino, finished);
  op->layout = std::move(decoded).value();
  op->objects = Handles(op->layout);
  nrs::RequestInfo who;  // a destroy is the filesystem's own work: uid 0
  who.jobid = std::make_shared<const std::string>("stripefs.destroy");
  auto parts = EveryStripe(Target{&op->layout, &op->objects}, nrs::Op::kDestroy, 0, who, op);
  // An object the layout does not record as created was never written, so
  // there is nothing to remove (an empty file, the usual mdtest case, then
  // costs no OST request: the metadata is purged here). An object written
  // just before a crash, before its mark was stored, was recorded by the
  // mount (SettleWrites) before any destroy.
  std::erase_if(parts, [&op](const std::unique_ptr<ost::IoRequest>& part) {
    return !op->layout.objects[part->tag].created;
  });
  op->Launch(*this, std::move(parts));
}

bool Filesystem::IsSettingName(const std::string& name) {
  return name == kJobidVarKey || name == kJobidNameKey || name == kOstStatusName ||
         name == kOstDfName || name == kJobStatsName || name == kJobCleanupKey ||
         name == kMetricsAddressName || name == kOstAddName || name == kOstCountKey ||
         control::NrsControl::Handles(control::NrsControl::Scope::kOsts, name) ||
         control::NrsControl::Handles(control::NrsControl::Scope::kMdt, name) || control::PlacementControl::Handles(name) ||
         control::QuotaControl::Handles(name);
}

Status Filesystem::RemoveSetting(const std::string& name, uint32_t uid) {
  if (mds_ != nullptr && !IsClientLocalSetting(name)) {
    return mds_->RemoveFsSetting({uid, 0, 0, ""}, name);
  }
  if (control::PlacementControl::Handles(name)) return placement_control_->Remove(name);
  if (control::QuotaControl::Handles(name)) return quota_->Remove(name);
  return Status::Error(EINVAL, "setting " + name + " cannot be removed");
}

Result<std::string> Filesystem::GetSetting(const std::string& name) {
  if (mds_ != nullptr && !IsClientLocalSetting(name)) return mds_->GetFsSetting(name);
  if (name == kJobidVarKey) return settings()->jobid.var;
  if (name == kJobidNameKey) return settings()->jobid.name;
  if (name == kOstStatusName) {
    std::vector<ost::Service*> services;
    for (auto& service : osts_.All()) services.push_back(service.get());
    return FormatOstStatus(services, config_.ost_timeout, nrs::Clock::now());
  }
  if (name == kOstDfName) return OstDfReport();
  if (name == kOstCountKey) return std::to_string(osts_.size());
  if (name == kOstAddName) {
    return Status::Error(ENODATA, "ost_add is write-only; ost_count and ost_df show the OSTs");
  }
  if (name == kJobStatsName) return JobStatsReport();
  if (name == kMetricsAddressName) {
    if (metrics_address_.empty()) {
      return Status::Error(ENODATA, "no metrics server: mount with -o metrics=ADDRESS:PORT");
    }
    return metrics_address_;
  }
  if (name == kJobCleanupKey) return std::to_string(meta_job_stats_.cleanup_interval().count());
  if (control::NrsControl::Handles(control::NrsControl::Scope::kOsts, name)) return nrs_control_->Get(name);
  if (control::NrsControl::Handles(control::NrsControl::Scope::kMdt, name)) {
    if (mdt_nrs_control_ == nullptr) return Status::Error(ENODATA, kMdtNrsOff);
    return mdt_nrs_control_->Get(name);
  }
  if (control::PlacementControl::Handles(name)) return placement_control_->Get(name);
  if (control::QuotaControl::Handles(name)) return quota_->Get(name);
  return Status::Error(ENODATA, "no setting " + name);
}

bool Filesystem::OstActive(uint32_t ost) const { return placement_control_->Active(ost); }

std::vector<double> Filesystem::EffectiveWeights() const {
  return placement_control_->placement().EffectiveWeights();
}

std::string Filesystem::OstDfReport() {
  const std::vector<double> weights = EffectiveWeights();
  std::vector<control::OstDf> rows;
  for (auto& service : osts_.All()) {
    control::OstDf row;
    row.index = service->index();
    row.space = service->LastSpace().space;
    row.weight = row.index < weights.size() ? weights[row.index] : 0;
    row.state = !service->Counters().responsive             ? "unresponsive"
                : service->read_only()                      ? "read-only"
                : !placement_control_->Active(row.index) ? "inactive"
                                                            : "ok";
    row.path = service->backend().Describe();
    rows.push_back(std::move(row));
  }
  return control::FormatOstDf(rows);
}

std::string Filesystem::JobStatsReport() {
  const jobstats::TimePoint now = jobstats::Clock::now();
  const auto wall_now = std::chrono::system_clock::now();
  std::vector<jobstats::TargetJobs> targets;
  targets.push_back({"mdt", meta_job_stats_.Snapshot(now)});
  for (auto& service : osts_.All()) {
    targets.push_back({"ost" + std::to_string(service->index()), service->job_stats().Snapshot(now)});
  }
  // An extended attribute's value holds at most 64 KiB (XATTR_SIZE_MAX).
  return jobstats::FormatYaml(targets, now, wall_now, 65536);
}

Status Filesystem::SetJobStatsSetting(const std::string& name, const std::string& value) {
  if (name == kJobStatsName) {
    if (value != "clear") {
      return Status::Error(EINVAL, "job_stats can only be written 'clear', not '" +
                                       Printable(value) + "'");
    }
    meta_job_stats_.Clear();
    for (auto& service : osts_.All()) service->job_stats().Clear();
    return Status::Ok();
  }
  uint64_t seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
      seconds > static_cast<uint64_t>(kMaxJobCleanupSeconds)) {
    return Status::Error(EINVAL, fmt::format("job_cleanup_interval must be whole seconds from 0 "
                                             "(never) to {}, not '{}'",
                                             kMaxJobCleanupSeconds, Printable(value)));
  }
  std::lock_guard<std::mutex> lock(settings_mu_);
  Status stored = meta_->PutSetting(name, std::to_string(seconds));
  if (!stored.ok()) return stored;
  ApplyJobCleanup(static_cast<int64_t>(seconds));
  return Status::Ok();
}

void Filesystem::ApplyJobCleanup(int64_t seconds) {
  const jobstats::TimePoint now = jobstats::Clock::now();
  meta_job_stats_.SetCleanupInterval(std::chrono::seconds(seconds), now);
  for (auto& service : osts_.All()) service->job_stats().SetCleanupInterval(std::chrono::seconds(seconds), now);
}

std::vector<std::optional<ost::SpaceInfo>> Filesystem::SpaceSamples() const {
  std::vector<std::optional<ost::SpaceInfo>> samples;
  for (const auto& service : osts_.All()) samples.push_back(service->LastSpace().space);
  return samples;
}

Status Filesystem::SetSetting(const std::string& name, const std::string& raw, uint32_t uid) {
  if (mds_ != nullptr && !IsClientLocalSetting(name)) {
    Status set = mds_->SetFsSetting({uid, 0, 0, ""}, name, raw);
    if (set.ok() && (name == kJobidVarKey || name == kJobidNameKey)) ReloadJobidSettings();
    if (set.ok() && name == kOstAddName) return AttachAddedOsts();
    return set;
  }
  if (control::NrsControl::Handles(control::NrsControl::Scope::kOsts, name)) return nrs_control_->Set(name, raw);
  if (control::NrsControl::Handles(control::NrsControl::Scope::kMdt, name)) {
    if (mdt_nrs_control_ == nullptr) return Status::Error(EINVAL, kMdtNrsOff);
    return mdt_nrs_control_->Set(name, raw);
  }
  if (control::PlacementControl::Handles(name)) return placement_control_->Set(name, raw);
  if (control::QuotaControl::Handles(name)) return quota_->Set(name, raw);
  // setfattr -v and `echo x >` style values may carry a newline.
  std::string value = raw;
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  if (name == kJobStatsName || name == kJobCleanupKey) return SetJobStatsSetting(name, value);
  if (name == kOstAddName) return AddOst(value);
  if (name == kJobidVarKey) {
    if (!ValidJobidVar(value)) {
      return Status::Error(EINVAL, "jobid_var must be an environment variable name, "
                                   "'procname_uid', 'nodelocal' or 'disable', not '" + value + "'");
    }
  } else if (name == kOstStatusName || name == kOstDfName || name == kMetricsAddressName ||
             name == kOstCountKey) {
    return Status::Error(EINVAL, "setting " + name + " is read-only");
  } else if (name == kJobidNameKey) {
    if (!ValidJobidName(value)) {
      return Status::Error(EINVAL, "jobid_name must be 1-64 characters without blanks, using "
                                   "only the codes %e %u %g %p %h %H %j %%, not '" + value + "'");
    }
  } else {
    return Status::Error(EINVAL, "unknown setting " + name);
  }
  // Persist first: a setting that was not stored must not take effect. The
  // lock keeps two concurrent changes from being stored in one order and
  // published in the other, or one from losing the other.
  std::lock_guard<std::mutex> lock(settings_mu_);
  Status stored = meta_->PutSetting(name, value);
  if (!stored.ok()) return stored;
  auto next = std::make_shared<Settings>(*settings());
  (name == kJobidVarKey ? next->jobid.var : next->jobid.name) = value;
  settings_.store(std::move(next));
  jobids_.Clear();
  return Status::Ok();
}

}  // namespace sfs::fs
