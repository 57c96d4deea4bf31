#include "fs/ost_dirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/vfs.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "common/private_dir.h"

namespace sfs::fs {
namespace {

namespace stdfs = std::filesystem;

// statfs(2)'s f_type of every FUSE filesystem.
constexpr long kFuseSuperMagic = 0x65735546;

}  // namespace

Result<std::string> ResolvePath(const std::string& dir) {
  std::error_code ec;
  auto path = stdfs::weakly_canonical(stdfs::absolute(dir, ec), ec);
  if (ec) return Status::Error(ec.value(), dir + ": " + ec.message());
  std::string text = path.string();
  while (text.size() > 1 && text.back() == '/') text.pop_back();
  return text;
}

bool PathsOverlap(const std::string& a, const std::string& b) {
  return a == b || b.compare(0, a.size() + 1, a + "/") == 0 ||
         a.compare(0, b.size() + 1, b + "/") == 0;
}

Result<std::string> PrepareDir(const std::string& dir) {
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec) return Status::Error(ec.value(), "cannot create " + dir + ": " + ec.message());
  if (!stdfs::is_directory(dir, ec)) return Status::Error(ENOTDIR, dir + " is not a directory");
  if (chmod(dir.c_str(), kPrivateDirMode) != 0) return ErrnoStatus(errno, "chmod " + dir);
  auto canonical = stdfs::canonical(dir, ec);
  if (ec) return Status::Error(ec.value(), dir + ": " + ec.message());
  return canonical.string();
}

bool IsEmptyDir(const std::string& dir) {
  std::error_code ec;
  return stdfs::is_empty(dir, ec) && !ec;
}

Status WalkToLocalDir(const std::string& dir) {
  if (dir.size() < 2 || dir[0] != '/' || dir.back() == '/') {
    return Status::Error(EINVAL, "'" + dir + "' is not an absolute path below /");
  }
  int parent = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0) return ErrnoStatus(errno, "open /");
  Status status = Status::Ok();
  size_t start = 1;
  while (status.ok() && start <= dir.size()) {
    const size_t end = std::min(dir.find('/', start), dir.size());
    const std::string name = dir.substr(start, end - start);
    const std::string so_far = dir.substr(0, end);
    start = end + 1;
    if (name.empty() || name == "." || name == "..") {
      status = Status::Error(EINVAL, "'" + dir + "' is not a canonical path");
      break;
    }
    int fd = openat(parent, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      if (mkdirat(parent, name.c_str(), kPrivateDirMode) != 0 && errno != EEXIST) {
        status = ErrnoStatus(errno, "mkdir " + so_far);
        break;
      }
      // The new entry is durable once its parent is.
      const int parent_dir = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      const bool synced = parent_dir >= 0 && fsync(parent_dir) == 0;
      const int err = errno;
      if (parent_dir >= 0) close(parent_dir);
      if (!synced) {
        status = ErrnoStatus(err, "fsync the parent of " + so_far);
        break;
      }
      fd = openat(parent, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      const int err = errno;
      struct stat st {};
      const bool link = fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                        S_ISLNK(st.st_mode);
      status = link ? Status::Error(EINVAL, so_far + " is a symlink; give the path it leads to")
               : err == ENOTDIR ? Status::Error(ENOTDIR, so_far + " is not a directory")
                                : ErrnoStatus(err, "open " + so_far);
      break;
    }
    close(parent);
    parent = fd;
    // statfs on the directory itself, not a lookup inside it; a directory
    // that cannot say what it is on is not walked into.
    struct statfs info {};
    if (fstatfs(fd, &info) != 0) {
      status = ErrnoStatus(errno, "statfs " + so_far);
    } else if (info.f_type == kFuseSuperMagic) {
      status = Status::Error(EINVAL, so_far + " is on a FUSE filesystem; an OST must be a "
                                     "directory of a local disk");
    }
    // Only root may change what the path leads to, so what was checked
    // stays true for the steps that follow it by name.
    struct stat st {};
    if (status.ok() && fstat(fd, &st) != 0) status = ErrnoStatus(errno, "stat " + so_far);
    const bool others_may_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    const bool last = start > dir.size();
    if (status.ok() && st.st_uid != 0) {
      status = Status::Error(EPERM, fmt::format("{} belongs to uid {}; every directory on an "
                                                "OST's path must be root's", so_far, st.st_uid));
    } else if (status.ok() && others_may_write && (last || (st.st_mode & S_ISVTX) == 0)) {
      status = Status::Error(EPERM, so_far + " may be written by others than root (mode " +
                                        fmt::format("{:o}", st.st_mode & 07777) + ")");
    }
  }
  close(parent);
  return status;
}

}  // namespace sfs::fs
