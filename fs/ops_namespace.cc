// Names and inodes: lookup, getattr, mknod/mkdir/symlink/link, unlink,
// rmdir, rename, readlink (each through the metadata service's NRS heads),
// statfs (never scheduled: it must answer while metadata is throttled).
#include <sys/statvfs.h>

#include <cstring>
#include <string>

#include "fs/ops.h"
#include "fs/ops_common.h"
#include "control/ost_df.h"

namespace sfs::fs {
namespace {

void ServeLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Status valid = CheckName(name);
  if (!valid.ok()) return ReplyError(req, valid, "lookup");
  auto inode = Fs(req).meta().Lookup(parent, name);
  if (!inode.ok() && inode.err() == ENOENT) {
    // A negative entry the kernel may cache, sparing repeated lookups.
    fuse_entry_param entry;
    std::memset(&entry, 0, sizeof(entry));
    entry.entry_timeout = Fs(req).EntryTimeout(parent, 0);
    fuse_reply_entry(req, &entry);
    return;
  }
  ReplyEntry(req, parent, inode, "lookup");
}

// Inode numbers are never reused and inodes are kept by link count and open
// files, not by kernel lookups, so there is nothing to count.
void OpForget(fuse_req_t req, fuse_ino_t, uint64_t) { fuse_reply_none(req); }
void OpForgetMulti(fuse_req_t req, size_t, fuse_forget_data*) { fuse_reply_none(req); }

void ServeGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  auto inode = Fs(req).meta().GetInode(ino);
  // A directory removed while open still answers its descriptors.
  if (!inode.ok() && inode.err() == ENOENT) inode = Fs(req).RemovedDir(ino);
  ReplyAttr(req, inode, "getattr");
}

void ServeMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  ReplyEntry(req, parent, MakeNode(req, parent, name, mode, rdev, nullptr), "mknod");
}

void ServeMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  ReplyEntry(req, parent, MakeNode(req, parent, name, S_IFDIR | (mode & 07777), 0, nullptr), "mkdir");
}

void ServeSymlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  if (std::strlen(target) >= PATH_MAX) {
    return ReplyError(req, Status::Error(ENAMETOOLONG, "symlink target too long"), "symlink");
  }
  ReplyEntry(req, parent, MakeNode(req, parent, name, S_IFLNK | 0777, 0, target), "symlink");
}

void ServeLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  Status valid = CheckName(new_name);
  if (!valid.ok()) return ReplyError(req, valid, "link");
  ReplyEntry(req, new_parent, Fs(req).meta().Link(ino, new_parent, new_name), "link");
}

void ServeReadlink(fuse_req_t req, fuse_ino_t ino) {
  auto inode = Fs(req).meta().GetInode(ino);
  if (!inode.ok()) return ReplyError(req, inode.status(), "readlink");
  if (!S_ISLNK(inode->mode)) return ReplyError(req, Status::Error(EINVAL, "not a symlink"), "readlink");
  fuse_reply_readlink(req, inode->symlink.c_str());
}

void ServeUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Filesystem& fs = Fs(req);
  auto removed = fs.Unlink(parent, name);
  if (!removed.ok()) return ReplyError(req, removed.status(), "unlink");
  fuse_reply_err(req, 0);
}

void ServeRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  std::optional<meta::Inode> open_dir = Fs(req).OpenDirAt(parent, name);
  Status status = Fs(req).meta().Rmdir(parent, name);
  if (!status.ok()) return ReplyError(req, status, "rmdir");
  if (open_dir.has_value()) Fs(req).DirRemoved(std::move(*open_dir));
  fuse_reply_err(req, 0);
}

void ServeRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent,
              const char* new_name, unsigned int flags) {
  Filesystem& fs = Fs(req);
  Status valid = CheckName(new_name);
  if (!valid.ok()) return ReplyError(req, valid, "rename");
  meta::RenameMode mode = meta::RenameMode::kReplace;
  if (flags == RENAME_NOREPLACE) {
    mode = meta::RenameMode::kNoReplace;
  } else if (flags == RENAME_EXCHANGE) {
    mode = meta::RenameMode::kExchange;
  } else if (flags != 0) {
    return ReplyError(req, Status::Error(EINVAL, "unsupported rename flags " + std::to_string(flags)),
                      "rename");
  }
  std::optional<meta::Inode> open_dir;
  if (mode == meta::RenameMode::kReplace) open_dir = fs.OpenDirAt(new_parent, new_name);
  auto replaced = fs.meta().Rename(parent, name, new_parent, new_name, mode);
  if (!replaced.ok()) return ReplyError(req, replaced.status(), "rename");
  if (replaced->has_value() && (*replaced)->orphaned) fs.ForgetRemoved((*replaced)->ino);
  if (open_dir.has_value() && replaced->has_value() && (*replaced)->ino == open_dir->ino) {
    fs.DirRemoved(std::move(*open_dir));
  }
  fuse_reply_err(req, 0);
}

// What the FUSE table points at: each operation passes the metadata
// service's NRS heads first (ThroughMdt), with copies of its arguments.
void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  ThroughMdt(req, nrs::Op::kLookup, jobstats::JobOp::kLookup, parent,
             [req, parent, name = std::string(name)] { ServeLookup(req, parent, name.c_str()); });
}

// Not the root's: with default_permissions the kernel asks for the root's
// attributes before it lets anyone set a setting (an admin lifting a rule
// that holds every getattr) and df stats the mount point, and neither may
// wait behind a policy.
void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  ThroughMdt(req, nrs::Op::kGetattr, jobstats::JobOp::kGetattr, ino,
             [req, ino] { ServeGetattr(req, ino, nullptr); }, /*scheduled=*/ino != FUSE_ROOT_ID);
}

void OpMknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  ThroughMdt(req, nrs::Op::kMknod, jobstats::JobOp::kMknod, parent,
             [req, parent, name = std::string(name), mode, rdev] {
               ServeMknod(req, parent, name.c_str(), mode, rdev);
             });
}

void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  ThroughMdt(req, nrs::Op::kMkdir, jobstats::JobOp::kMkdir, parent,
             [req, parent, name = std::string(name), mode] {
               ServeMkdir(req, parent, name.c_str(), mode);
             });
}

void OpSymlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  ThroughMdt(req, nrs::Op::kSymlink, jobstats::JobOp::kSymlink, parent,
             [req, target = std::string(target), parent, name = std::string(name)] {
               ServeSymlink(req, target.c_str(), parent, name.c_str());
             });
}

void OpLink(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  ThroughMdt(req, nrs::Op::kLink, jobstats::JobOp::kLink, ino,
             [req, ino, new_parent, new_name = std::string(new_name)] {
               ServeLink(req, ino, new_parent, new_name.c_str());
             });
}

void OpReadlink(fuse_req_t req, fuse_ino_t ino) {
  ThroughMdt(req, nrs::Op::kReadlink, jobstats::JobOp::kReadlink, ino,
             [req, ino] { ServeReadlink(req, ino); });
}

void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  ThroughMdt(req, nrs::Op::kUnlink, jobstats::JobOp::kUnlink, parent,
             [req, parent, name = std::string(name)] { ServeUnlink(req, parent, name.c_str()); });
}

void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  ThroughMdt(req, nrs::Op::kRmdir, jobstats::JobOp::kRmdir, parent,
             [req, parent, name = std::string(name)] { ServeRmdir(req, parent, name.c_str()); });
}

void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent,
              const char* new_name, unsigned int flags) {
  ThroughMdt(req, nrs::Op::kRename, jobstats::JobOp::kRename, parent,
             [req, parent, name = std::string(name), new_parent,
              new_name = std::string(new_name), flags] {
               ServeRename(req, parent, name.c_str(), new_parent, new_name.c_str(), flags);
             });
}

void OpStatfs(fuse_req_t req, fuse_ino_t) {
  MetaJobCount count(req, jobstats::JobOp::kStatfs);
  Filesystem& fs = Fs(req);
  struct statvfs total;
  std::memset(&total, 0, sizeof(total));
  total.f_bsize = 4096;
  total.f_frsize = 4096;
  total.f_namemax = meta::kMaxNameLen;
  // From each OST's background sample, however old (ost_status says how
  // old): statfs must never wait on a disk that may hang. An OST never
  // sampled contributes nothing; a disk that several OSTs share counts once.
  const control::SpaceTotal space = control::SumOncePerFilesystem(fs.SpaceSamples());
  total.f_blocks = space.size / total.f_frsize;
  total.f_bfree = space.free / total.f_frsize;
  total.f_bavail = space.avail / total.f_frsize;
  total.f_files = space.inodes;
  total.f_ffree = space.ifree;
  total.f_favail = total.f_ffree;
  fuse_reply_statfs(req, &total);
}

}  // namespace

void AddNamespaceOps(fuse_lowlevel_ops* ops) {
  ops->lookup = OpLookup;
  ops->forget = OpForget;
  ops->forget_multi = OpForgetMulti;
  ops->getattr = OpGetattr;
  ops->mknod = OpMknod;
  ops->mkdir = OpMkdir;
  ops->symlink = OpSymlink;
  ops->link = OpLink;
  ops->readlink = OpReadlink;
  ops->unlink = OpUnlink;
  ops->rmdir = OpRmdir;
  ops->rename = OpRename;
  ops->statfs = OpStatfs;
}

}  // namespace sfs::fs
