// The mounted filesystem: what every FUSE op reaches through
// fuse_req_userdata(). Owns the metadata store, one ost::Service per OST,
// the placement policy and the table of open files. Internal to fs/.
//
// Lock order (outermost first): one shard of Filesystem::open_ (never two;
// fs/open_table.h), then OpenFile::times_mu, then the leaves
// meta::MetaStore::mu_ (whose usage observer takes control::QuotaControl's lock)
// and ost::Service::mu_. No lock is held across a fuse_reply_*.
#pragma once

#include <fcntl.h>

#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client/mds_client.h"
#include "client/remote_extent.h"
#include "client/remote_ost.h"
#include "common/status.h"
#include "fs/fd_budget.h"
#include "fs/fuse_channel.h"
#include "fs/interrupts.h"
#include "fs/jobid.h"
#include "control/nrs_control.h"
#include "fs/open_table.h"
#include "fs/ops.h"
#include "fs/ost_table.h"
#include "fs/pipe_pool.h"
#include "control/placement_control.h"
#include "control/quota_control.h"
#include "control/space_grants.h"
#include "fs/settings_keys.h"
#include "fs/stripefs.h"
#include "jobstats/job_stats.h"
#include "layout/layout.h"
#include "layout/layout_spec.h"
#include "layout/placement_config.h"
#include "layout/placement.h"
#include "mdt/service.h"
#include "meta/meta_store.h"
#include "nrs/epoch_hub.h"
#include "nrs/registry.h"
#include "ost/late_backend.h"
#include "ost/monitor.h"
#include "ost/service.h"
#include "resource/shared_manager.h"

struct fuse_lowlevel_ops;
struct fuse_session;

namespace sfs::fs {

// Settings that can change at run time; published as an immutable snapshot
// swapped whole, so readers never see half a change.
struct Settings {
  JobidConfig jobid;
  layout::LayoutRequest default_layout;
};

// An inode with at least one open file handle. Shared by all its handles.
struct OpenFile {
  uint64_t ino = 0;
  // Which objects, where: fixed while the file is open (the per-object state
  // it was loaded with is in `stored`).
  layout::Layout layout;
  std::vector<std::shared_ptr<ost::ObjectHandle>> objects;  // per stripe
  // Per stripe, the object's state as this mount knows it: whether it was
  // created (requests on it then treat a missing object as lost), and the
  // bytes it occupies (reported by its OST after every change). Shown by
  // getattr at once, stored with the layout by SaveObjects.
  std::unique_ptr<std::atomic<bool>[]> created;
  std::unique_ptr<std::atomic<uint64_t>[]> allocated;
  // The file size as this mount knows it; every size change goes through
  // this mount, so while the file is open it saves a RocksDB read per read.
  std::atomic<uint64_t> size{0};
  // Set once the objects were cut to the file's end during this open, before
  // a write or preallocation from past the end: a crash between a write's
  // data and its size may have left bytes there, which growing the file
  // would turn into file data (fs/ops_file.cc).
  std::atomic<bool> trimmed{false};
  // Set once this open stored the file's writing mark (MarkWriting), before
  // its first op that grows the file or reaches an object not recorded as
  // created; the last close erases the mark.
  std::atomic<bool> writing_marked{false};
  // Ops that grow the file (a write or preallocation reaching past the
  // recorded size) run one at a time, in arrival order: each one decides
  // from the recorded size whether to trim, and a refused one cuts the
  // objects back to it, which would destroy another growing op's bytes in
  // flight. Write-through got this from the kernel's inode lock; the
  // writeback cache sends several writes past the end at once
  // (fs/ops_file.cc, GrowthTurn).
  std::mutex growth_mu;
  bool growth_busy = false;                          // GUARDED_BY(growth_mu)
  std::deque<std::function<void()>> growth_waiting;  // GUARDED_BY(growth_mu)
  // The largest size the file can have (Filesystem::FileSizeLimit), once
  // every OST of its layout has said what its objects can hold; 0 until
  // then.
  std::atomic<uint64_t> size_limit{0};
  // Whether the inode has set-user-ID or set-group-ID bits, which a write by
  // non-root must clear in the store (refreshed when this mount changes them).
  std::atomic<bool> setid{false};
  // Whose quota the file counts for (refreshed when this mount changes
  // them, as setid).
  std::atomic<uint32_t> uid{0};
  std::atomic<uint32_t> gid{0};
  std::atomic<uint32_t> projid{0};
  // Set by the first request on the objects: only then may they be open in
  // their OSTs' caches, to be closed when the file is (CloseObjects).
  std::atomic<bool> touched{false};
  // The mtime of writes that stayed inside the recorded size and is not in
  // the store yet: storing it per write would cost a RocksDB read and write
  // per request. Saved on fsync, setattr and the last close; getattr and
  // lookup show it meanwhile (Filesystem::OverlayOpen).
  std::mutex times_mu;
  std::optional<meta::Timestamp> unsaved_mtime;  // GUARDED_BY(times_mu)
  // The layout as last stored, per-object state included; SaveObjects
  // stores it again when `created` or `allocated` moved on.
  layout::Layout stored;  // GUARDED_BY(times_mu)
  int opens = 0;  // GUARDED_BY(the inode's shard of Filesystem::open_)
  // The file's extent credits (fs/extent_credits.h); null when mounted
  // with extent_credits=off.
  std::unique_ptr<resource::SharedCreditManager> extents;
  // On a client mount, the file's extent credit at the MDS, taken before
  // the one above (client/remote_extent.h; WithExtent).
  std::shared_ptr<client::RemoteExtent> remote_extent;
};

inline bool HasSetId(uint32_t mode) { return (mode & (S_ISUID | S_ISGID)) != 0; }

// What fi->fh points to.
struct FileHandle {
  std::shared_ptr<OpenFile> file;
  int flags = 0;
  // Who opened it: what a write-back of cached pages, which has no caller of
  // its own, is attributed to.
  nrs::RequestInfo opener;
  // Its owner of the file's extent credits (OpenFile::extents).
  resource::OwnerId extent_owner = resource::kRootOwner;
};

class Filesystem {
 public:
  struct Config {
    std::string meta_dir;
    // Where it is mounted (canonical): an OST added at run time must not
    // overlap it.
    std::string mountpoint;
    uint32_t admin_uid = 0;
    int ost_threads = 2;
    double attr_timeout = 60.0;
    // An OST with a call in service this long is unresponsive; also how long
    // the mount waits for an OST directory to answer.
    std::chrono::nanoseconds ost_timeout = std::chrono::seconds(30);
    client::Credentials oss_credentials;  // for OSTs on OSSs, and the MDS
    // A client mount (`stripefs mount mds://ADDRESS:PORT`): the metadata
    // service at this address holds the store, places new files, counts
    // opens and destroys removed files; this mount reaches it for every
    // metadata operation and the OSSs for data (docs/design.md, "Client
    // mounts"). Empty: the one-process mount, everything here.
    std::string mds;
    bool root_squash = true;  // MountOptions::root_squash
    bool writeback = false;  // MountOptions::writeback
    bool direct_writes = false;  // MountOptions::direct_writes
    // The largest read request, the mount's max_read (fs/mount.cc), which
    // the INIT reply must repeat.
    uint32_t max_read = kMaxRead;
    // Data requests that may be served on FUSE worker threads at once,
    // across all OSTs (ost::ServiceOptions::inline_budget): below the
    // mount's worker count (at least 4, fs/fuse_workers.h), so OSTs that
    // hang can never take every worker.
    int inline_ios = 2;
    // Metadata operations pass the metadata service's NRS heads
    // (mdt/service.h); false (mount option mdt_nrs=off): they run
    // unscheduled and the mdt.* settings are refused.
    bool mdt_nrs = true;
    // Reads and writes hold extent credits (fs/extent_credits.h); false
    // (mount option extent_credits=off) for measuring what they cost and
    // what they prevent.
    bool extent_credits = true;
    // Open reclaims the orphans an earlier run left (files removed while
    // open). An MDS does it later (ReclaimOrphans), once its clients had
    // time to count their opens again.
    bool reclaim_orphans = true;
    // Metadata requests in service at once (mdt::ServiceOptions::max_active):
    // the mount's FUSE workers (fs/fuse_workers.h).
    size_t mdt_active = 4;
  };
  // Opens the store, checks every OST label, starts the OST services and
  // reclaims orphans left by a crash. ENOENT/EIO with a clear message when an
  // OST directory is missing or carries another label. With config.mds, a
  // client mount: connects to the MDS and the OSSs (fs/client_mode.cc);
  // EINVAL if an OST is not on an OSS.
  static Result<std::unique_ptr<Filesystem>> Open(const Config& config,
                                                  nrs::PolicyRegistry registry);
  // Destroys the files removed while open that no open holds any more
  // (ForgetRemoved each orphan).
  Status ReclaimOrphans();
  // Whether this is a client mount (Config::mds).
  bool is_client() const { return mds_ != nullptr; }

  // How long the kernel may keep the attributes of `ino` that a reply
  // carries: attr_timeout, but on a client mount 0 unless its credit for
  // `ino` holds since the operation began (a thread's CacheScope,
  // fs/ops_common.h; fs/client_mode.cc). EntryTimeout is the same for the
  // name under `parent`, and 0 on a client mount whose kernel cannot be
  // told to drop names without taking a directory's lock (before Linux
  // 6.16's FUSE_NOTIFY_INC_EPOCH).
  double AttrTimeout(uint64_t ino);
  double EntryTimeout(uint64_t parent, uint64_t ino);
  // Where a client mount's operation begins, for the above.
  // On a client mount whose root the MDS squashes, whether this thread
  // serves a request of root (client::CallerScope).
  bool SquashedRootCaller() const;
  // For such a caller, whether the MDS lets nobody use `ino` as `mask`
  // asks (EACCES if not); OK for every other caller and mount.
  Status CheckSquashedAccess(uint64_t ino, int mask);
  uint64_t CacheBegin() const;

  // Who asks for a new node: its owner (before set-group-ID inheritance)
  // and the job placement matches on.
  struct Creator {
    uint32_t uid = 0;
    uint32_t gid = 0;
    uint32_t pid = 0;
    std::shared_ptr<const std::string> jobid;
  };
  // A new node `name` in `parent` (mknod, mkdir, symlink, create): its
  // owner, a regular file's layout from the directory's default and the
  // placement, its inode quota, in one store write. On a client mount the
  // MDS does it all (one call).
  // On a client mount, `opened` (a regular file's create) also opens it
  // at the MDS in the same call, for AcquireOpen.
  Result<meta::Inode> MakeNode(const Creator& who, uint64_t parent, const std::string& name,
                               uint32_t mode, uint64_t rdev, const std::string& symlink,
                               client::MdsClient::Opened* opened = nullptr);
  ~Filesystem();

  meta::MetaStore& meta() { return *meta_; }
  // Grows while mounted (AddOst); an index below a count once read stays valid.
  size_t ost_count() const { return osts_.size(); }
  ost::Service& ost(uint32_t index) { return osts_[index]; }
  // The metadata service, or null when mounted with mdt_nrs=off.
  mdt::Service* mdt() { return mdt_.get(); }
  const nrs::PolicyRegistry& registry() const { return registry_; }
  JobIds& jobids() { return jobids_; }
  InitAmendment& init_amendment() { return init_amendment_; }
  PipePool& read_pipes() { return read_pipes_; }
  // Reads and writes a FUSE_INTERRUPT may end (fs/interrupts.h).
  InterruptTable& interrupts() { return interrupts_; }
  // Quota reservations (control/quota_control.h): the mount's own limits,
  // or on a client mount grants from the MDS (client/quota_grants.h).
  control::QuotaGate& quota() { return *quota_gate_; }
  // Free-space grants of the OSTs (control/space_grants.h), or on a client
  // mount room granted by the MDS (client/room_grants.h).
  control::SpaceGate& space() { return *space_gate_; }
  // What the metadata service did per job id (job_stats, target "mdt").
  jobstats::JobStats& meta_job_stats() { return meta_job_stats_; }
  std::shared_ptr<const Settings> settings() const { return settings_.load(); }
  const Config& config() const { return config_; }
  bool IsAdmin(uint32_t uid) const { return uid == 0 || uid == config_.admin_uid; }

  // Layout for a new regular file created by `context`: stripe count and
  // size from `spec` where it sets them, else the filesystem default; its
  // explicit OSTs, if any, go to the placement as such. The caller puts the
  // pool precedence inputs into `context` (placement.h).
  Result<layout::Layout> NewLayout(const layout::PlacementContext& context,
                                   const layout::LayoutSpec& spec);

  // user.stripefs.layout and user.stripefs.projid of files and directories
  // (fs/layout_xattr.cc). Setting needs the owner or an admin (EPERM).
  // A directory's layout is the default for what is created in it and is
  // copied to new subdirectories; a file's may only be set while it is
  // empty (ENOTEMPTY) and not open (EBUSY). A project id is the inode's
  // (meta::Inode::projid, inherited from the directory at creation); it
  // may only be changed on a directory (EINVAL elsewhere), by an admin
  // (EPERM), and reads ENODATA while 0.
  Result<std::string> GetLayoutXattr(uint64_t ino);
  Status SetLayoutXattr(uint32_t uid, uint64_t ino, const std::string& value);
  Status RemoveLayoutXattr(uint32_t uid, uint64_t ino);
  Result<std::string> GetProjid(uint64_t ino);
  Status SetProjid(uint32_t uid, uint64_t ino, const std::string& value);
  Status RemoveProjid(uint32_t uid, uint64_t ino);

  // The layout of `ino`, checked against this filesystem's OSTs (EIO if it
  // names one that does not exist, or is corrupt).
  Result<layout::Layout> LoadLayout(uint64_t ino);
  // The same for a layout blob at hand.
  Result<layout::Layout> CheckLayout(uint64_t ino, const std::string& blob);

  // Open-file table, under the inode's shard of open_: a layout change
  // checks it under the same shard (SetLayoutXattr: EBUSY while the file is
  // open), so no change can slip between an open loading the layout and
  // the table holding it.
  struct Opened {
    std::shared_ptr<OpenFile> file;
  };
  // `known`: on a client mount, what the MDS answered a create that
  // opened the file already (MakeNode).
  // `removed_ok`: a file with no link left may be opened too (an MDS
  // counting again a client's open of a file removed while it was open).
  // `flags`: the open's (on a client mount the MDS checks them for a
  // squashed root caller, at every open of such a caller, since the file
  // may be open here already: mds/squash.h).
  Result<Opened> AcquireOpen(uint64_t ino, const client::MdsClient::Opened* known = nullptr,
                             bool removed_ok = false, int flags = O_RDONLY);
  // Drops one open; on the last one of an unlinked file, destroys its
  // objects.
  void ReleaseOpen(const std::shared_ptr<OpenFile>& file);
  std::shared_ptr<OpenFile> FindOpen(uint64_t ino);
  // After a name went away leaving `ino` with no links: destroy the objects
  // now, or on the last close if the file is still open.
  void ForgetRemoved(uint64_t ino);
  // Files with no links left whose objects are not queued for destruction
  // yet (still open: destroyed at their last close, which the kernel may
  // send after the unlink's reply). Free-space grants wait for them too.
  size_t RemovedNotDestroyed();
  // unlink(2) of `name`: a file left with no links is purged in the same
  // store batch when it is not open and none of its objects was ever
  // created (the usual empty file), else destroyed as ForgetRemoved says.
  Result<meta::Removed> Unlink(uint64_t parent, const std::string& name);

  // Open directories (opendir to releasedir). One removed while open
  // (rmdir, or replaced by a rename) still answers getattr through its open
  // descriptors, with no links, as on a local filesystem: its last
  // attributes are kept in memory until the last release (the store no
  // longer has it; a directory holds no objects, so a crash loses
  // nothing). The kernel itself refuses lookups, creates and readdir in a
  // dead directory.
  void OpenDir(uint64_t ino);
  void ReleaseDir(uint64_t ino);
  // Before `name` of `parent` goes away (rmdir, rename over it): its inode
  // if it is an open directory (costs a store read only while some
  // directory is open).
  std::optional<meta::Inode> OpenDirAt(uint64_t parent, const std::string& name);
  // After the name went: `dir` (from OpenDirAt) answers getattr with no
  // links and the removal's ctime until its last release.
  void DirRemoved(meta::Inode dir);
  // The attributes of a removed open directory; ENOENT for any other.
  Result<meta::Inode> RemovedDir(uint64_t ino);

  // Shows what an open file has not stored yet in attributes read from the
  // store: its mtime (and ctime unless the stored one is newer) and the
  // allocation of its objects.
  void OverlayOpen(meta::Inode* inode);
  // Stores an attribute change of `ino`, the one way setattr, truncate and
  // preallocation change attributes. If the file is open, its unsaved mtime
  // goes into the same change (unless the change sets mtime or size, which
  // supersede it) and is cleared once stored; then whichever file is open
  // by now gets the stored size and set-id bits (an open that raced this
  // change read the inode before it).
  Result<meta::Inode> StoreAttr(uint64_t ino, meta::AttrChange change);
  // Stores the unsaved mtime and object state, if any.
  Status SaveTimes(OpenFile& file);
  // Before an op that may leave objects past what the store records (it
  // grows the file, or creates an object): stores the file's writing mark
  // once per open (meta::MetaStore::MarkWriting), so an unclean stop
  // meanwhile is settled by the next mount (SettleWrites).
  Status MarkWriting(OpenFile& file);
  // Stores the per-object state (created marks, allocation) if it moved on
  // since last stored. REQUIRES: file.times_mu held.
  Status SaveObjects(OpenFile& file);
  // The same where only the allocation can have moved on: it is advisory
  // (st_blocks), so a failure is logged and fails nothing.
  // REQUIRES: file.times_mu held.
  void SaveAllocation(OpenFile& file);

  // The largest size a file of `layout` can have: what the objects can hold
  // on their OSTs' filesystems (ost::SpaceInfo::max_object_size, from the
  // latest space samples) arranged by the layout (layout::MaxFileSize).
  // A write, truncate or preallocation past it is EFBIG. `*complete` (if
  // given) is false when an OST has not said yet (it then limits nothing).
  uint64_t FileSizeLimit(const layout::Layout& layout, bool* complete = nullptr);
  // The same for an open file, kept with it once complete.
  uint64_t FileSizeLimit(OpenFile& file);

  // Object handles for a layout (fresh ones, for files that are not open).
  std::vector<std::shared_ptr<ost::ObjectHandle>> Handles(const layout::Layout& layout);
  // Closes whatever descriptors the OSTs hold for the layout's objects.
  void CloseObjects(const layout::Layout& layout);

  // Multi-part ops between MultiPartOp::Launch and the end of its Finish.
  void OpStarted() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void OpFinished() { in_flight_.fetch_sub(1, std::memory_order_acq_rel); }
  // Waits until no op is in flight. Called after the FUSE loop has ended and
  // before the session is destroyed, so every queued request still gets its
  // reply and no OST service is torn down while another submits to it.
  // Returns false if it gave up: calls are stuck in service on an OST that
  // stopped answering (requests queued there fail, as they never started).
  // Then neither the session nor this object may be destroyed (a stuck call
  // may still return and reply): the daemon calls Abandon and exits.
  bool Quiesce();
  // For a daemon about to _exit after Quiesce gave up: stores what open
  // files have unsaved, syncs the metadata store, says what was left.
  void Abandon();

  // Run-time settings on the mount root (user.stripefs.<name>): jobid_var,
  // jobid_name and the NRS settings (control/nrs_control.h).
  // `uid` asked (checked by the caller; a client mount's MDS checks again).
  Status SetSetting(const std::string& name, const std::string& value, uint32_t uid);
  Status RemoveSetting(const std::string& name, uint32_t uid);
  Result<std::string> GetSetting(const std::string& name);
  static bool IsSettingName(const std::string& name);
  // Each OST's latest background space sample (none before the first);
  // never waits on a disk.
  std::vector<std::optional<ost::SpaceInfo>> SpaceSamples() const;
  // Per OST, the weight placement uses (admin weight x automatic factor).
  std::vector<double> EffectiveWeights() const;
  // False once an admin deactivated the OST (no new objects on it).
  bool OstActive(uint32_t ost) const;
  // `stripefs ost add` (setting ost_add, root only): makes the directory at
  // `path` (absolute; created if missing; empty, or left by an addition
  // that did not finish) the next OST, labelled, stored, and placed at
  // weight 1 in no pool, usable by new files when this returns
  // (fs/ost_add.cc). EINVAL for a relative path or one that overlaps the
  // metadata directory, an OST or the mount, or lies on a FUSE
  // filesystem; EEXIST for a directory holding anything else; ENOSPC past
  // the table's capacity; the errno of a failed directory operation.
  Status AddOst(const std::string& path);
  // The FUSE session, once mounted (for notifications); null before and
  // once the mount is being torn down.
  void set_session(fuse_session* session) { session_.store(session); }
  fuse_session* session() const { return session_.load(); }
  // Drops the kernel's cached attributes of `ino`, for a change the
  // request's reply cannot carry (set-ID bits a write or preallocation
  // cleared): the next stat asks the daemon. Attributes only: the kernel
  // then takes no inode or page lock, so this may run inside the request
  // that made the change, whose caller holds the inode lock; it must, once
  // the change is stored and before the reply, or the caller could stat
  // the old mode between its write(2) returning and a later notification.
  // No lock of ours may be held (the write to /dev/fuse may wait).
  void InvalidateAttrs(uint64_t ino);
  // Where the metrics server listens ("127.0.0.1:9100"), for the read-only
  // setting metrics_address; set once by the mount before it serves.
  void set_metrics_address(std::string address) { metrics_address_ = std::move(address); }

 private:
  Filesystem(const Config& config, nrs::PolicyRegistry registry);
  void DestroyObjects(uint64_t ino);
  // At mount, before orphans are reclaimed and anything is served: every
  // file with a writing mark left by an unclean stop gets its objects cut
  // to the bytes its size needs, those that exist recorded as created (one
  // the size does not reach and the file never recorded is removed), their
  // allocation stored, and the mark erased (fs/settle_writes.cc). A file
  // with an object on an OST that has not answered keeps its mark for the
  // next mount.
  Status SettleWrites();
  // Removes the objects of a layout no file uses any more (the old layout
  // of an empty file given a new one); failures are logged.
  void DropObjects(const layout::Layout& old_layout);
  // The caller may change ino's layout.
  Status CheckOwner(uint32_t uid, uint64_t ino, const char* what);
  Status ChangeProjid(uint32_t uid, uint64_t ino, uint32_t projid);
  // Asks every OST for a space sample and waits up to `patience` for them.
  void AwaitFirstSpaceSamples(std::chrono::nanoseconds patience);
  // Stores the unsaved mtimes of files still open (a stop without release);
  // `settled`: no op is in flight, so their writing marks are erased too.
  void SaveStillOpen(bool settled);
  // The `ost_df` report (control/ost_df.h).
  std::string OstDfReport();
  // The `job_stats` report (jobstats/report.h): the metadata service, then
  // every OST.
  std::string JobStatsReport();
  // job_stats=clear, job_cleanup_interval=N.
  Status SetJobStatsSetting(const std::string& name, const std::string& value);
  void ApplyJobCleanup(int64_t seconds);

  // Makes `service` (the next OST) part of this mount: its scheduling,
  // listeners, monitor, quota and placement (fs/ost_add.cc).
  Status PublishOst(std::unique_ptr<ost::Service> service, const FdBudget& fds);
  // A client mount: connects the OSTs the store records beyond those this
  // mount has (added through any client since it mounted).
  Status AttachAddedOsts();
  // Open's first half: the store here and the OSTs it records.
  Status OpenStoreAndOsts();
  // The same for a client mount: the MDS and the OSSs (fs/client_mode.cc).
  Status ConnectClient();
  // On a client mount, the settings this mount reads itself; the rest
  // are the MDS's (fs/client_mode.cc).
  static bool IsClientLocalSetting(const std::string& name);
  // The run-time settings (default layout, jobid, job stats cleanup) as
  // stored.
  Status LoadRunSettings();
  // A client mount's call-back handlers: drop what the kernel keeps of
  // what another client changed; drop everything when the stream is lost;
  // count this client's opens at the MDS again once it is back.
  void DropRevoked(const std::vector<uint64_t>& inodes, const std::vector<uint64_t>& directories);
  void DropAllCached();
  void ReopenAtMds();
  void StartReopen();  // ReopenAtMds on reopen_
  // Whether the kernel takes FUSE_NOTIFY_INC_EPOCH (tried once).
  bool KernelDropsNames();
  // Re-reads the jobid settings from the store (a client mount, after a
  // change it asked its MDS for).
  void ReloadJobidSettings();

  // Held for the daemon's life on META/stripefs.lock (see Open): released
  // only after meta_ is closed, since members die in reverse order.
  struct MountLock {
    int fd = -1;
    ~MountLock();
  };

  const Config config_;
  const nrs::PolicyRegistry registry_;
  MountLock mount_lock_;
  // Declared before osts_ so it outlives the services: their last requests'
  // observers (destroy completions) still write to it while they drain.
  std::unique_ptr<meta::MetaStore> meta_;
  // A client mount's MDS (meta_ reaches it too); null on the one-process
  // mount.
  std::shared_ptr<client::MdsClient> mds_;
  // A client's quota grants from the MDS; made before the call-backs start
  // (they take grants back), ended after them.
  std::unique_ptr<client::QuotaGrants> client_quota_;
  std::unique_ptr<client::RoomGrants> client_room_;
  // A client mount's inodes whose attributes (or names under them) the
  // kernel was allowed to keep: what a lost call-back stream must drop.
  std::mutex cached_mu_;  // a leaf; guards cached_
  std::unordered_set<uint64_t> cached_;
  // Whether the kernel takes FUSE_NOTIFY_INC_EPOCH: 0 untried, 1 yes, -1 no.
  std::atomic<int> kernel_drops_names_{0};
  // Counts a client mount's opens at the MDS again after a new call-back
  // stream (StartReopen); joined by the destructor.
  std::mutex reopen_mu_;  // a leaf; guards the three below
  std::thread reopen_;
  bool reopen_running_ = false;
  bool reopen_again_ = false;
  // The epoch handler every OST's scheduler joins (seed 002); ticked by
  // monitor_, tuned by nrs_control_.
  std::shared_ptr<nrs::SharedEpochHub> epochs_;
  OstTable osts_{layout::kMaxOsts};
  // OSTs that had not answered at mount, attached when they do.
  std::vector<std::shared_ptr<ost::LateAttach>> late_osts_;
  std::unique_ptr<ost::Monitor> monitor_;  // ticks osts_; destroyed before them
  // After osts_ and meta_, so it dies first: a request it still serves at
  // shutdown uses both. Null with mdt_nrs=off.
  std::unique_ptr<mdt::Service> mdt_;
  std::unique_ptr<control::NrsControl> nrs_control_;              // borrows meta_ and osts_
  std::unique_ptr<control::NrsControl> mdt_nrs_control_;          // borrows meta_ and mdt_; may be null
  std::unique_ptr<control::PlacementControl> placement_control_;  // borrows meta_ and osts_
  std::unique_ptr<control::QuotaControl> quota_;                  // borrows meta_; null on a client
  control::QuotaGate* quota_gate_ = nullptr;                      // quota_ or client_quota_
  std::unique_ptr<control::SpaceGrants> space_;                   // reads osts_' samples; null on a client
  control::SpaceGate* space_gate_ = nullptr;                      // space_ or client_room_
  JobIds jobids_;
  // Its cleanup interval is the one every OST's JobStats has too
  // (job_cleanup_interval; changed under settings_mu_: persist, then apply).
  jobstats::JobStats meta_job_stats_;
  std::string metrics_address_;  // written before the session starts, then read only
  std::atomic<fuse_session*> session_{nullptr};
  InitAmendment init_amendment_;  // the FUSE channel's (fs/fuse_channel.h)
  // For reads replied by splice (fs/ops_file.cc): room for the largest
  // read and what libfuse's own pipe wants beside it; their descriptors
  // are reserved by SplitDescriptors (fs/fd_budget.h).
  PipePool read_pipes_{kMaxTransfer + 16 * 4096, /*keep=*/32, kMaxReadPipes};
  // Outlives the session: libfuse's interrupt callbacks point at it.
  InterruptTable interrupts_;
  std::mutex settings_mu_;  // serializes SetSetting of Settings fields: persist, then publish
  std::atomic<std::shared_ptr<const Settings>> settings_;
  std::atomic<int64_t> in_flight_{0};
  // The descriptor limit split between the OSTs (fs/fd_budget.h); set by
  // Open, read by AddOst.
  uint64_t fd_limit_ = 0;
  // Data requests on FUSE workers at once, shared by every OST
  // (ost::ServiceOptions::inline_budget); set by Open.
  std::shared_ptr<std::atomic<int>> inline_budget_;
  // Serializes AddOst: one check, label, store and publish at a time.
  std::mutex ost_add_mu_;
  // An OST was stored but not published to this mount (AddOst failed
  // half-way): further additions wait for a remount.
  bool ost_add_unpublished_ = false;  // GUARDED_BY(ost_add_mu_)

  // A leaf lock: guards open_dirs_; nothing else is taken under it.
  std::mutex dirs_mu_;
  struct OpenDirState {
    int opens = 0;
    std::optional<meta::Inode> removed;  // its last attributes, once removed
  };
  std::unordered_map<uint64_t, OpenDirState> open_dirs_;  // GUARDED_BY(dirs_mu_)
  // open_dirs_.size(), read without the lock: removals skip OpenDirAt's
  // store read while no directory is open.
  std::atomic<size_t> open_dir_count_{0};

  // Open files, inodes being destroyed and removed ones still open
  // (RemovedNotDestroyed), each under its inode's shard.
  OpenTable open_;
};

// EINVAL unless the store's format is the one this build reads.
Status CheckFormat(meta::MetaStore& store);

// The FUSE low-level operation table (fs/lowlevel_ops.cc).
const ::fuse_lowlevel_ops* LowLevelOps();

}  // namespace sfs::fs
