// meta::MetaStore over the metadata service (client/mds_client.h).
#include <mutex>

#include "client/mds_client.h"
#include "rpc/meta_wire.h"

namespace sfs::client {
namespace {

Status NotHere(const char* what) {
  return Status::Error(EOPNOTSUPP, std::string(what) +
                                       " runs on the metadata service's machine (stripefs fsck)");
}

class RemoteMetaStore final : public meta::MetaStore {
 public:
  explicit RemoteMetaStore(std::shared_ptr<MdsClient> mds) : mds_(std::move(mds)) {}

  Result<std::string> GetSetting(const std::string& name) override {
    rpc::MetaCall call = Op(rpc::GET_SETTING);
    call.set_name(name);
    auto reply = Run(std::move(call));
    if (!reply.ok()) return reply.status();
    return reply->value();
  }
  Result<std::map<std::string, std::string>> AllSettings() override {
    auto reply = Run(Op(rpc::ALL_SETTINGS));
    if (!reply.ok()) return reply.status();
    return std::map<std::string, std::string>(reply->settings().begin(), reply->settings().end());
  }
  Status PutSetting(const std::string& name, const std::string& value) override {
    return PutSettings({{name, value}}, {});
  }
  Status PutSettings(const std::map<std::string, std::string>& values,
                     const std::vector<std::string>& erase) override {
    rpc::MetaCall call = Op(rpc::PUT_SETTINGS);
    for (const auto& [name, value] : values) (*call.mutable_settings())[name] = value;
    for (const std::string& name : erase) call.add_erase(name);
    return Run(std::move(call)).status();
  }

  Result<meta::Inode> GetInode(uint64_t ino) override {
    rpc::MetaCall call = Op(rpc::GET_INODE);
    call.set_ino(ino);
    return InodeOf(Run(std::move(call)));
  }
  Result<meta::Inode> Lookup(uint64_t parent, const std::string& name) override {
    // In a directory this client knows whole (it made it, no one else
    // changed it since): no call (the lookup before each create).
    if (mds_->KnownAbsent(parent, name)) {
      return Status::Error(ENOENT, "no '" + name + "' in directory " + std::to_string(parent));
    }
    rpc::MetaCall call = Op(rpc::LOOKUP);
    call.set_ino(parent);
    call.set_name(name);
    return InodeOf(Run(std::move(call)));
  }
  Result<meta::Inode> Create(uint64_t parent, const std::string& name,
                             const meta::NewNode& node) override {
    rpc::MetaCall call = Op(rpc::CREATE);
    call.set_ino(parent);
    call.set_name(name);
    rpc::ToWire(node, call.mutable_node());
    return InodeOf(Run(std::move(call)));
  }
  Result<meta::Inode> Link(uint64_t ino, uint64_t new_parent, const std::string& new_name) override {
    rpc::MetaCall call = Op(rpc::LINK);
    call.set_ino(ino);
    call.set_ino2(new_parent);
    call.set_name2(new_name);
    return InodeOf(Run(std::move(call)));
  }
  // `purge_now` asks about this client's open files only; the MDS asks its
  // own table, which counts every client's opens (MdsClient::Open), so
  // the callback is not needed here: the MDS's Unlink decides.
  Result<meta::Removed> Unlink(uint64_t parent, const std::string& name,
                               const meta::PurgeNow&) override {
    return mds_->Unlink(parent, name);
  }
  Status Rmdir(uint64_t parent, const std::string& name) override {
    rpc::MetaCall call = Op(rpc::RMDIR);
    call.set_ino(parent);
    call.set_name(name);
    return Run(std::move(call)).status();
  }
  Result<std::optional<meta::Removed>> Rename(uint64_t parent, const std::string& name,
                                              uint64_t new_parent, const std::string& new_name,
                                              meta::RenameMode mode) override {
    rpc::MetaCall call = Op(rpc::RENAME);
    call.set_ino(parent);
    call.set_name(name);
    call.set_ino2(new_parent);
    call.set_name2(new_name);
    call.set_number(static_cast<uint64_t>(mode));
    auto reply = Run(std::move(call));
    if (!reply.ok()) return reply.status();
    if (!reply->has_removed()) return std::optional<meta::Removed>();
    return std::optional<meta::Removed>(rpc::FromWire(reply->removed()));
  }
  Result<meta::Inode> SetAttr(uint64_t ino, const meta::AttrChange& change) override {
    rpc::MetaCall call = Op(rpc::SET_ATTR);
    call.set_ino(ino);
    rpc::ToWire(change, call.mutable_change());
    return InodeOf(Run(std::move(call)));
  }
  Result<meta::Inode> NoteWrite(uint64_t ino, uint64_t end, bool kill_suid,
                                bool touch_times) override {
    rpc::MetaCall call = Op(rpc::NOTE_WRITE);
    call.set_ino(ino);
    call.set_number(end);
    call.set_flag(kill_suid);
    call.set_flag2(touch_times);
    return InodeOf(Run(std::move(call)));
  }
  Result<std::vector<meta::DirEntry>> ReadDirAfter(uint64_t ino, const std::string& after,
                                                   size_t max_entries) override {
    rpc::MetaCall call = Op(rpc::READ_DIR_AFTER);
    call.set_ino(ino);
    call.set_name(after);
    call.set_number(max_entries);
    auto reply = Run(std::move(call));
    if (!reply.ok()) return reply.status();
    std::vector<meta::DirEntry> entries;
    entries.reserve(reply->entries_size());
    for (const rpc::DirEntry& entry : reply->entries()) {
      entries.push_back({entry.name(), entry.ino(), entry.mode()});
    }
    return entries;
  }

  Result<std::string> GetLayout(uint64_t ino) override {
    rpc::MetaCall call = Op(rpc::GET_LAYOUT);
    call.set_ino(ino);
    return ValueOf(Run(std::move(call)));
  }
  Status PutLayout(uint64_t ino, const std::string& blob, uint64_t allocated) override {
    rpc::MetaCall call = Op(rpc::PUT_LAYOUT);
    call.set_ino(ino);
    call.set_value(blob);
    call.set_number(allocated);
    return Run(std::move(call)).status();
  }

  Result<std::string> GetXattr(uint64_t ino, const std::string& name) override {
    rpc::MetaCall call = Op(rpc::GET_XATTR);
    call.set_ino(ino);
    call.set_name(name);
    return ValueOf(Run(std::move(call)));
  }
  Result<std::vector<std::string>> ListXattr(uint64_t ino) override {
    rpc::MetaCall call = Op(rpc::LIST_XATTR);
    call.set_ino(ino);
    auto reply = Run(std::move(call));
    if (!reply.ok()) return reply.status();
    return std::vector<std::string>(reply->names().begin(), reply->names().end());
  }
  Status SetXattr(uint64_t ino, const std::string& name, const std::string& value,
                  int flags) override {
    rpc::MetaCall call = Op(rpc::SET_XATTR);
    call.set_ino(ino);
    call.set_name(name);
    call.set_value(value);
    call.set_number(static_cast<uint64_t>(flags));
    return Run(std::move(call)).status();
  }
  Status RemoveXattr(uint64_t ino, const std::string& name) override {
    rpc::MetaCall call = Op(rpc::REMOVE_XATTR);
    call.set_ino(ino);
    call.set_name(name);
    return Run(std::move(call)).status();
  }

  Result<std::vector<uint64_t>> Orphans() override { return Numbers(Run(Op(rpc::ORPHANS))); }
  Status Purge(uint64_t ino) override {
    rpc::MetaCall call = Op(rpc::PURGE);
    call.set_ino(ino);
    return Run(std::move(call)).status();
  }
  Status MarkWriting(uint64_t ino, bool writing) override {
    rpc::MetaCall call = Op(rpc::MARK_WRITING);
    call.set_ino(ino);
    call.set_flag(writing);
    return Run(std::move(call)).status();
  }
  Result<std::vector<uint64_t>> Writing() override { return Numbers(Run(Op(rpc::WRITING))); }
  Result<uint64_t> AllocateObjectIds(uint32_t count) override {
    rpc::MetaCall call = Op(rpc::ALLOCATE_OBJECT_IDS);
    call.set_number(count);
    auto reply = Run(std::move(call));
    if (!reply.ok()) return reply.status();
    return reply->number();
  }

  // Soft limits are the MDS's (its quota control sets them from the
  // stored limits when it starts and when they change).
  Status SetSoftLimits(const std::map<QuotaId, meta::SoftLimit>&, QuotaGrace) override {
    return Status::Ok();
  }
  void SetUsageObserver(meta::UsageObserver observer) override {
    if (!observer) return;
    for (const auto& [id, usage] : AllUsage()) observer(id, usage);
  }
  std::map<QuotaId, QuotaUsage> AllUsage() override {
    std::map<QuotaId, QuotaUsage> usage;
    auto reply = Run(Op(rpc::ALL_USAGE));
    if (!reply.ok()) return usage;
    for (const rpc::Usage& one : reply->usage()) usage.insert(rpc::FromWire(one));
    return usage;
  }
  QuotaUsage GetUsage(const QuotaId& id) override {
    auto all = AllUsage();
    auto it = all.find(id);
    return it == all.end() ? QuotaUsage{} : it->second;
  }

  Status ScanInodes(const std::function<void(uint64_t, const Result<meta::Inode>&)>&) override {
    return NotHere("a scan of every inode");
  }
  Status ScanDirents(const std::function<void(uint64_t, const std::string&,
                                              const Result<meta::DirEntry>&)>&) override {
    return NotHere("a scan of every entry");
  }
  Status ScanRecords(Record, const std::function<void(uint64_t, std::string_view)>&) override {
    return NotHere("a scan of every record");
  }
  Result<IdMarks> StoredIdMarks() override { return NotHere("reading the identifier marks"); }
  Status RaiseIdMarks(const IdMarks&) override { return NotHere("raising the identifier marks"); }
  Status RepairInode(const meta::Inode&) override { return NotHere("a repair"); }
  Status RepairDirent(uint64_t, const std::string&, const std::optional<meta::DirEntry>&) override {
    return NotHere("a repair");
  }
  Status RepairOrphanMark(uint64_t, bool) override { return NotHere("a repair"); }
  Status EraseRecords(uint64_t) override { return NotHere("a repair"); }
  Status RepairUsage(const std::map<QuotaId, QuotaUsage>&) override { return NotHere("a repair"); }

  Status Sync() override { return Run(Op(rpc::SYNC)).status(); }

 private:
  static rpc::MetaCall Op(rpc::MetaOp op) {
    rpc::MetaCall call;
    call.set_op(op);
    return call;
  }
  Result<rpc::MetaReply> Run(rpc::MetaCall call) {
    auto reply = mds_->Call(std::move(call));
    if (!reply.ok()) return reply.status();
    SFS_RETURN_IF_ERROR(rpc::StatusOf(*reply));
    return reply;
  }
  static Result<meta::Inode> InodeOf(const Result<rpc::MetaReply>& reply) {
    if (!reply.ok()) return reply.status();
    return rpc::FromWire(reply->inode());
  }
  static Result<std::string> ValueOf(const Result<rpc::MetaReply>& reply) {
    if (!reply.ok()) return reply.status();
    return reply->value();
  }
  static Result<std::vector<uint64_t>> Numbers(const Result<rpc::MetaReply>& reply) {
    if (!reply.ok()) return reply.status();
    return std::vector<uint64_t>(reply->numbers().begin(), reply->numbers().end());
  }

  const std::shared_ptr<MdsClient> mds_;
};

}  // namespace

std::unique_ptr<meta::MetaStore> NewRemoteMetaStore(std::shared_ptr<MdsClient> mds) {
  return std::make_unique<RemoteMetaStore>(std::move(mds));
}

}  // namespace sfs::client
