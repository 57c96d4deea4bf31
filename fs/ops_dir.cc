// Directory handles. readdir serves a snapshot taken when the listing starts
// (offset 0), so a directory that changes while it is listed never makes an
// entry that stayed in it appear twice or vanish (POSIX leaves new and
// removed entries unspecified).
#include <cstring>
#include <vector>

#include "fs/ops.h"
#include "fs/ops_common.h"

namespace sfs::fs {
namespace {

struct DirHandle {
  // Accessed only by readdir calls on this handle, which the kernel
  // serializes (f_pos lock); no mutex needed.
  std::vector<meta::DirEntry> entries;
};

DirHandle* Handle(fuse_file_info* fi) { return reinterpret_cast<DirHandle*>(fi->fh); }

Status Snapshot(Filesystem& fs, fuse_ino_t ino, DirHandle* dir) {
  auto self = fs.meta().GetInode(ino);
  if (!self.ok()) return self.status();
  auto listed = fs.meta().ReadDir(ino);
  if (!listed.ok()) return listed.status();
  dir->entries.clear();
  dir->entries.reserve(listed->size() + 2);
  dir->entries.push_back({".", ino, S_IFDIR});
  dir->entries.push_back({"..", self->parent != 0 ? self->parent : ino, S_IFDIR});
  for (auto& entry : *listed) dir->entries.push_back(std::move(entry));
  return Status::Ok();
}

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  auto inode = Fs(req).meta().GetInode(ino);
  if (!inode.ok()) return ReplyError(req, inode.status(), "opendir");
  if (!S_ISDIR(inode->mode)) return ReplyError(req, Status::Error(ENOTDIR, "not a directory"), "opendir");
  fi->fh = reinterpret_cast<uint64_t>(new DirHandle);
  fuse_reply_open(req, fi);
}

void OpReaddir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info* fi) {
  DirHandle* dir = Handle(fi);
  // A fresh handle may start at a saved offset (seekdir after reopening);
  // it lists from a new snapshot, which is as good as POSIX promises.
  if (off == 0 || dir->entries.empty()) {
    Status status = Snapshot(Fs(req), ino, dir);
    if (!status.ok()) return ReplyError(req, status, "readdir");
  }
  std::vector<char> buffer(size);
  size_t used = 0;
  for (size_t index = static_cast<size_t>(off); index < dir->entries.size(); ++index) {
    const meta::DirEntry& entry = dir->entries[index];
    struct stat st;
    std::memset(&st, 0, sizeof(st));
    st.st_ino = entry.ino;
    st.st_mode = entry.mode & S_IFMT;
    // The offset stored with an entry is where the next call resumes.
    size_t need = fuse_add_direntry(req, buffer.data() + used, size - used, entry.name.c_str(),
                                    &st, static_cast<off_t>(index + 1));
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buffer.data(), used);
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  delete Handle(fi);
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
