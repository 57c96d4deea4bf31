#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "client/remote_ost.h"
#include "common/log.h"
#include "common/private_dir.h"
#include "fs/ost_dirs.h"
#include "fs/settings_keys.h"
#include "fs/stripefs.h"
#include "fs/version.h"
#include "layout/layout.h"
#include "meta/meta_store.h"
#include "ost/label.h"
#include "rpc/auth.h"

namespace sfs::fs {

Status Mkfs(const MkfsOptions& options) {
  if (options.meta_dir.empty()) return Status::Error(EINVAL, "--meta is required");
  // Everything mkfs creates (RocksDB's files, labels) is private whatever
  // the caller's umask. Process-wide, which is fine: the CLI runs mkfs alone.
  umask(077);
  if (options.ost_dirs.empty()) return Status::Error(EINVAL, "at least one --ost is required");
  layout::LayoutRequest default_layout{options.stripe_count, options.stripe_size, ""};
  SFS_RETURN_IF_ERROR(layout::Validate(default_layout));
  if (options.stripe_count > options.ost_dirs.size()) {
    return Status::Error(EINVAL, "stripe count " + std::to_string(options.stripe_count) +
                                     " exceeds the " + std::to_string(options.ost_dirs.size()) +
                                     " OSTs");
  }

  // Paths are checked before any directory is created, so a refused mkfs
  // leaves nothing behind (a stray empty OST directory would be "other
  // data" to the next, correct mkfs naming its parent).
  auto meta_dir = ResolvePath(options.meta_dir);
  if (!meta_dir.ok()) return meta_dir.status();
  std::vector<std::string> osts;
  // OSTs an OSS serves (oss://ADDRESS:PORT/DIR), by index; labelled through
  // their OSS with the filesystem's key.
  std::map<uint32_t, client::OssAddress> remote;
  std::optional<rpc::Key> key;
  const rpc::TlsFiles tls{options.tls_ca, options.tls_cert, options.tls_key};
  for (const std::string& dir : options.ost_dirs) {
    if (client::IsOssPath(dir)) {
      auto oss = client::ParseOssPath(dir);
      if (!oss.ok()) return oss.status();
      for (const std::string& other : osts) {
        if (other == dir) return Status::Error(EINVAL, "OST " + dir + " is given twice");
      }
      if (!key) {
        if (options.key_file.empty()) {
          return Status::Error(EINVAL, "OST " + dir + " is on an OSS: give --key FILE");
        }
        auto read = rpc::ReadKeyFile(options.key_file);
        if (!read.ok()) return read.status();
        key = std::move(read).value();
      }
      remote[static_cast<uint32_t>(osts.size())] = *oss;
      osts.push_back(dir);
      continue;
    }
    auto path = ResolvePath(dir);
    if (!path.ok()) return path.status();
    for (const std::string& other : osts) {
      if (!client::IsOssPath(other) && PathsOverlap(other, *path)) {
        return Status::Error(EINVAL, "OST path " + dir + " is given twice or nested in " + other);
      }
    }
    if (PathsOverlap(*meta_dir, *path)) {
      return Status::Error(EINVAL, "OST path " + dir + " overlaps the metadata directory");
    }
    osts.push_back(*path);
  }
  meta_dir = PrepareDir(*meta_dir);
  if (!meta_dir.ok()) return meta_dir.status();
  for (std::string& dir : osts) {
    if (client::IsOssPath(dir)) continue;
    auto path = PrepareDir(dir);
    if (!path.ok()) return path.status();
    dir = *path;
  }

  // Everything is checked before anything is destroyed: a refused mkfs
  // --force leaves the previous filesystem whole.
  const bool meta_in_use = !IsEmptyDir(*meta_dir);
  if (meta_in_use && !options.force) {
    return Status::Error(EEXIST, "metadata directory " + *meta_dir +
                                     " is not empty (use --force to replace a filesystem)");
  }
  for (uint32_t index = 0; index < osts.size(); ++index) {
    if (auto oss = remote.find(index); oss != remote.end()) {
      SFS_RETURN_IF_ERROR(client::LabelRemoteOst(oss->second, *key, tls, "", index, "",
                                                 options.force, /*check_only=*/true));
    } else {
      SFS_RETURN_IF_ERROR(ost::CheckReusable(osts[index], options.force));
    }
  }
  if (meta_in_use) SFS_RETURN_IF_ERROR(meta::MetaStore::Destroy(*meta_dir));
  for (const std::string& dir : osts) {
    if (!client::IsOssPath(dir)) ost::ClearOstDir(dir);
  }

  const std::string fs_uuid = ost::NewUuid();
  std::map<std::string, std::string> settings{
      {kFormatVersionKey, std::to_string(kFormatVersion)},
      {kFsUuidKey, fs_uuid},
      {kOstCountKey, std::to_string(osts.size())},
      {kStripeCountKey, std::to_string(options.stripe_count)},
      {kStripeSizeKey, std::to_string(options.stripe_size)},
  };
  std::vector<ost::Label> labels;
  for (uint32_t index = 0; index < osts.size(); ++index) {
    ost::Label label{fs_uuid, index, ost::NewUuid()};
    settings[OstPathKey(index)] = osts[index];
    settings[OstUuidKey(index)] = label.ost_uuid;
    labels.push_back(label);
  }
  // Labels first: a store that names OSTs must never exist without them.
  for (uint32_t index = 0; index < osts.size(); ++index) {
    const ost::Label& label = labels[index];
    if (auto oss = remote.find(index); oss != remote.end()) {
      SFS_RETURN_IF_ERROR(client::LabelRemoteOst(oss->second, *key, tls, label.fs_uuid,
                                                 label.index, label.ost_uuid, options.force,
                                                 /*check_only=*/false));
    } else {
      SFS_RETURN_IF_ERROR(ost::WriteLabel(osts[index], label));
    }
  }
  auto store = meta::MetaStore::Format(*meta_dir, settings);
  if (!store.ok()) return store.status();
  return store->get()->Sync();
}

}  // namespace sfs::fs
