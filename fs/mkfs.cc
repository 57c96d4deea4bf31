#include <dirent.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "common/log.h"
#include "common/private_dir.h"
#include "fs/ost_dirs.h"
#include "fs/settings_keys.h"
#include "fs/stripefs.h"
#include "fs/version.h"
#include "layout/layout.h"
#include "meta/meta_store.h"
#include "ost/label.h"

namespace sfs::fs {
namespace {

namespace stdfs = std::filesystem;

// An OST directory may be reused with --force only if what it holds is a
// previous stripefs OST (label and objects); anything else is left alone.
Status CheckOst(const std::string& dir, bool force) {
  if (IsEmptyDir(dir)) return Status::Ok();
  auto label = ost::ReadLabel(dir);
  const std::string what = label.ok() ? "an OST of filesystem " + label->fs_uuid : "other data";
  if (!force) {
    return Status::Error(EEXIST, "OST directory " + dir + " already holds " + what +
                                     " (use --force to reuse a stripefs OST)");
  }
  for (const auto& entry : stdfs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name != ost::kLabelFile && name != "objects") {
      return Status::Error(EEXIST, "OST directory " + dir + " holds " + name +
                                       ", which stripefs did not write; refusing even with --force");
    }
  }
  return Status::Ok();
}

// REQUIRES: CheckOst(dir, true) passed.
void ClearOst(const std::string& dir) {
  std::error_code ec;
  stdfs::remove_all(stdfs::path(dir) / "objects", ec);
  stdfs::remove(stdfs::path(dir) / ost::kLabelFile, ec);
}

}  // namespace

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
  for (const std::string& dir : options.ost_dirs) {
    auto path = ResolvePath(dir);
    if (!path.ok()) return path.status();
    for (const std::string& other : osts) {
      if (PathsOverlap(other, *path)) {
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
  for (const std::string& dir : osts) SFS_RETURN_IF_ERROR(CheckOst(dir, options.force));
  if (meta_in_use) SFS_RETURN_IF_ERROR(meta::MetaStore::Destroy(*meta_dir));
  for (const std::string& dir : osts) ClearOst(dir);

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
    SFS_RETURN_IF_ERROR(ost::WriteLabel(osts[index], labels[index]));
  }
  auto store = meta::MetaStore::Format(*meta_dir, settings);
  if (!store.ok()) return store.status();
  return store->get()->Sync();
}

}  // namespace sfs::fs
