// The metadata store's types on the wire (rpc/mds.proto) and back, and what
// of a metadata call its signature covers (rpc/auth.h). Shared by both
// sides: the client's store (client/remote_meta.h) and the MDS
// (mds/server.h).
#pragma once

#include <string>

#include "common/quota_id.h"
#include "common/status.h"
#include "meta/meta_store.h"
#include "rpc/mds.grpc.pb.h"  // generated (rpc/CMakeLists.txt)

namespace sfs::rpc {

inline constexpr const char* kMetaMethod = "Meta";
inline constexpr const char* kCallbacksMethod = "Callbacks";  // signs no fields

// The call's bytes as signed: its deterministic serialization. Both sides
// serialize the same fields of the same schema in field order, so the MDS
// reproduces exactly what the client signed (a field one side does not
// know is kept and written back by protobuf, last).
std::string MetaCallFields(const MetaCall& call);

void ToWire(const meta::Inode& inode, Inode* out);
meta::Inode FromWire(const Inode& inode);
void ToWire(const meta::NewNode& node, NewNode* out);
meta::NewNode FromWire(const NewNode& node);
void ToWire(const meta::AttrChange& change, AttrChange* out);
meta::AttrChange FromWire(const AttrChange& change);
void ToWire(const meta::Removed& removed, Removed* out);
meta::Removed FromWire(const Removed& removed);
void ToWire(const QuotaId& id, const QuotaUsage& usage, Usage* out);
std::pair<QuotaId, QuotaUsage> FromWire(const Usage& usage);

// A reply's outcome as a Status (err, message).
Status StatusOf(const MetaReply& reply);
void SetStatus(const Status& status, MetaReply* reply);

}  // namespace sfs::rpc
