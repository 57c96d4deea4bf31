// `stripefs ost add`: a new OST for a mounted filesystem (issue 12, item 5).
//
// The steps run in an order that a crash at any point leaves a filesystem
// that mounts as before: the directory is checked and labelled, then its
// identity and the new OST count are stored in one write (the point after
// which the OST exists), then it is published to the daemon: its service,
// its NRS policies, its placement weight (stored too) and the monitor. A
// crash after the label and before the store leaves a labelled directory
// that no OST of the store names; adding it again takes it over.
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "common/log.h"
#include "common/text.h"
#include "fs/fd_budget.h"
#include "fs/filesystem.h"
#include "fs/ost_attach.h"
#include "fs/ost_dirs.h"
#include "fs/settings_keys.h"
#include "ost/local_service.h"
#include "ost/label.h"
#include "rpc/auth.h"

namespace sfs::fs {
namespace {

// What `dir` (an existing directory) holds may become an OST: nothing, or
// what an addition to this filesystem that did not finish left (its label,
// naming an OST no OST of the store is, perhaps the label's temporary file
// and an empty objects directory). Returns the label to take over, if any.
Result<std::optional<ost::Label>> CheckNewOstDir(const std::string& dir, const std::string& fs_uuid,
                                                 const std::set<std::string>& known_uuids) {
  if (IsEmptyDir(dir)) return std::optional<ost::Label>();
  auto label = ost::ReadLabel(dir);
  std::error_code ec;
  const bool unfinished = label.ok() && label->fs_uuid == fs_uuid &&
                          known_uuids.count(label->ost_uuid) == 0 &&
                          (!std::filesystem::exists(dir + "/objects", ec) ||
                           IsEmptyDir(dir + "/objects"));
  if (unfinished) {
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name != ost::kLabelFile && name != ost::kLabelTempFile && name != "objects") {
        return Status::Error(EEXIST, "OST directory " + dir + " holds " + name);
      }
    }
    return std::optional<ost::Label>(*label);
  }
  if (label.ok()) {
    return Status::Error(EEXIST, "OST directory " + dir + " already holds " +
                                     (label->fs_uuid == fs_uuid
                                          ? "OST " + std::to_string(label->index) +
                                                " of this filesystem"
                                          : "an OST of filesystem " + label->fs_uuid));
  }
  return Status::Error(EEXIST, "OST directory " + dir + " is not empty");
}

}  // namespace

Status Filesystem::AddOst(const std::string& requested) {
  std::lock_guard<std::mutex> lock(ost_add_mu_);
  if (ost_add_unpublished_) {
    return Status::Error(EIO, "an earlier ost_add stored an OST this mount could not take (its "
                              "log line says why); remount before adding another");
  }
  const std::string dir(Trim(requested));
  const bool remote = client::IsOssPath(dir);
  if (!remote && (dir.empty() || dir[0] != '/')) {
    return Status::Error(EINVAL, "ost_add wants the absolute path of the new OST's directory "
                                 "or oss://ADDRESS:PORT/DIR, not '" + Printable(dir) + "'");
  }
  // Compared as text before anything is looked up: a path into this mount
  // would wait forever (fs/ost_dirs.h, WalkToLocalDir). Then it is walked
  // without symlinks, so the text is where it leads.
  if (!remote && !config_.mountpoint.empty() && PathsOverlap(dir, config_.mountpoint)) {
    return Status::Error(EINVAL, "OST path " + dir + " overlaps the mount point");
  }

  auto identities = ReadOstIdentities(*meta_);
  if (!identities.ok()) return identities.status();
  const uint32_t index = static_cast<uint32_t>(identities->size());
  if (index != osts_.size()) {
    return Status::Error(EIO, fmt::format("the store names {} OSTs, the daemon serves {}", index,
                                          osts_.size()));
  }
  if (index >= osts_.capacity()) {
    return Status::Error(ENOSPC, fmt::format("a filesystem has at most {} OSTs", osts_.capacity()));
  }
  auto meta_dir = ResolvePath(config_.meta_dir);
  if (!meta_dir.ok()) return meta_dir.status();
  if (!remote && PathsOverlap(dir, *meta_dir)) {
    return Status::Error(EINVAL, "OST path " + dir + " overlaps the metadata directory");
  }
  std::set<std::string> known_uuids;
  for (const OstIdentity& id : *identities) {
    if (remote ? id.path == dir : !client::IsOssPath(id.path) && PathsOverlap(dir, id.path)) {
      return Status::Error(EINVAL, fmt::format("OST path {} overlaps OST {} at {}", dir, id.index,
                                               id.path));
    }
    known_uuids.insert(id.ost_uuid);
  }
  const std::string fs_uuid = identities->front().fs_uuid;
  Result<std::string> prepared = dir;
  std::optional<ost::Label> label;
  std::unique_ptr<ost::Backend> backend;
  if (remote) {
    // Labelled by its OSS, which refuses a directory holding anything.
    auto oss = client::ParseOssPath(dir);
    if (!oss.ok()) return oss.status();
    if (config_.oss_credentials.key_file.empty()) {
      return Status::Error(EINVAL, "an OST on an OSS needs the filesystem's key: mount with "
                                   "-o key=FILE");
    }
    auto key = rpc::ReadKeyFile(config_.oss_credentials.key_file);
    if (!key.ok()) return key.status();
    label = ost::Label{fs_uuid, index, ost::NewUuid()};
    SFS_RETURN_IF_ERROR(client::LabelRemoteOst(*oss, *key, config_.oss_credentials.tls, fs_uuid,
                                               index, label->ost_uuid, /*force=*/false,
                                               /*check_only=*/false));
  } else {
    SFS_RETURN_IF_ERROR(WalkToLocalDir(dir));
    // Checked before it is made private: a directory that holds anything
    // else is left as it was.
    auto unfinished = CheckNewOstDir(dir, fs_uuid, known_uuids);
    if (!unfinished.ok()) return unfinished.status();
    prepared = PrepareDir(dir);
    if (!prepared.ok()) return prepared.status();
    // Labelled before the store names it (a store that names an OST must
    // never exist without its label).
    label = ost::Label{fs_uuid, index, *unfinished ? (*unfinished)->ost_uuid : ost::NewUuid()};
    SFS_RETURN_IF_ERROR(ost::WriteLabel(*prepared, *label));
    auto opened = ost::NewPosixBackend(*prepared);
    if (!opened.ok()) return opened.status();
    backend = std::move(opened).value();
  }
  SFS_RETURN_IF_ERROR(meta_->PutSettings({{OstPathKey(index), *prepared},
                                          {OstUuidKey(index), label->ost_uuid},
                                          {kOstCountKey, std::to_string(index + 1)}}));
  // Settings are written without a sync; this one must outlive a power cut
  // before the filesystem places files on the OST.
  SFS_RETURN_IF_ERROR(meta_->Sync());

  // Stored: from here on the OST is part of the filesystem; what follows
  // publishes it to this daemon (a later mount would do the same), and a
  // failure says so.
  auto unpublished = [&](const Status& why) {
    // This mount's tables no longer agree on the OST count: no further
    // addition until a remount, which publishes what is stored.
    ost_add_unpublished_ = true;
    return Status::Error(why.err(), fmt::format("OST {} at {} is stored (the next mount uses it) "
                                                "but this mount could not take it: {}",
                                                index, *prepared, why.message()));
  };
  const FdBudget fds = SplitDescriptors(fd_limit_, index + 1, config_.ost_threads);
  ost::ServiceOptions options;
  options.index = index;
  options.threads = config_.ost_threads;
  options.open_objects = fds.objects_per_ost;
  options.timeout = config_.ost_timeout;
  options.inline_budget = inline_budget_;
  options.epochs = epochs_;
  std::unique_ptr<ost::Service> service;
  if (remote) {
    auto connected = client::ConnectRemoteOst(index, dir, fs_uuid, label->ost_uuid,
                                              config_.oss_credentials, inline_budget_, epochs_);
    if (!connected.ok()) return unpublished(connected.status());
    service = std::move(connected).value();
  } else {
    service = std::make_unique<ost::LocalService>(options, std::move(backend));
  }
  if (Status published = PublishOst(std::move(service), fds); !published.ok()) {
    return unpublished(published);
  }
  Logger("fs")->info("OST {} added at {}: weight 1, in no pool; new files may use it", index,
                     *prepared);
  return Status::Ok();
}

Status Filesystem::PublishOst(std::unique_ptr<ost::Service> service, const FdBudget& fds) {
  ost::Service* added = service.get();
  added->RequestSpaceSample();
  {
    // With the job-stats setting's lock, so a concurrent change of
    // job_cleanup_interval reaches the new OST too.
    std::lock_guard<std::mutex> settings_lock(settings_mu_);
    added->job_stats().SetCleanupInterval(meta_job_stats_.cleanup_interval(),
                                          jobstats::Clock::now());
    SFS_RETURN_IF_ERROR(osts_.Add(std::move(service)));
  }
  // The others' share of the descriptors shrinks to make room.
  for (auto& other : osts_.All()) other->SetOpenObjects(fds.objects_per_ost);
  // Its policies before its weight: no request reaches it unscheduled. (A
  // client mount's are its OSS's, from the MDS.)
  if (nrs_control_ != nullptr) SFS_RETURN_IF_ERROR(nrs_control_->AddTarget(added));
  added->SetSpaceFreedListener(
      [space = space_gate_](uint32_t ost, uint64_t bytes, nrs::TimePoint from) {
        space->Freed(ost, bytes, from);
      });
  added->SetHealthListener([control = placement_control_.get()](uint32_t ost, bool responsive) {
    control->SetResponsive(ost, responsive);
  });
  monitor_->Add(added);
  // Its block quota sub-owner, before any file can use it (a client's
  // sub-owners are the MDS's).
  if (quota_ != nullptr) quota_->SetOsts(osts_.size());
  return placement_control_->AddOst(added);
}

}  // namespace sfs::fs
