#include "rpc/meta_wire.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

namespace sfs::rpc {
namespace {

void ToWire(const meta::Timestamp& time, Time* out) {
  out->set_sec(time.sec);
  out->set_nsec(time.nsec);
}
meta::Timestamp FromWire(const Time& time) { return {time.sec(), time.nsec()}; }

}  // namespace

std::string MetaCallFields(const MetaCall& call) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  call.SerializeToCodedStream(&coded);
  coded.Trim();
  return bytes;
}

void ToWire(const meta::Inode& inode, Inode* out) {
  out->set_ino(inode.ino);
  out->set_mode(inode.mode);
  out->set_uid(inode.uid);
  out->set_gid(inode.gid);
  out->set_nlink(inode.nlink);
  out->set_size(inode.size);
  out->set_rdev(inode.rdev);
  out->set_parent(inode.parent);
  ToWire(inode.atime, out->mutable_atime());
  ToWire(inode.mtime, out->mutable_mtime());
  ToWire(inode.ctime, out->mutable_ctime());
  out->set_allocated(inode.allocated);
  out->set_projid(inode.projid);
  out->set_may_have_xattrs(inode.may_have_xattrs);
  out->set_symlink(inode.symlink);
}

meta::Inode FromWire(const Inode& in) {
  meta::Inode inode;
  inode.ino = in.ino();
  inode.mode = in.mode();
  inode.uid = in.uid();
  inode.gid = in.gid();
  inode.nlink = in.nlink();
  inode.size = in.size();
  inode.rdev = in.rdev();
  inode.parent = in.parent();
  inode.atime = FromWire(in.atime());
  inode.mtime = FromWire(in.mtime());
  inode.ctime = FromWire(in.ctime());
  inode.allocated = in.allocated();
  inode.projid = in.projid();
  inode.may_have_xattrs = in.may_have_xattrs();
  inode.symlink = in.symlink();
  return inode;
}

void ToWire(const meta::NewNode& node, NewNode* out) {
  out->set_mode(node.mode);
  out->set_uid(node.uid);
  out->set_gid(node.gid);
  out->set_rdev(node.rdev);
  out->set_symlink(node.symlink);
  out->set_layout(node.layout);
  for (const auto& [name, value] : node.xattrs) (*out->mutable_xattrs())[name] = value;
}

meta::NewNode FromWire(const NewNode& in) {
  meta::NewNode node;
  node.mode = in.mode();
  node.uid = in.uid();
  node.gid = in.gid();
  node.rdev = in.rdev();
  node.symlink = in.symlink();
  node.layout = in.layout();
  for (const auto& [name, value] : in.xattrs()) node.xattrs[name] = value;
  return node;
}

void ToWire(const meta::AttrChange& change, AttrChange* out) {
  if (change.mode) {
    out->set_has_mode(true);
    out->set_mode(*change.mode);
  }
  if (change.uid) {
    out->set_has_uid(true);
    out->set_uid(*change.uid);
  }
  if (change.gid) {
    out->set_has_gid(true);
    out->set_gid(*change.gid);
  }
  if (change.size) {
    out->set_has_size(true);
    out->set_size(*change.size);
  }
  if (change.atime) ToWire(*change.atime, out->mutable_atime());
  if (change.mtime) ToWire(*change.mtime, out->mutable_mtime());
  if (change.projid) {
    out->set_has_projid(true);
    out->set_projid(*change.projid);
  }
  out->set_kill_setid(change.kill_setid);
}

meta::AttrChange FromWire(const AttrChange& in) {
  meta::AttrChange change;
  if (in.has_mode()) change.mode = in.mode();
  if (in.has_uid()) change.uid = in.uid();
  if (in.has_gid()) change.gid = in.gid();
  if (in.has_size()) change.size = in.size();
  if (in.has_atime()) change.atime = FromWire(in.atime());
  if (in.has_mtime()) change.mtime = FromWire(in.mtime());
  if (in.has_projid()) change.projid = in.projid();
  change.kill_setid = in.kill_setid();
  return change;
}

void ToWire(const meta::Removed& removed, Removed* out) {
  out->set_ino(removed.ino);
  out->set_mode(removed.mode);
  out->set_nlink_left(removed.nlink_left);
  out->set_orphaned(removed.orphaned);
  out->set_purged(removed.purged);
}

meta::Removed FromWire(const Removed& in) {
  meta::Removed removed;
  removed.ino = in.ino();
  removed.mode = in.mode();
  removed.nlink_left = in.nlink_left();
  removed.orphaned = in.orphaned();
  removed.purged = in.purged();
  return removed;
}

void ToWire(const QuotaId& id, const QuotaUsage& usage, Usage* out) {
  out->set_type(static_cast<uint32_t>(id.type));
  out->set_id(id.id);
  out->set_bytes(usage.bytes);
  out->set_inodes(usage.inodes);
  out->set_block_grace_end(usage.block_grace_end);
  out->set_inode_grace_end(usage.inode_grace_end);
}

std::pair<QuotaId, QuotaUsage> FromWire(const Usage& in) {
  QuotaId id;
  id.type = static_cast<QuotaType>(in.type());
  id.id = in.id();
  QuotaUsage usage;
  usage.bytes = in.bytes();
  usage.inodes = in.inodes();
  usage.block_grace_end = in.block_grace_end();
  usage.inode_grace_end = in.inode_grace_end();
  return {id, usage};
}

Status StatusOf(const MetaReply& reply) {
  if (reply.err() == 0) return Status::Ok();
  return Status::Error(reply.err(), reply.message());
}

void SetStatus(const Status& status, MetaReply* reply) {
  reply->set_err(status.err());
  if (!status.ok()) reply->set_message(status.message());
}

}  // namespace sfs::rpc
