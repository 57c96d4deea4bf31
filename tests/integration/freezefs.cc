// freezefs BACKING MOUNTPOINT: a small passthrough FUSE filesystem that
// shows BACKING at MOUNTPOINT, for integration tests that need a disk they
// can stop: SIGSTOP the process and every call into MOUNTPOINT waits (as on
// a hung disk or a stopped network filesystem) until SIGCONT. Runs in the
// foreground, multi-threaded; only what an OST directory needs.
#define FUSE_USE_VERSION 31
#include <dirent.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace {

std::string backing;  // set once in main, read by every op

std::string Real(const char* path) { return backing + path; }
int Err(int rc) { return rc < 0 ? -errno : rc; }

int GetAttr(const char* path, struct stat* st, fuse_file_info* fi) {
  if (fi != nullptr) return Err(fstat(static_cast<int>(fi->fh), st));
  return Err(lstat(Real(path).c_str(), st));
}
int Access(const char* path, int mask) { return Err(access(Real(path).c_str(), mask)); }
int Mkdir(const char* path, mode_t mode) { return Err(mkdir(Real(path).c_str(), mode)); }
int Unlink(const char* path) { return Err(unlink(Real(path).c_str())); }
int Rmdir(const char* path) { return Err(rmdir(Real(path).c_str())); }
int Rename(const char* from, const char* to, unsigned int flags) {
  if (flags != 0) return -EINVAL;
  return Err(rename(Real(from).c_str(), Real(to).c_str()));
}
int Chmod(const char* path, mode_t mode, fuse_file_info* fi) {
  if (fi != nullptr) return Err(fchmod(static_cast<int>(fi->fh), mode));
  return Err(chmod(Real(path).c_str(), mode));
}
int Chown(const char* path, uid_t uid, gid_t gid, fuse_file_info*) {
  return Err(lchown(Real(path).c_str(), uid, gid));
}
int Truncate(const char* path, off_t size, fuse_file_info* fi) {
  if (fi != nullptr) return Err(ftruncate(static_cast<int>(fi->fh), size));
  return Err(truncate(Real(path).c_str(), size));
}
int Utimens(const char* path, const timespec tv[2], fuse_file_info*) {
  return Err(utimensat(AT_FDCWD, Real(path).c_str(), tv, AT_SYMLINK_NOFOLLOW));
}
int Open(const char* path, fuse_file_info* fi) {
  int fd = open(Real(path).c_str(), fi->flags);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}
int Create(const char* path, mode_t mode, fuse_file_info* fi) {
  int fd = open(Real(path).c_str(), fi->flags, mode);
  if (fd < 0) return -errno;
  fi->fh = static_cast<uint64_t>(fd);
  return 0;
}
int Read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
  return Err(static_cast<int>(pread(static_cast<int>(fi->fh), buf, size, off)));
}
int Write(const char*, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
  return Err(static_cast<int>(pwrite(static_cast<int>(fi->fh), buf, size, off)));
}
int Statfs(const char* path, struct statvfs* st) { return Err(statvfs(Real(path).c_str(), st)); }
int Release(const char*, fuse_file_info* fi) {
  close(static_cast<int>(fi->fh));
  return 0;
}
int Fsync(const char*, int datasync, fuse_file_info* fi) {
  const int fd = static_cast<int>(fi->fh);
  return Err(datasync ? fdatasync(fd) : fsync(fd));
}
int Fsyncdir(const char*, int, fuse_file_info*) { return 0; }
int Fallocate(const char*, int mode, off_t off, off_t len, fuse_file_info* fi) {
  return Err(fallocate(static_cast<int>(fi->fh), mode, off, len));
}
off_t Lseek(const char*, off_t off, int whence, fuse_file_info* fi) {
  off_t found = lseek(static_cast<int>(fi->fh), off, whence);
  return found < 0 ? -errno : found;
}
int Readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*,
            fuse_readdir_flags) {
  DIR* dir = opendir(Real(path).c_str());
  if (dir == nullptr) return -errno;
  while (dirent* entry = readdir(dir)) fill(buf, entry->d_name, nullptr, 0, fuse_fill_dir_flags{});
  closedir(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s BACKING MOUNTPOINT\n", argv[0]);
    return 2;
  }
  backing = argv[1];
  fuse_operations ops{};
  ops.getattr = GetAttr;
  ops.access = Access;
  ops.mkdir = Mkdir;
  ops.unlink = Unlink;
  ops.rmdir = Rmdir;
  ops.rename = Rename;
  ops.chmod = Chmod;
  ops.chown = Chown;
  ops.truncate = Truncate;
  ops.utimens = Utimens;
  ops.open = Open;
  ops.create = Create;
  ops.read = Read;
  ops.write = Write;
  ops.statfs = Statfs;
  ops.release = Release;
  ops.fsync = Fsync;
  ops.fsyncdir = Fsyncdir;
  ops.fallocate = Fallocate;
  ops.lseek = Lseek;
  ops.readdir = Readdir;
  char fsname[] = "-ofsname=freezefs";
  char foreground[] = "-f";
  char* fuse_argv[] = {argv[0], argv[2], foreground, fsname, nullptr};
  return fuse_main(4, fuse_argv, &ops, nullptr);
}
