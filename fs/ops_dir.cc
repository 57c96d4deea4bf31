// Directory handles. readdir reads the directory from the metadata store one
// batch per call, resuming after the last name the handle sent (see
// fs/dir_cursor.h for offsets and seekdir), so a handle holds one batch of
// names, not a copy of the directory. An entry that stays in the directory
// during a forward listing is listed exactly once and no entry twice; entries
// added or removed meanwhile may or may not appear (as POSIX allows).
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "fs/dir_cursor.h"
#include "fs/ops.h"
#include "fs/ops_common.h"

namespace sfs::fs {
namespace {

// The smallest dirent fuse_add_direntry writes (24-byte header and a name of
// up to 8 bytes, 8-aligned): a batch of size / kMinDirentSize entries always
// fills the reply, and what does not fit is dropped.
constexpr size_t kMinDirentSize = 32;
// Entries read per store call while counting towards a seekdir offset.
constexpr size_t kSkipBatch = 1024;
// The most a reply carries, whatever the kernel asks for. Recent kernels ask
// for as much as the caller's getdents buffer, up to max_pages (1 MiB here),
// and glibc's readdir sizes that buffer by st_blksize (1 MiB for stripefs):
// unbounded, a handle's last batch would again hold thousands of names.
// 32 KiB is glibc's default buffer: 1,000 short names per round trip.
constexpr size_t kMaxReplySize = 32 * 1024;

struct DirHandle {
  // The kernel sends one readdir at a time per open directory (the fuse
  // file's readdir mutex and the file position lock), so this mutex is never
  // contended; it keeps the cursor safe should that ever change.
  std::mutex mu;
  DirCursor cursor;  // guarded by mu
};

DirHandle* Handle(fuse_file_info* fi) { return reinterpret_cast<DirHandle*>(fi->fh); }

// Appends dirents to a reply buffer of the kernel's size.
class DirentBuffer {
 public:
  DirentBuffer(fuse_req_t req, size_t size) : req_(req), data_(size) {}
  // False (and nothing added) when the entry does not fit.
  bool Add(const std::string& name, uint64_t ino, uint32_t mode, uint64_t next_off) {
    struct stat st;
    std::memset(&st, 0, sizeof(st));
    st.st_ino = ino;
    st.st_mode = mode & S_IFMT;
    const size_t need = fuse_add_direntry(req_, data_.data() + used_, room(), name.c_str(), &st,
                                          static_cast<off_t>(next_off));
    if (need > room()) return false;
    used_ += need;
    return true;
  }
  const char* data() const { return data_.data(); }
  size_t used() const { return used_; }
  size_t room() const { return data_.size() - used_; }

 private:
  fuse_req_t req_;
  std::vector<char> data_;
  size_t used_ = 0;
};

// Moves `*after` forward over `count` entries. False at the end of the
// directory (the offset lies beyond it).
Result<bool> SkipEntries(meta::MetaStore& meta, fuse_ino_t ino, uint64_t count,
                         std::string* after) {
  while (count > 0) {
    const size_t want = count < kSkipBatch ? count : kSkipBatch;
    auto batch = meta.ReadDirAfter(ino, *after, want);
    SFS_RETURN_IF_ERROR(batch);
    if (batch->empty()) return false;
    *after = std::move(batch->back().name);
    count -= batch->size();
    if (batch->size() < want && count > 0) return false;
  }
  return true;
}

Status DoReaddir(Filesystem& fs, fuse_ino_t ino, uint64_t off, DirHandle* dir, DirentBuffer* out) {
  std::lock_guard<std::mutex> lock(dir->mu);
  if (off == 0) dir->cursor.Restart();
  if (off < DirCursor::kDotDotOffset) {
    auto self = fs.meta().GetInode(ino);
    if (!self.ok()) return self.status();
    if (!S_ISDIR(self->mode)) return Status::Error(ENOTDIR, "not a directory");
    if (off == 0 && !out->Add(".", ino, S_IFDIR, DirCursor::kDotOffset)) return Status::Ok();
    const uint64_t parent = self->parent != 0 ? self->parent : ino;
    if (!out->Add("..", parent, S_IFDIR, DirCursor::kDotDotOffset)) return Status::Ok();
    off = DirCursor::kDotDotOffset;
  }

  DirCursor::Position at = dir->cursor.Find(off);
  auto found = SkipEntries(fs.meta(), ino, at.skip, &at.after);
  if (!found.ok()) return found.status();
  if (!*found) return Status::Ok();  // past the end: an empty reply ends the listing

  // Enough entries to fill the rest of the buffer even if every name is
  // short; what does not fit is dropped and read again by the next call.
  const size_t max_entries = std::max<size_t>(1, out->room() / kMinDirentSize);
  auto batch = fs.meta().ReadDirAfter(ino, at.after, max_entries);
  if (!batch.ok()) return batch.status();
  std::vector<std::string> sent;
  uint64_t next = off + 1;
  for (meta::DirEntry& entry : *batch) {
    if (!out->Add(entry.name, entry.ino, entry.mode, next)) break;
    sent.push_back(std::move(entry.name));
    ++next;
  }
  dir->cursor.Sent(off, std::move(at.after), std::move(sent));
  return Status::Ok();
}

void ServeOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto inode = Fs(req).meta().GetInode(ino);
  if (!inode.ok()) return ReplyError(req, inode.status(), "opendir");
  if (!S_ISDIR(inode->mode)) {
    return ReplyError(req, Status::Error(ENOTDIR, "not a directory"), "opendir");
  }
  fi->fh = reinterpret_cast<uint64_t>(new DirHandle);
  Fs(req).OpenDir(ino);
  fuse_reply_open(req, fi);
}

void ServeReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, DirHandle* dir) {
  DirentBuffer out(req, std::min(size, kMaxReplySize));
  Status status = DoReaddir(Fs(req), ino, static_cast<uint64_t>(off), dir, &out);
  if (!status.ok()) return ReplyError(req, status, "readdir");
  fuse_reply_buf(req, out.data(), out.used());
}

// Opendir and readdir pass the metadata service's NRS heads (ThroughMdt).
// The directory handle outlives a queued readdir: the kernel releases it
// only after every request on it was answered.
void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  ThroughMdt(req, nrs::Op::kOpen, jobstats::JobOp::kOpen, ino,
             [req, ino, info = *fi]() mutable { ServeOpendir(req, ino, &info); });
}

void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  ThroughMdt(req, nrs::Op::kReaddir, jobstats::JobOp::kReaddir, ino,
             [req, ino, size, off, dir = Handle(fi)] { ServeReaddir(req, ino, size, off, dir); });
}

void OpReleasedir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  MetaJobCount count(req, jobstats::JobOp::kClose);
  delete Handle(fi);
  Fs(req).ReleaseDir(ino);
  fuse_reply_err(req, 0);
}

void OpFsyncdir(fuse_req_t req, fuse_ino_t, int, fuse_file_info*) {
  // Directory entries live only in the metadata store: syncing its WAL
  // makes them durable.
  Status synced = Fs(req).meta().Sync();
  if (!synced.ok()) return ReplyError(req, synced, "fsyncdir");
  fuse_reply_err(req, 0);
}

}  // namespace

void AddDirOps(fuse_lowlevel_ops* ops) {
  ops->opendir = OpOpendir;
  ops->readdir = OpReaddir;
  ops->releasedir = OpReleasedir;
  ops->fsyncdir = OpFsyncdir;
}

}  // namespace sfs::fs
