#include "rpc/wire.h"

#include <charconv>

#include "rpc/auth.h"

namespace sfs::rpc {

std::string OstRefFields(const OstRef& ost) {
  std::string out;
  AppendField(out, ost.dir());
  AppendField(out, ost.fs_uuid());
  AppendField(out, ost.ost_uuid());
  AppendField(out, ost.index());
  return out;
}

std::string IoCallFields(const IoCall& call) { return IoCallFields(call, call.data().size()); }

std::string IoCallFields(const IoCall& call, uint64_t data_bytes) {
  std::string out = OstRefFields(call.ost());
  AppendField(out, call.op());
  AppendField(out, call.object_id());
  AppendField(out, call.offset());
  AppendField(out, call.length());
  AppendField(out, call.truncate_size());
  AppendField(
      out, (call.keep_size() ? 1 : 0) | (call.data_only() ? 2 : 0) | (call.must_exist() ? 4 : 0));
  AppendField(out, static_cast<uint64_t>(static_cast<int64_t>(call.whence())));
  AppendField(out, call.caller().uid());
  AppendField(out, call.caller().gid());
  AppendField(out, call.caller().pid());
  AppendField(out, call.caller().jobid());
  AppendField(out, data_bytes);
  AppendField(out, call.request_id());
  AppendField(out, call.raised() ? 1 : 0);
  return out;
}

std::string LabelCallFields(const LabelCall& call) {
  std::string out;
  AppendField(out, call.dir());
  AppendField(out, call.fs_uuid());
  AppendField(out, call.index());
  AppendField(out, call.ost_uuid());
  AppendField(out, (call.force() ? 1 : 0) | (call.check_only() ? 2 : 0));
  return out;
}

std::string ConfigureCallFields(const ConfigureCall& call) {
  std::string out = OstRefFields(call.ost());
  AppendField(out, call.version());
  AppendField(out, call.settings());
  return out;
}

std::string NrsStatusCallFields(const NrsStatusCall& call) {
  std::string out = OstRefFields(call.ost());
  AppendField(out, call.head());
  AppendField(out, call.with_classes() ? 1 : 0);
  for (const std::string& name : call.registered()) AppendField(out, name);
  return out;
}

std::string ObjectCallFields(const ObjectCall& call) {
  std::string out = OstRefFields(call.ost());
  AppendField(out, call.object_id());
  return out;
}

std::string SteerCallFields(const SteerCall& call) {
  std::string out;
  AppendField(out, call.request_id());
  AppendField(out, call.cancel() ? 1 : 0);
  return out;
}

uint64_t SessionOf(const grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(kSessionHeader);
  uint64_t session = 0;
  if (it != metadata.end()) {
    std::from_chars(it->second.data(), it->second.data() + it->second.size(), session);
  }
  return session;
}

Status FromGrpc(const grpc::Status& status, const std::string& peer) {
  if (status.ok()) return Status::Ok();
  const int err = status.error_code() == grpc::StatusCode::UNAUTHENTICATED ? EACCES : EIO;
  return Status::Error(err, peer + ": " + status.error_message() + " (grpc code " +
                                std::to_string(static_cast<int>(status.error_code())) + ")");
}

void SignCall(ClientSession& session, grpc::ClientContext& context, const char* method,
              const std::string& fields) {
  const ClientSession::Signature signature = session.Sign(method, fields);
  context.AddMetadata(kSessionHeader, std::to_string(signature.session));
  context.AddMetadata(kSequenceHeader, std::to_string(signature.sequence));
  context.AddMetadata(kMacHeader, signature.mac);
}

grpc::Status CheckCall(SessionTable& sessions, const grpc::ServerContextBase& context,
                       const char* method, const std::string& fields) {
  const auto& metadata = context.client_metadata();
  auto number = [&](const char* key, uint64_t& value) {
    auto it = metadata.find(key);
    if (it == metadata.end()) return false;
    auto [end, ec] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
    return ec == std::errc() && end == it->second.data() + it->second.size();
  };
  uint64_t session = 0, sequence = 0;
  auto mac = metadata.find(kMacHeader);
  if (!number(kSessionHeader, session) || !number(kSequenceHeader, sequence) ||
      mac == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the call carries no key proof");
  }
  Status checked = sessions.Check(session, sequence, method, fields,
                                  std::string_view(mac->second.data(), mac->second.size()));
  if (!checked.ok()) return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, checked.message());
  return grpc::Status::OK;
}

}  // namespace sfs::rpc
