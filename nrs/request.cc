#include "nrs/request.h"
#include "nrs/tunables.h"

namespace sfs::nrs {

const char* OpName(Op op) {
  switch (op) {
    case Op::kRead: return "read";
    case Op::kWrite: return "write";
    case Op::kTruncate: return "truncate";
    case Op::kPunch: return "punch";
    case Op::kAllocate: return "allocate";
    case Op::kSync: return "fsync";
    case Op::kDestroy: return "destroy";
    case Op::kSeek: return "seek";
    case Op::kLookup: return "lookup";
    case Op::kGetattr: return "getattr";
    case Op::kSetattr: return "setattr";
    case Op::kCreate: return "create";
    case Op::kMknod: return "mknod";
    case Op::kOpen: return "open";
    case Op::kReaddir: return "readdir";
    case Op::kMkdir: return "mkdir";
    case Op::kRmdir: return "rmdir";
    case Op::kUnlink: return "unlink";
    case Op::kRename: return "rename";
    case Op::kLink: return "link";
    case Op::kSymlink: return "symlink";
    case Op::kReadlink: return "readlink";
  }
  return "unknown";
}

const char* OrrSupportedName(OrrSupported supported) {
  switch (supported) {
    case OrrSupported::kReads: return "reads";
    case OrrSupported::kWrites: return "writes";
    case OrrSupported::kReadsAndWrites: return "reads_and_writes";
  }
  return "unknown";
}

const char* TbfScopeName(TbfScope scope) { return scope == TbfScope::kFs ? "fs" : "ost"; }

}  // namespace sfs::nrs
