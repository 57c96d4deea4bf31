// The POSIX backend: one directory opened once, every object reached with an
// *at() call relative to it, so a rename or remount of the path under us can
// never redirect I/O to another directory.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <vector>

#include "common/log.h"
#include "common/private_dir.h"
#include "ost/backend.h"
#include "ost/label.h"

namespace sfs::ost {
namespace {

// "objects/XX" and "objects/XX/<16 hex digits>" for an id.
std::string FanOutDir(uint64_t id) { return fmt::format("objects/{:02x}", id & 0xff); }
std::string ObjectPath(uint64_t id) { return fmt::format("objects/{:02x}/{:016x}", id & 0xff, id); }

// Drops `done` bytes from the front of an iovec array, in place. Returns the
// new start; entries before it are used up.
iovec* Advance(iovec* iov, int* count, size_t done) {
  while (*count > 0 && done >= iov->iov_len) {
    done -= iov->iov_len;
    ++iov;
    --*count;
  }
  if (*count > 0) {
    iov->iov_base = static_cast<char*>(iov->iov_base) + done;
    iov->iov_len -= done;
  }
  return iov;
}

// Repeats a system call that a signal interrupted.
template <class Call>
ssize_t RetryOnEintr(Call call) {
  ssize_t result;
  do {
    result = call();
  } while (result < 0 && errno == EINTR);
  return result;
}

size_t Total(const iovec* iov, int count) {
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
}

class PosixObjectFile : public ObjectFile {
 public:
  PosixObjectFile(int fd, const std::string& dir, uint64_t id, bool read_only)
      : fd_(fd), dir_(dir), id_(id), read_only_(read_only) {}
  ~PosixObjectFile() override { close(fd_); }
  int NativeFd() const override { return fd_; }

  Result<size_t> ReadV(const iovec* iov, int count, uint64_t offset) override {
    // The usual case, on every read: one call, no copy of the iovecs. A
    // regular file returns short only at its end.
    if (count <= IOV_MAX) {
      ssize_t got = RetryOnEintr([&] { return preadv(fd_, iov, count, offset); });
      if (got < 0) return Fail("preadv", offset);
      return static_cast<size_t>(got);
    }
    std::vector<iovec> left(iov, iov + count);  // advanced as reads land
    iovec* next = left.data();
    int n = count;
    size_t wanted = Total(iov, count);
    size_t done = 0;
    while (done < wanted) {
      ssize_t got = preadv(fd_, next, std::min(n, IOV_MAX), offset + done);
      if (got < 0) {
        if (errno == EINTR) continue;
        return Fail("preadv", offset + done);
      }
      if (got == 0) break;
      done += got;
      // Regular files only return short at end of file (or IOV_MAX capping).
      size_t asked = Total(next, std::min(n, IOV_MAX));
      next = Advance(next, &n, got);
      if (static_cast<size_t>(got) < asked) break;
    }
    return done;
  }

  Result<size_t> SpliceTo(int pipe_fd, uint64_t offset, size_t length) override {
    loff_t at = static_cast<loff_t>(offset);
    size_t done = 0;
    while (done < length) {
      // Non-blocking on the pipe side only: the caller made room, and a
      // pipe that is full anyway must fail here, not hang a service thread.
      ssize_t moved = splice(fd_, &at, pipe_fd, nullptr, length - done, SPLICE_F_NONBLOCK);
      if (moved < 0) {
        if (errno == EINTR) continue;
        // The kernel cannot splice this file (no splice_read): copy.
        if (errno == EINVAL && done == 0) return ErrnoStatus(ENOTSUP, Where("splice", offset));
        return Fail("splice", offset + done);
      }
      if (moved == 0) break;  // the object's end
      done += static_cast<size_t>(moved);
    }
    return done;
  }

  Status WriteV(const iovec* iov, int count, uint64_t offset) override {
    if (read_only_) return ReadOnly("pwritev", offset);
    const size_t wanted = Total(iov, count);
    size_t done = 0;
    if (count <= IOV_MAX) {
      // The usual case: one call moves everything, no copy of the iovecs.
      ssize_t put = RetryOnEintr([&] { return pwritev(fd_, iov, count, offset); });
      if (put < 0) return Fail("pwritev", offset);
      if (static_cast<size_t>(put) == wanted) return Status::Ok();
      done = static_cast<size_t>(put);
    }
    // A short write (or more iovecs than one call takes): the rest, from a
    // copy of the iovecs that can be advanced.
    std::vector<iovec> left(iov, iov + count);
    int n = count;
    iovec* next = Advance(left.data(), &n, done);
    while (done < wanted) {
      ssize_t put = pwritev(fd_, next, std::min(n, IOV_MAX), offset + done);
      if (put < 0) {
        if (errno == EINTR) continue;
        return Fail("pwritev", offset + done);
      }
      // A zero-byte write of a nonzero buffer would loop forever; treat the
      // device as full, which is what it means in practice.
      if (put == 0) return ErrnoStatus(ENOSPC, Where("pwritev", offset + done));
      done += put;
      next = Advance(next, &n, put);
    }
    return Status::Ok();
  }

  Status Sync(bool data_only) override {
    int rc = data_only ? fdatasync(fd_) : fsync(fd_);
    if (rc != 0) return Fail(data_only ? "fdatasync" : "fsync", 0);
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    if (read_only_) return ReadOnly("ftruncate", size);
    if (ftruncate(fd_, size) != 0) return Fail("ftruncate", size);
    return Status::Ok();
  }

  Status Punch(uint64_t offset, uint64_t length) override {
    if (read_only_) return ReadOnly("punch", offset);
    if (length == 0) return Status::Ok();  // fallocate rejects empty ranges
    if (fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) != 0) {
      return Fail("punch", offset);
    }
    return Status::Ok();
  }

  Status Allocate(uint64_t offset, uint64_t length, bool keep_size) override {
    if (read_only_) return ReadOnly("fallocate", offset);
    if (length == 0) return Status::Ok();
    if (fallocate(fd_, keep_size ? FALLOC_FL_KEEP_SIZE : 0, offset, length) != 0) {
      return Fail("fallocate", offset);
    }
    return Status::Ok();
  }

  Result<uint64_t> Size() override {
    struct stat st;
    if (fstat(fd_, &st) != 0) return Fail("fstat", 0);
    return static_cast<uint64_t>(st.st_size);
  }

  Result<uint64_t> Allocated() override {
    struct stat st;
    if (fstat(fd_, &st) != 0) return Fail("fstat", 0);
    return static_cast<uint64_t>(st.st_blocks) * 512;
  }

  Result<std::optional<uint64_t>> Seek(uint64_t offset, int whence) override {
    off_t found = lseek(fd_, static_cast<off_t>(offset), whence);
    if (found < 0) {
      if (errno == ENXIO) return std::optional<uint64_t>();
      return Fail(whence == SEEK_DATA ? "seek data" : "seek hole", offset);
    }
    return std::optional<uint64_t>(static_cast<uint64_t>(found));
  }

  bool read_only() const override { return read_only_; }

 private:
  std::string Where(const char* what, uint64_t offset) const {
    return fmt::format("ost {}: {} object {:#x} at {}", dir_, what, id_, offset);
  }
  Status Fail(const char* what, uint64_t offset) const {
    int err = errno;
    return ErrnoStatus(err, Where(what, offset));
  }
  Status ReadOnly(const char* what, uint64_t offset) const {
    return ErrnoStatus(EROFS, Where(what, offset) + ": the OST's filesystem is read-only");
  }

  const int fd_;
  const std::string dir_;  // for messages
  const uint64_t id_;
  const bool read_only_;
};

class PosixBackend : public Backend {
 public:
  PosixBackend(int dir_fd, std::string dir) : dir_fd_(dir_fd), dir_(std::move(dir)) {}
  ~PosixBackend() override { close(dir_fd_); }

  Result<std::unique_ptr<ObjectFile>> Open(uint64_t id, bool create) override {
    const std::string path = ObjectPath(id);
    int flags = O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0);
    int fd = openat(dir_fd_, path.c_str(), flags, kPrivateFileMode);
    if (fd < 0 && errno == ENOENT && create) {
      // Fan-out directories are made on first use, not at mkfs, so an OST
      // holding few objects stays small.
      Status made = MakeDirs(id);
      if (!made.ok()) return made;
      fd = openat(dir_fd_, path.c_str(), flags, kPrivateFileMode);
    }
    bool read_only = false;
    if (fd < 0 && errno == EROFS) {
      // A read-only filesystem still serves what it holds: an existing
      // object opens for reading, and changes get EROFS (PosixObjectFile).
      fd = openat(dir_fd_, path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT && create) errno = EROFS;
      read_only = true;
    }
    if (fd < 0) {
      int err = errno;
      // A missing object is a hole only while the OST directory exists; if
      // the directory itself was removed the data is gone, which must not
      // read as zeros.
      if (err == ENOENT && !DirectoryAlive()) {
        return Status::Error(EIO, fmt::format("ost {}: open object {:#x}: the OST directory "
                                              "was removed", dir_, id));
      }
      return ErrnoStatus(err, fmt::format("ost {}: open object {:#x}", dir_, id));
    }
    return std::unique_ptr<ObjectFile>(new PosixObjectFile(fd, dir_, id, read_only));
  }

  bool DirectoryAlive() const {
    struct stat st;
    return fstat(dir_fd_, &st) == 0 && st.st_nlink > 0;
  }

  Result<uint64_t> Allocated(uint64_t id) override {
    struct stat st;
    if (fstatat(dir_fd_, ObjectPath(id).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoStatus(errno, "fstatat object " + ObjectPath(id));
    }
    return static_cast<uint64_t>(st.st_blocks) * 512;
  }

  Status Remove(uint64_t id) override {
    if (unlinkat(dir_fd_, ObjectPath(id).c_str(), 0) != 0 && errno != ENOENT) {
      int err = errno;
      return ErrnoStatus(err, fmt::format("ost {}: unlink object {:#x}", dir_, id));
    }
    return Status::Ok();
  }

  Result<SpaceInfo> Space() override {
    // fstatvfs on the descriptor of a removed directory still succeeds; the
    // automatic weights must see such an OST as failed. The same stat says
    // which filesystem holds the OST.
    struct stat dir_stat;
    if (fstat(dir_fd_, &dir_stat) != 0 || dir_stat.st_nlink == 0) {
      return Status::Error(EIO, fmt::format("ost {}: the OST directory was removed", dir_));
    }
    struct statvfs vfs;
    if (fstatvfs(dir_fd_, &vfs) != 0) {
      int err = errno;
      return ErrnoStatus(err, fmt::format("ost {}: statvfs", dir_));
    }
    SpaceInfo info;
    info.device = static_cast<uint64_t>(dir_stat.st_dev);
    info.block_size = vfs.f_frsize ? vfs.f_frsize : vfs.f_bsize;
    info.total_blocks = vfs.f_blocks;
    info.free_blocks = vfs.f_bfree;
    info.avail_blocks = vfs.f_bavail;
    info.total_files = vfs.f_files;
    info.free_files = vfs.f_ffree;
    // A filesystem that went read-only on an error (ext4 errors=remount-ro)
    // may not say so in f_flag; opening the label for writing tells.
    bool read_only = (vfs.f_flag & ST_RDONLY) != 0;
    if (!read_only) {
      int probe = openat(dir_fd_, kLabelFile, O_WRONLY | O_CLOEXEC);
      if (probe >= 0) close(probe);
      read_only = probe < 0 && errno == EROFS;
    }
    if (read_only) {
      info.read_only = true;
      info.free_blocks = info.avail_blocks = info.free_files = 0;
    }
    info.max_object_size = MaxObjectSize(read_only);
    return info;
  }

  std::string Describe() const override { return dir_; }

 private:
  // Another thread may be creating the same directories: EEXIST is success.
  Result<ObjectListing> ListObjects() override {
    ObjectListing listing;
    auto top = OpenDirAt(dir_fd_, "objects");
    if (!top.ok()) {
      if (top.err() == ENOENT) return listing;  // no object was ever created
      return top.status();
    }
    for (const std::string& fan_out : top->names) {
      const std::string fan_path = "objects/" + fan_out;
      unsigned low = 0;
      if (!ParseHex(fan_out, 2, &low)) {
        listing.strangers.push_back(fan_path);
        continue;
      }
      auto fan = OpenDirAt(dir_fd_, fan_path);
      if (!fan.ok()) {
        if (fan.err() != ENOTDIR) return fan.status();
        listing.strangers.push_back(fan_path);
        continue;
      }
      for (const std::string& name : fan->names) {
        uint64_t id = 0;
        struct stat st;
        const std::string path = fan_path + "/" + name;
        if (!ParseHex(name, 16, &id) || (id & 0xff) != low ||
            fstatat(dir_fd_, path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) {
          listing.strangers.push_back(path);
          continue;
        }
        listing.objects.push_back({id, static_cast<uint64_t>(st.st_size)});
      }
    }
    return listing;
  }

  // The entry names (without "." and "..") of directory `path` under `at`.
  struct DirNames {
    std::vector<std::string> names;
  };
  Result<DirNames> OpenDirAt(int at, const std::string& path) const {
    int fd = openat(at, path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      // O_NOFOLLOW on a symlink gives ELOOP: it is not a directory we made.
      return ErrnoStatus(err == ELOOP ? ENOTDIR : err, fmt::format("ost {}: open {}", dir_, path));
    }
    DIR* dir = fdopendir(fd);
    if (dir == nullptr) {
      int err = errno;
      close(fd);
      return ErrnoStatus(err, fmt::format("ost {}: opendir {}", dir_, path));
    }
    DirNames out;
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") out.names.push_back(name);
    }
    closedir(dir);
    return out;
  }

  // True when `text` is exactly `digits` lowercase hex digits (as
  // ObjectPath writes them); their value in `*value`.
  template <class Int>
  static bool ParseHex(const std::string& text, size_t digits, Int* value) {
    if (text.size() != digits) return false;
    Int v = 0;
    for (char c : text) {
      int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = static_cast<Int>(v * 16 + static_cast<Int>(d));
    }
    *value = v;
    return true;
  }

  Status MakeDirs(uint64_t id) {
    for (const std::string& d : {std::string("objects"), FanOutDir(id)}) {
      if (mkdirat(dir_fd_, d.c_str(), kPrivateDirMode) != 0 && errno != EEXIST) {
        int err = errno;
        return ErrnoStatus(err, fmt::format("ost {}: mkdir {}", dir_, d));
      }
    }
    return Status::Ok();
  }

  // The object size limit of the OST's filesystem, probed once (on the
  // first space sample, a background thread's call) and kept for the
  // mount's life: nothing is stored, the next mount probes again. A
  // read-only filesystem cannot be probed and limits nothing meanwhile
  // (every change fails with EROFS); the next sample after it became
  // writable probes.
  uint64_t MaxObjectSize(bool read_only) {
    uint64_t known = max_object_size_.load(std::memory_order_relaxed);
    if (known != kNoObjectLimit || read_only) return known;
    auto probed = ProbeMaxObjectSize(dir_fd_);
    if (!probed.ok()) {
      Logger("ost")->warn("ost {}: object size limit not known: {}", dir_, probed.status().ToString());
      return kNoObjectLimit;
    }
    max_object_size_.store(*probed, std::memory_order_relaxed);
    Logger("ost")->info("ost {}: objects may reach {} bytes", dir_, *probed);
    return *probed;
  }

  const int dir_fd_;
  const std::string dir_;
  std::atomic<uint64_t> max_object_size_{kNoObjectLimit};
};

}  // namespace

Result<uint64_t> ProbeMaxObjectSize(int dir_fd) {
  // A scratch file of the directory's filesystem, grown by ftruncate (no
  // block is allocated) to the largest size it accepts: EFBIG (or EINVAL)
  // above the filesystem's s_maxbytes, which bounds writes as well. The
  // name starts with a dot: never an object's, and fsck looks only in
  // objects/. One fixed name: only one daemon serves an OST directory, and
  // a file left by a daemon killed mid-probe is reused (O_TRUNC) and
  // removed by the next mount's probe instead of staying for ever.
  const std::string name = ".size-probe";
  int fd = openat(dir_fd, name.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                  kPrivateFileMode);
  if (fd < 0) {
    int err = errno;
    return ErrnoStatus(err, "create " + name);
  }
  // Only EFBIG and EINVAL say "too large"; any other error (EINTR, EIO,
  // ENOSPC where a filesystem allocates on extend) leaves the limit
  // unknown rather than too low for the whole mount.
  int err = 0;
  auto fits = [fd, &err](uint64_t size) {
    if (ftruncate(fd, static_cast<off_t>(size)) == 0) return true;
    if (errno != EFBIG && errno != EINVAL) err = errno;
    return false;
  };
  // A finite RLIMIT_FSIZE bounds the daemon's files too (beyond it a
  // ftruncate raises SIGXFSZ, which would end the daemon): search below it.
  uint64_t bad = static_cast<uint64_t>(INT64_MAX);
  struct rlimit fsize {};
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
      fsize.rlim_cur < bad) {
    bad = fsize.rlim_cur + 1;
  }
  uint64_t good = 0;  // invariant: fits(good), !fits(bad) unless good == kMaxOff
  constexpr uint64_t kMaxOff = static_cast<uint64_t>(INT64_MAX);
  if (bad == kMaxOff && fits(kMaxOff)) {
    good = kMaxOff;
  } else {
    while (err == 0 && bad - good > 1) {
      const uint64_t mid = good + (bad - good) / 2;
      (fits(mid) ? good : bad) = mid;
    }
  }
  (void)ftruncate(fd, 0);
  close(fd);
  unlinkat(dir_fd, name.c_str(), 0);
  if (err != 0) return ErrnoStatus(err, "ftruncate " + name);
  return good;
}

Result<std::unique_ptr<Backend>> NewPosixBackend(const std::string& dir) {
  int fd = open(dir.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return ErrnoStatus(err, fmt::format("ost {}: open directory", dir));
  }
  auto backend = std::make_unique<PosixBackend>(fd, dir);  // owns fd from here
  auto made_private = MakePrivate(fd, "OST directory " + dir);
  if (!made_private.ok()) return made_private.status();
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace sfs::ost
