// Extended attributes. user.* names are stored in the metadata store;
// user.stripefs.* is reserved: "layout" and "projid" on files and
// directories (fs/layout_xattr.cc; the owner or an admin may set them), and
// on the mount root each run-time setting (jobid_var, jobid_name, the NRS
// settings of control/nrs_control.h, the placement settings of
// control/placement_control.h), read by anyone and written by root or admin_uid. Other namespaces are not supported.
#include <sys/xattr.h>

#include <cstring>
#include <string>
#include <thread>

#include "common/log.h"
#include "common/text.h"
#include "fs/ops.h"
#include "fs/ops_common.h"
#include "ring/fuse_ring.h"

namespace sfs::fs {
namespace {

constexpr std::string_view kUserPrefix = "user.";
constexpr std::string_view kReservedPrefix = "user.stripefs.";
constexpr std::string_view kLayoutName = "layout";
constexpr std::string_view kProjidName = "projid";

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

Result<std::string> GetReserved(Filesystem& fs, fuse_ino_t ino, const std::string& key) {
  if (key == kLayoutName) return fs.GetLayoutXattr(ino);
  if (key == kProjidName) return fs.GetProjid(ino);
  if (ino == meta::kRootIno && Filesystem::IsSettingName(key)) return fs.GetSetting(key);
  return Status::Error(ENODATA, "unknown stripefs attribute user.stripefs." + key);
}

// XATTR_CREATE and XATTR_REPLACE on a reserved name: it "exists" when
// getxattr of it would succeed, so a setting that has a default value always
// exists and XATTR_CREATE of it is EEXIST; a pool, a rule or a directory's
// layout exists once set. Checked just before the change, not atomically
// with it (two racing setxattr calls may both pass).
Status CheckReservedFlags(Filesystem& fs, fuse_ino_t ino, const std::string& key, int flags) {
  if ((flags & (XATTR_CREATE | XATTR_REPLACE)) == 0) return Status::Ok();
  Result<std::string> current = GetReserved(fs, ino, key);
  if (!current.ok() && current.err() != ENODATA) return current.status();
  if ((flags & XATTR_CREATE) && current.ok()) {
    return Status::Error(EEXIST, "user.stripefs." + key + " has a value (XATTR_CREATE)");
  }
  if ((flags & XATTR_REPLACE) && !current.ok()) {
    return Status::Error(ENODATA, "user.stripefs." + key + " has no value (XATTR_REPLACE)");
  }
  return Status::Ok();
}

Status SetReserved(fuse_req_t req, fuse_ino_t ino, const std::string& key, const std::string& value,
                   int flags) {
  Filesystem& fs = Fs(req);
  const uid_t caller = fuse_req_ctx(req)->uid;
  const bool known = key == kLayoutName || key == kProjidName ||
                     (ino == meta::kRootIno && Filesystem::IsSettingName(key));
  if (!known) {
    return Status::Error(EINVAL, "unknown stripefs attribute user.stripefs." + key +
                                     (ino != meta::kRootIno ? " (settings live on the mount root)" : ""));
  }
  SFS_RETURN_IF_ERROR(CheckReservedFlags(fs, ino, key, flags));
  if (key == kLayoutName) return fs.SetLayoutXattr(caller, ino, value);
  if (key == kProjidName) return fs.SetProjid(caller, ino, value);
  if (!fs.IsAdmin(caller)) {
    return Status::Error(EPERM, "uid " + std::to_string(caller) + " may not change setting " + key);
  }
  // It makes the daemon (root) create and take over a directory anywhere:
  // root's alone, as mkfs is, whatever admin_uid says.
  if (key == kOstAddName && caller != 0) {
    return Status::Error(EPERM, "only root may add an OST (uid " + std::to_string(caller) + ")");
  }
  return fs.SetSetting(key, value, caller);
}

// "user." alone names nothing: EINVAL, as the kernel answers for a local
// filesystem (FUSE passes the name through untouched).
Status CheckUserName(const std::string& full) {
  if (full == kUserPrefix) return Status::Error(EINVAL, "empty attribute name after 'user.'");
  return Status::Ok();
}

Status RemoveReserved(fuse_req_t req, fuse_ino_t ino, const std::string& key) {
  Filesystem& fs = Fs(req);
  const uid_t caller = fuse_req_ctx(req)->uid;
  if (key == kLayoutName) return fs.RemoveLayoutXattr(caller, ino);
  if (key == kProjidName) return fs.RemoveProjid(caller, ino);
  if (ino != meta::kRootIno || !Filesystem::IsSettingName(key)) {
    return Status::Error(EINVAL, "stripefs attribute user.stripefs." + key + " cannot be removed");
  }
  if (!fs.IsAdmin(caller)) {
    return Status::Error(EPERM, "uid " + std::to_string(caller) + " may not change setting " + key);
  }
  return fs.RemoveSetting(key, caller);
}

// A refused stripefs setting is bad input whatever its errno (an unknown
// rule is ENOENT, a rule name in use EEXIST), so it is always one warning
// line, which is where the CLI sends the user to read why.
void ReplySettingError(fuse_req_t req, const Status& status, const char* op,
                       const std::string& name) {
  Logger("fs")->warn("{} {}: {}", op, Printable(name), Printable(status.ToString()));
  fuse_reply_err(req, status.err());
}

// getxattr/listxattr reply rules: size 0 asks for the length.
void ReplyValue(fuse_req_t req, const std::string& value, size_t size, const char* op) {
  if (size == 0) {
    fuse_reply_xattr(req, value.size());
  } else if (value.size() > size) {
    ReplyError(req, Status::Error(ERANGE, "buffer too small"), op);
  } else {
    fuse_reply_buf(req, value.data(), value.size());
  }
}

void SetxattrOn(fuse_req_t req, fuse_ino_t ino, const std::string& full, const std::string& data,
                int flags);

void OpSetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value,
                size_t size, int flags) {
  const std::string full(name);
  std::string data(value, size);
  if (ring::FuseRing::OnQueueThread() && full == std::string(kReservedPrefix) + kOstAddName) {
    // Adding an OST walks its path, and a step may be this very mount seen
    // elsewhere (a bind mount): its statfs comes back to this daemon, on
    // this CPU's queue, whose thread would be the one waiting for it. So
    // on a thread of its own; counted in flight, so unmount waits for it.
    Filesystem& fs = Fs(req);
    fs.OpStarted();
    std::thread([req, ino, full, data = std::move(data), flags, &fs] {
      SetxattrOn(req, ino, full, data, flags);
      fs.OpFinished();
    }).detach();
    return;
  }
  SetxattrOn(req, ino, full, data, flags);
}

void SetxattrOn(fuse_req_t req, fuse_ino_t ino, const std::string& full, const std::string& data,
                int flags) {
  MetaJobCount count(req, jobstats::JobOp::kSetxattr);
  const ClientCallerScope caller(Fs(req), Caller(req, Fs(req)));
  Status status;
  if (StartsWith(full, kReservedPrefix)) {
    status = SetReserved(req, ino, full.substr(kReservedPrefix.size()), data, flags);
    if (!status.ok()) return ReplySettingError(req, status, "setxattr", full);
  } else if (StartsWith(full, kUserPrefix)) {
    status = CheckUserName(full);
    if (status.ok()) status = Fs(req).meta().SetXattr(ino, full, data, flags);
  } else {
    status = Status::Error(EOPNOTSUPP, "only user.* attributes are supported, not " + full);
  }
  if (!status.ok()) return ReplyError(req, status, "setxattr");
  fuse_reply_err(req, 0);
}

void OpGetxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  MetaJobCount count(req, jobstats::JobOp::kGetxattr);
  const ClientCallerScope caller(Fs(req), Caller(req, Fs(req)));
  const std::string full(name);
  Result<std::string> value = Status::Error(ENODATA, "no attribute " + full);
  if (StartsWith(full, kReservedPrefix)) {
    value = GetReserved(Fs(req), ino, full.substr(kReservedPrefix.size()));
  } else if (StartsWith(full, kUserPrefix)) {
    Status name = CheckUserName(full);
    value = name.ok() ? Fs(req).meta().GetXattr(ino, full) : Result<std::string>(name);
  }
  if (!value.ok()) return ReplyError(req, value.status(), "getxattr");
  ReplyValue(req, *value, size, "getxattr");
}

void OpListxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  MetaJobCount count(req, jobstats::JobOp::kGetxattr);
  const ClientCallerScope caller(Fs(req), Caller(req, Fs(req)));
  // Reserved names are not listed (a directory stores its default layout
  // and project id among its attributes), so cp -a and tar --xattrs do not
  // try to copy a layout onto the new file.
  auto names = Fs(req).meta().ListXattr(ino);
  if (!names.ok()) return ReplyError(req, names.status(), "listxattr");
  std::string joined;
  for (const std::string& name : *names) {
    if (StartsWith(name, kReservedPrefix)) continue;
    joined += name;
    joined.push_back('\0');
  }
  ReplyValue(req, joined, size, "listxattr");
}

void OpRemovexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  MetaJobCount count(req, jobstats::JobOp::kSetxattr);
  const ClientCallerScope caller(Fs(req), Caller(req, Fs(req)));
  const std::string full(name);
  Status status;
  if (StartsWith(full, kReservedPrefix)) {
    status = RemoveReserved(req, ino, full.substr(kReservedPrefix.size()));
    if (!status.ok()) return ReplySettingError(req, status, "removexattr", full);
  } else if (StartsWith(full, kUserPrefix)) {
    status = CheckUserName(full);
    if (status.ok()) status = Fs(req).meta().RemoveXattr(ino, full);
  } else {
    status = Status::Error(EOPNOTSUPP, "only user.* attributes are supported, not " + full);
  }
  if (!status.ok()) return ReplyError(req, status, "removexattr");
  fuse_reply_err(req, 0);
}

}  // namespace

void AddXattrOps(fuse_lowlevel_ops* ops) {
  ops->setxattr = OpSetxattr;
  ops->getxattr = OpGetxattr;
  ops->listxattr = OpListxattr;
  ops->removexattr = OpRemovexattr;
}

}  // namespace sfs::fs
