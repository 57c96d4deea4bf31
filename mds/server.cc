#include "mds/server.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <thread>
#include <mutex>

#include "common/log.h"
#include "fs/filesystem.h"
#include "mds/cache_credits.h"
#include "mds/callbacks.h"
#include "mds/extent_master.h"
#include "mds/grant_book.h"
#include "mds/replies.h"
#include "meta/meta_store.h"
#include "mdt/service.h"
#include "nrs/registry.h"
#include "rpc/meta_wire.h"
#include "rpc/grpc_setup.h"
#include "rpc/wire.h"

namespace sfs::mds {
namespace {

constexpr int kMaxMessageBytes = 64 << 20;
// The most entries one READ_DIR_AFTER call returns, whatever was asked: a
// listing's reply stays a few megabytes at most.
constexpr uint64_t kMaxDirEntries = 16384;
// What a client is granted on an OST beyond its write's room (ROOM_GRANT),
// while the OST has it: a client asks about once per 64 MiB it writes there.
constexpr uint64_t kRoomChunk = 64ull << 20;

// What the metadata NRS sees of a call (mdt.* rules classify by it).
nrs::Op NrsOpOf(rpc::MetaOp op, const rpc::MetaCall& call) {
  switch (op) {
    case rpc::LOOKUP: return nrs::Op::kLookup;
    case rpc::GET_INODE: case rpc::GET_XATTR: case rpc::LIST_XATTR: case rpc::GET_LAYOUT:
      return nrs::Op::kGetattr;
    case rpc::SET_ATTR: case rpc::NOTE_WRITE: case rpc::SET_XATTR: case rpc::REMOVE_XATTR:
    case rpc::PUT_LAYOUT: case rpc::SET_LAYOUT_XATTR:
      return nrs::Op::kSetattr;
    case rpc::MAKE_NODE: case rpc::CREATE: {
      const uint32_t mode = call.node().mode();
      if (S_ISDIR(mode)) return nrs::Op::kMkdir;
      if (S_ISLNK(mode)) return nrs::Op::kSymlink;
      if (S_ISREG(mode)) return nrs::Op::kCreate;
      return nrs::Op::kMknod;
    }
    case rpc::OPEN: case rpc::CLOSE: return nrs::Op::kOpen;
    case rpc::READ_DIR_AFTER: return nrs::Op::kReaddir;
    case rpc::RMDIR: return nrs::Op::kRmdir;
    case rpc::UNLINK: return nrs::Op::kUnlink;
    case rpc::RENAME: return nrs::Op::kRename;
    case rpc::LINK: return nrs::Op::kLink;
    default: return nrs::Op::kGetattr;
  }
}

// A call's operation as a metadata request, served when the MDS's metadata
// NRS lets it, on whichever thread that is.
class MetaRequest final : public mdt::MdRequest {
 public:
  explicit MetaRequest(std::function<void()> work) : work_(std::move(work)) {}
  void Serve() override { work_(); }

 private:
  std::function<void()> work_;
};

// One client's call-back stream (rpc Callbacks): revocations written in
// order, one at a time; acknowledgements handed to the hub.
class CallbackStream final : public grpc::ServerBidiReactor<rpc::CallbackAck, rpc::Callback>,
                             public CallbackSender {
 public:
  // `attached(session, generation)` runs when the stream is up, `ended`
  // when it ended and no newer stream of the session took its place.
  CallbackStream(grpc::CallbackServerContext* context, SessionId session, CallbackHub* hub,
                 std::function<void(SessionId, uint64_t)> attached,
                 std::function<void(SessionId, uint64_t)> ended)
      : context_(context),
        session_(session),
        hub_(hub),
        attached_(std::move(attached)),
        ended_(std::move(ended)) {
    StartRead(&ack_);
  }

  // CallbackSender (under the hub's lock).
  void Send(uint64_t id, const Revocation& revocation) override {
    rpc::Callback message;
    message.set_id(id);
    for (uint64_t ino : revocation.inodes) message.add_inodes(ino);
    for (uint64_t ino : revocation.directories) message.add_directories(ino);
    for (uint64_t ino : revocation.extents) message.add_extents(ino);
    for (uint64_t id : revocation.grants) message.add_grants(id);
    Queue(std::move(message));
  }
  void Renew() override {
    rpc::Callback message;
    message.set_lease_ms(static_cast<uint64_t>(hub_->lease().count()));
    Queue(std::move(message));
  }
  void Evict() override { context_->TryCancel(); }

  void OnReadDone(bool ok) override {
    if (!ok) {
      // The client closed its side (or the stream broke).
      Close();
      return;
    }
    if (ack_.id() == 0) {
      // The opening message: from now on the session is granted credits;
      // the reply (id 0) tells the client it may cache.
      generation_ = hub_->Attach(session_, this);
      attached_(session_, generation_);
      rpc::Callback up;
      up.set_lease_ms(static_cast<uint64_t>(hub_->lease().count()));
      Queue(std::move(up));
    } else {
      hub_->Ack(session_, ack_.id());
    }
    StartRead(&ack_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard lock(mu_);
    writing_ = false;
    if (!ok) {
      queue_.clear();  // the stream broke: the read side ends it (Close)
    } else {
      queue_.pop_front();
    }
    WriteNextLocked();
  }

  void OnDone() override {
    // Its opens end with it, unless a newer stream of the session took its
    // place (the client reopened it and counts its opens again).
    if (hub_->Detach(session_, this)) ended_(session_, generation_);
    delete this;
  }

 private:
  void Queue(rpc::Callback message) {
    std::lock_guard lock(mu_);
    if (finished_) return;
    queue_.push_back(std::move(message));
    WriteNextLocked();
  }
  void WriteNextLocked() {
    if (writing_) return;
    if (queue_.empty()) {
      if (closing_ && !finished_) {
        finished_ = true;
        Finish(grpc::Status::OK);
      }
      return;
    }
    writing_ = true;
    StartWrite(&queue_.front());
  }
  void Close() {
    // The session's credits end now, not when the last write is done.
    hub_->Detach(session_, this);
    std::lock_guard lock(mu_);
    closing_ = true;
    WriteNextLocked();
  }

  grpc::CallbackServerContext* const context_;
  const SessionId session_;
  CallbackHub* const hub_;
  const std::function<void(SessionId, uint64_t)> attached_;
  const std::function<void(SessionId, uint64_t)> ended_;
  uint64_t generation_ = 0;  // set by the opening message (then read by OnDone only)
  rpc::CallbackAck ack_;
  std::mutex mu_;  // guards the write state below; taken under the hub's lock
  std::deque<rpc::Callback> queue_;
  bool writing_ = false;
  bool closing_ = false;
  bool finished_ = false;
};

// What one operation changed, for the revocations it causes.
struct Changed {
  std::vector<uint64_t> inodes;       // attributes
  std::vector<uint64_t> directories;  // entries
  std::vector<QuotaId> quota_limits;  // their clients' quota grants are taken back
  bool empty() const { return inodes.empty() && directories.empty() && quota_limits.empty(); }
};

// Calls that change the namespace in a way a second run would not repeat
// (EEXIST, ENOENT): each leaves a reply record, and a resend of one is
// answered from it (mds/replies.h). The others are idempotent (setattr
// sets the same attributes, an open is counted once per client).
bool Recorded(rpc::MetaOp op) {
  switch (op) {
    case rpc::MAKE_NODE: case rpc::CREATE: case rpc::LINK: case rpc::RMDIR: case rpc::RENAME:
    case rpc::UNLINK: case rpc::SET_XATTR: case rpc::REMOVE_XATTR:
      return true;
    default:
      return false;
  }
}

class MdsService final
    : public rpc::Mds::WithCallbackMethod_Callbacks<rpc::Mds::WithCallbackMethod_Meta<rpc::Mds::Service>> {
 public:
  // `recovery_window`: how long a client may stay silent and still have
  // its calls answered from their records; `lose_reply_every`: fault
  // injection for tests (ServerOptions).
  MdsService(rpc::Key key, fs::Filesystem* fs, std::chrono::nanoseconds ack_timeout,
             std::chrono::nanoseconds recovery_window, uint32_t lose_reply_every,
             std::vector<AddressRange> trusted, size_t max_cached_per_client)
      : max_cached_(max_cached_per_client),
        trusted_(std::move(trusted)),
        sessions_(std::move(key)),
        fs_(fs),
        hub_(ack_timeout, &credits_),
        ledger_(std::chrono::duration_cast<ReplyLedger::Clock::duration>(recovery_window),
                ReplyLedger::Clock::now()),
        lose_reply_every_(lose_reply_every) {}

  CallbackHub& hub() { return hub_; }

  // Drops the records of clients not heard for the recovery window.
  void SweepReplyRecords() {
    auto clients = fs_->meta().ReplyRecordClients();
    if (!clients.ok()) {
      Logger("mds")->error("listing reply records: {}", clients.status().ToString());
      return;
    }
    for (uint64_t client : ledger_.Gone(*clients, ReplyLedger::Clock::now())) {
      if (Status dropped = fs_->meta().DropReplyRecords(client, UINT64_MAX); !dropped.ok()) {
        Logger("mds")->error("dropping the reply records of client {:#x}: {}", client,
                             dropped.ToString());
      } else {
        Logger("mds")->info("dropped the reply records of client {:#x} (not heard for the "
                            "recovery window)", client);
      }
      ledger_.Dropped(client);
    }
  }

  grpc::ServerBidiReactor<rpc::CallbackAck, rpc::Callback>* Callbacks(
      grpc::CallbackServerContext* context) override {
    grpc::Status checked = rpc::CheckCall(sessions_, *context, rpc::kCallbacksMethod, "");
    if (!checked.ok()) {
      Logger("mds")->warn("refused a call-back stream from {}: {}", context->peer(),
                          checked.error_message());
      class Refused final : public grpc::ServerBidiReactor<rpc::CallbackAck, rpc::Callback> {
       public:
        explicit Refused(const grpc::Status& status) { Finish(status); }
        void OnDone() override { delete this; }
      };
      return new Refused(checked);
    }
    return new CallbackStream(
        context, rpc::SessionOf(*context), &hub_,
        [this](SessionId session, uint64_t generation) {
          // It took the place of an earlier stream of the session, whose end
          // may not come first: the client forgot its extent credits and
          // grants with it.
          extents_.StreamEnded(session, generation - 1);
          grants_.StreamEnded(session, generation - 1);
        },
        [this](SessionId session, uint64_t generation) { CloseSession(session, generation); });
  }

  grpc::Status Hello(grpc::ServerContext*, const rpc::HelloRequest* request,
                     rpc::HelloReply* reply) override {
    auto opened = sessions_.Open(request->client_nonce());
    if (!opened.ok()) return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, opened.status().message());
    reply->set_session(opened->session);
    reply->set_server_nonce(opened->server_nonce);
    return grpc::Status::OK;
  }

  // On gRPC's own thread (the callback API): a call the metadata NRS lets
  // in at once is served there and then, with no hand-off to another
  // thread; one it holds back is answered by whichever thread serves it.
  grpc::ServerUnaryReactor* Meta(grpc::CallbackServerContext* context, const rpc::MetaCall* call,
                                 rpc::MetaReply* reply) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    grpc::Status checked =
        rpc::CheckCall(sessions_, *context, rpc::kMetaMethod, rpc::MetaCallFields(*call));
    if (!checked.ok()) {
      Logger("mds")->warn("refused a call from {}: {}", context->peer(), checked.error_message());
      reactor->Finish(checked);
      return reactor;
    }
    const uint64_t session = rpc::SessionOf(*context);
    // Root of a client not trusted, or one that asked for it, is nobody:
    // the call is served as nobody's, and checked (mds/squash.h).
    const bool squash_client = call->squash_root() || !PeerIn(context->peer(), trusted_);
    std::shared_ptr<rpc::MetaCall> as_nobody;
    if (squash_client && call->has_caller() && call->caller().uid() == 0) {
      as_nobody = std::make_shared<rpc::MetaCall>(*call);
      as_nobody->mutable_caller()->set_uid(kSquashedId);
      as_nobody->mutable_caller()->set_gid(kSquashedId);
      call = as_nobody.get();
    }
    reply->set_root_squashed(squash_client);
    auto work = [this, call, as_nobody, reply, session, reactor] {
      const bool lose = LoseThisReply(*call);
      Serve(*call, as_nobody != nullptr, session, reply, [reactor, lose] {
        reactor->Finish(lose ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                            "reply lost on purpose (--lose-replies)")
                             : grpc::Status::OK);
      });
    };
    mdt::Service* mdt = fs_->mdt();
    if (mdt == nullptr) {
      work();
      return reactor;
    }
    auto fill = [call](nrs::RequestInfo& info) {
      info.op = NrsOpOf(call->op(), *call);
      info.uid = call->caller().uid();
      info.gid = call->caller().gid();
      info.pid = call->caller().pid();
      if (!call->caller().jobid().empty()) {
        info.jobid = std::make_shared<const std::string>(call->caller().jobid());
      }
    };
    MetaRequest here(work);
    fill(here.info);
    if (mdt->ServeIfAdmitted(here)) return reactor;
    // Held by a policy (a TBF rule, a delay) or no place free: the call
    // stays open, its thread goes back to gRPC.
    auto queued = std::make_unique<MetaRequest>(std::move(work));
    fill(queued->info);
    mdt->Submit(std::move(queued));
    return reactor;
  }

  // The server stops: the opens are forgotten, not closed. A file removed
  // while a client has it open stays an orphan, which the next start
  // reclaims only after its recovery window, once the clients that came
  // back counted their opens again.
  void ForgetOpens() {
    std::lock_guard lock(opens_mu_);
    opens_.clear();
  }

  // A client's call-back stream of `generation` ended (it unmounted, died
  // or was evicted): the opens counted under it end; one still alive
  // counts them again under its next stream (Filesystem::ReopenAtMds),
  // and an open told again under a newer stream is not ended here.
  void CloseSession(uint64_t session, uint64_t generation) {
    // The client dropped its extent credits and quota grants when the
    // stream broke.
    extents_.StreamEnded(session, generation);
    grants_.StreamEnded(session, generation);
    std::vector<std::shared_ptr<fs::OpenFile>> ended;
    {
      std::lock_guard lock(opens_mu_);
      auto it = opens_.find(session);
      if (it == opens_.end()) return;
      for (auto open = it->second.begin(); open != it->second.end();) {
        if (open->second.generation <= generation) {
          ended.push_back(std::move(open->second.file));
          open = it->second.erase(open);
        } else {
          ++open;
        }
      }
      if (it->second.empty()) opens_.erase(it);
    }
    for (auto& file : ended) fs_->ReleaseOpen(file);
  }

 private:

  // Runs the call; `finish` once every client that cached what it changed
  // has dropped it (or was evicted), so that what the caller sees next on
  // any client is the change.
  // `took_back`: a chown refused for quota, run again once the clients'
  // grants of its new owner were taken back.
  void Serve(const rpc::MetaCall& call, bool squashed, uint64_t session, rpc::MetaReply* reply,
             std::function<void()> finish, bool took_back = false) {
    if (call.op() == rpc::EXTENT_GET) {
      if (call.number() != 1 && call.number() != 2) {
        rpc::SetStatus(Status::Error(EINVAL, "extent credits are read (1) or write (2)"), reply);
        return finish();
      }
      return AskExtent(call.ino(), static_cast<ExtentMaster::Mode>(call.number()), session, reply,
                       std::move(finish));
    }
    if (call.op() == rpc::QUOTA_GRANT) {
      grants_.Free(session, {call.quota().done().begin(), call.quota().done().end()});
      if (call.quota().bytes() == 0) {
        rpc::SetStatus(Status::Error(EINVAL, "a quota grant of 0 bytes"), reply);
        return finish();
      }
      return AskQuota(call.quota(), call.caller().uid(), session, reply, std::move(finish),
                      /*took_back=*/false);
    }
    if (call.op() == rpc::ROOM_GRANT) {
      grants_.Free(session, {call.room().done().begin(), call.room().done().end()});
      std::vector<std::pair<uint32_t, uint64_t>> per_ost;
      for (const rpc::OstBytes& one : call.room().per_ost()) {
        if (one.ost() >= fs_->ost_count() || one.bytes() == 0) {
          rpc::SetStatus(Status::Error(EINVAL, "room asked on OST " + std::to_string(one.ost()) +
                                                   " (" + std::to_string(fs_->ost_count()) +
                                                   " OSTs) for " + std::to_string(one.bytes()) +
                                                   " bytes"),
                         reply);
          return finish();
        }
        per_ost.emplace_back(one.ost(), one.bytes());
      }
      if (per_ost.empty()) {
        rpc::SetStatus(Status::Error(EINVAL, "room asked on no OST"), reply);
        return finish();
      }
      return AskRoom(std::move(per_ost), session, reply, std::move(finish), /*took_back=*/false);
    }
    Changed changed;
    Status status;
    if (call.client_id() != 0 && Recorded(call.op())) {
      status = RunOnce(call, squashed, session, reply, &changed);
    } else {
      status = squashed ? CheckSquashed(call) : Status::Ok();
      if (status.ok()) status = Run(call, session, reply, &changed);
    }
    if (!status.ok()) {
      const bool root_squashed = reply->root_squashed();
      reply->Clear();
      reply->set_root_squashed(root_squashed);
      rpc::SetStatus(status, reply);
    }
    if (status.err() == EDQUOT && call.op() == rpc::SET_ATTR && !took_back &&
        TakeBackForChown(call, squashed, session, reply, finish)) {
      return;
    }
    if (changed.empty()) return finish();
    std::map<SessionId, Revocation> revocations =
        credits_.Change(changed.inodes, changed.directories, session);
    if (changed.quota_limits.empty()) {
      return hub_.Revoke(revocations, std::move(finish), CallbackHub::Clock::now());
    }
    // New limits hold for clients once the grants they spend from are back
    // (the changer's own too: its next write asks again).
    std::vector<GrantBook::Key> keys;
    for (const QuotaId& id : changed.quota_limits) keys.push_back(GrantBook::QuotaKey(id));
    // After the limit is stored, before the grants are looked for: a grant
    // added after this scan sees the epoch move and is asked again.
    limits_epoch_.fetch_add(1);
    auto grants = grants_.Holding(keys, /*except=*/0);
    for (const auto& [holder, ids] : grants) revocations[holder].grants = ids;
    hub_.Revoke(
        revocations,
        [this, grants, finish = std::move(finish)] {
          for (const auto& [holder, ids] : grants) grants_.Free(holder, ids);
          finish();
        },
        CallbackHub::Clock::now());
  }

  // A chown refused for quota while clients hold grants of the new owner's
  // user or group (room they may not use): those are taken back and the
  // chown runs again (mds/grant_book.h). False if there were none.
  bool TakeBackForChown(const rpc::MetaCall& call, bool squashed, uint64_t session,
                        rpc::MetaReply* reply, std::function<void()>& finish) {
    const meta::AttrChange change = rpc::FromWire(call.change());
    std::vector<GrantBook::Key> keys;
    if (change.uid) keys.push_back(GrantBook::QuotaKey({QuotaType::kUser, *change.uid}));
    if (change.gid) keys.push_back(GrantBook::QuotaKey({QuotaType::kGroup, *change.gid}));
    auto holding = keys.empty() ? std::map<SessionId, std::vector<uint64_t>>{}
                                : grants_.Holding(keys, /*except=*/0);
    if (holding.empty()) return false;
    std::map<SessionId, Revocation> revocations;
    for (const auto& [holder, ids] : holding) revocations[holder].grants = ids;
    // A copy: the call may not outlive this serving of it (a squashed
    // caller's is the serving's own).
    auto again = std::make_shared<rpc::MetaCall>(call);
    hub_.Revoke(
        revocations,
        [this, again, squashed, session, reply, holding, finish = std::move(finish)]() mutable {
          for (const auto& [holder, ids] : holding) grants_.Free(holder, ids);
          const bool root_squashed = reply->root_squashed();
          reply->Clear();
          reply->set_root_squashed(root_squashed);
          Serve(*again, squashed, session, reply, std::move(finish), /*took_back=*/true);
        },
        CallbackHub::Clock::now());
    return true;
  }

  // A session past max_cached_ credits gives back those it was granted
  // least recently (down to nine tenths), sent as directories so its
  // kernel drops their names too. Nothing waits for it; the credits end
  // once the client acknowledged (a change meanwhile still revokes them).
  void TrimCache(uint64_t session) {
    std::vector<CacheCredits::Trimmed> trimmed =
        credits_.Trim(session, max_cached_, max_cached_ - max_cached_ / 10);
    if (trimmed.empty()) return;
    Logger("mds")->info("session {}: more than {} cached inodes; the {} granted least recently "
                        "revoked",
                        session, max_cached_, trimmed.size());
    std::map<SessionId, Revocation> revocations;
    for (const CacheCredits::Trimmed& one : trimmed) {
      revocations[session].directories.push_back(one.ino);
    }
    hub_.Revoke(
        revocations,
        [this, session, trimmed = std::move(trimmed)] { credits_.EndTrim(session, trimmed); },
        CallbackHub::Clock::now());
  }

  // ROOM_GRANT (mds/grant_book.h): room on each OST asked for the write
  // and a chunk beyond, less near full; refused, every grant on those OSTs
  // is taken back, then the write's own room is asked once more, waiting
  // for fresh samples as a write on the one-process mount does (on the
  // space grants' own thread, not this one).
  void AskRoom(std::vector<std::pair<uint32_t, uint64_t>> per_ost, uint64_t session,
               rpc::MetaReply* reply, std::function<void()> finish, bool took_back) {
    if (!hub_.Attached(session)) {
      rpc::SetStatus(Status::Error(EAGAIN, "no call-back stream yet: ask again"), reply);
      return finish();
    }
    std::vector<GrantBook::Key> keys;
    for (const auto& [ost, bytes] : per_ost) keys.push_back(GrantBook::RoomKey(ost));
    auto grant = [this, session, reply, keys](const std::vector<std::pair<uint32_t, uint64_t>>& asked,
                                              std::shared_ptr<control::SpaceHold> hold) {
      const uint64_t generation = hub_.Generation(session);
      const uint64_t id = grants_.Add(session, generation, keys, std::move(hold));
      // Its stream ended (or was replaced) meanwhile: the client forgot its
      // grants with it.
      if (hub_.Generation(session) != generation) grants_.StreamEnded(session, generation);
      for (const auto& [ost, bytes] : asked) {
        rpc::OstBytes* room = reply->add_rooms();
        room->set_ost(ost);
        room->set_bytes(bytes);
        room->set_grant(id);
      }
    };
    control::SpaceGate& space = fs_->space();
    for (uint64_t extra : {kRoomChunk, kRoomChunk >> 2, kRoomChunk >> 4, kRoomChunk >> 6, uint64_t{0}}) {
      std::vector<std::pair<uint32_t, uint64_t>> more = per_ost;
      for (auto& [ost, bytes] : more) bytes += extra;
      auto hold = space.Reserve(more, /*may_wait=*/false);
      if (hold.ok()) {
        grant(more, std::move(hold).value());
        return finish();
      }
      if (hold.err() != ENOSPC) {
        rpc::SetStatus(hold.status(), reply);
        return finish();
      }
    }
    auto holding = took_back ? std::map<SessionId, std::vector<uint64_t>>{}
                             : grants_.Holding(keys, /*except=*/0);
    if (!holding.empty()) {
      std::map<SessionId, Revocation> revocations;
      for (const auto& [holder, ids] : holding) revocations[holder].grants = ids;
      hub_.Revoke(
          revocations,
          [this, per_ost = std::move(per_ost), session, reply, holding,
           finish = std::move(finish)]() mutable {
            for (const auto& [holder, ids] : holding) grants_.Free(holder, ids);
            AskRoom(std::move(per_ost), session, reply, std::move(finish), /*took_back=*/true);
          },
          CallbackHub::Clock::now());
      return;
    }
    space.ReserveSoon(per_ost, [reply, per_ost, grant, finish = std::move(finish)](
                                   control::SpaceGate::Granted held) {
      if (held.ok()) {
        grant(per_ost, std::move(held).value());
      } else {
        Logger("mds")->info("room for a client's write refused: {}", held.status().message());
        rpc::SetStatus(held.status(), reply);
      }
      finish();
    });
  }

  // QUOTA_GRANT (mds/grant_book.h): room for the write and a chunk
  // beyond, less near the limit; refused, every grant of the same ids is
  // taken back (the reply waits, no thread does) and the
  // write's own room asked once more.
  void AskQuota(const rpc::QuotaAsk& ask, uint32_t caller, uint64_t session, rpc::MetaReply* reply,
                std::function<void()> finish, bool took_back) {
    if (!hub_.Attached(session)) {
      rpc::SetStatus(Status::Error(EAGAIN, "no call-back stream yet: ask again"), reply);
      return finish();
    }
    const control::QuotaOwner owner{ask.uid(), ask.gid(), ask.projid()};
    const size_t ost = ask.ost() < fs_->ost_count() ? ask.ost() : 0;
    control::QuotaGate& quota = fs_->quota();
    const uint64_t chunk = resource::QuotaTunables{}.blocks.chunk;
    const uint64_t epoch = limits_epoch_.load();  // before the limits are read
    Result<std::shared_ptr<control::QuotaHold>> hold = Status::Error(EDQUOT, "");
    uint64_t granted = 0;
    for (uint64_t extra : {chunk, chunk >> 2, chunk >> 4, chunk >> 6, uint64_t{0}}) {
      granted = ask.bytes() + extra;
      hold = quota.ReserveBytes(owner, caller, ost, granted);
      if (hold.ok() || hold.err() != EDQUOT) break;
    }
    if (hold.ok()) {
      const bool unlimited = *hold == nullptr;
      const uint64_t generation = hub_.Generation(session);
      reply->set_number(
          grants_.Add(session, generation, GrantBook::KeysOf(owner), std::move(hold).value()));
      // Its stream ended (or was replaced) meanwhile: the client forgot its
      // grants with it.
      if (hub_.Generation(session) != generation) {
        grants_.StreamEnded(session, generation);
      } else if (limits_epoch_.load() != epoch) {
        // A limit was set meanwhile, and may have looked for grants of
        // its id before this one was there: asked again under it.
        grants_.Free(session, {reply->number()});
        reply->clear_number();
        return AskQuota(ask, caller, session, reply, std::move(finish), took_back);
      }
      reply->set_granted(unlimited ? UINT64_MAX : granted);
      return finish();
    }
    // The asker's own grants too: one of another owner it spent still
    // holds its room until it asks for that owner again.
    auto holding = hold.err() == EDQUOT && !took_back
                       ? grants_.Holding(GrantBook::KeysOf(owner), /*except=*/0)
                       : std::map<SessionId, std::vector<uint64_t>>{};
    if (holding.empty()) {
      if (hold.err() == EDQUOT) {
        Logger("mds")->info("quota grant of {} bytes for uid {} gid {} project {} refused: {}",
                            ask.bytes(), owner.uid, owner.gid, owner.projid,
                            hold.status().message());
      }
      rpc::SetStatus(hold.status(), reply);
      return finish();
    }
    std::map<SessionId, Revocation> revocations;
    for (const auto& [holder, ids] : holding) revocations[holder].grants = ids;
    hub_.Revoke(
        revocations,
        [this, ask, caller, session, reply, holding, finish = std::move(finish)]() mutable {
          for (const auto& [holder, ids] : holding) grants_.Free(holder, ids);
          AskQuota(ask, caller, session, reply, std::move(finish), /*took_back=*/true);
        },
        CallbackHub::Clock::now());
  }

  // EXTENT_GET: granted once every conflicting holder gave its credit
  // back (mds/extent_master.h); the reply waits, no thread does. Only a
  // session with a call-back stream is granted (no other could be asked
  // to give it back): EAGAIN, and the client asks again.
  void AskExtent(uint64_t ino, ExtentMaster::Mode mode, uint64_t session, rpc::MetaReply* reply,
                 std::function<void()> finish) {
    if (!hub_.Attached(session)) {
      rpc::SetStatus(Status::Error(EAGAIN, "no call-back stream yet: ask again"), reply);
      return finish();
    }
    std::vector<ExtentMaster::Grant> conflicts;
    if (extents_.Ask(ino, session, hub_.Generation(session), mode, &conflicts)) return finish();
    std::map<SessionId, Revocation> revocations;
    for (const ExtentMaster::Grant& grant : conflicts) {
      revocations[grant.session].extents.push_back(ino);
    }
    hub_.Revoke(
        revocations,
        [this, ino, mode, session, reply, conflicts, finish = std::move(finish)]() mutable {
          for (const ExtentMaster::Grant& grant : conflicts) extents_.Revoked(ino, grant);
          AskExtent(ino, mode, session, reply, std::move(finish));
        },
        CallbackHub::Clock::now());
  }

  // What nobody (a squashed root caller) may not do, refused before the
  // call runs; the operation itself finds what is missing (ENOENT).
  Status CheckSquashed(const rpc::MetaCall& call) {
    meta::MetaStore& store = fs_->meta();
    const std::string& name = call.name();
    auto check = [&](uint64_t ino, auto&& rule) -> Status {
      auto inode = store.GetInode(ino);
      if (!inode.ok()) return inode.err() == ENOENT ? Status::Ok() : inode.status();
      return rule(*inode);
    };
    auto may_remove = [&](uint64_t dir, const std::string& entry) -> Status {
      auto child = store.Lookup(dir, entry);
      if (!child.ok()) return child.err() == ENOENT ? Status::Ok() : child.status();
      return check(dir, [&](const meta::Inode& d) { return MayRemove(d, *child); });
    };
    auto may = [&](uint64_t ino, int mask, const char* what) {
      return check(ino, [&](const meta::Inode& inode) { return MayAccess(inode, mask, what); });
    };
    switch (call.op()) {
      case rpc::LOOKUP: return may(call.ino(), X_OK, "search this directory");
      case rpc::READ_DIR_AFTER: return may(call.ino(), R_OK, "list this directory");
      case rpc::MAKE_NODE: case rpc::CREATE:
        return may(call.ino(), W_OK | X_OK, "create in this directory");
      case rpc::LINK: return may(call.ino2(), W_OK | X_OK, "link into this directory");
      case rpc::UNLINK: case rpc::RMDIR: return may_remove(call.ino(), name);
      case rpc::RENAME:
        SFS_RETURN_IF_ERROR(may_remove(call.ino(), name));
        SFS_RETURN_IF_ERROR(may(call.ino2(), W_OK | X_OK, "rename into this directory"));
        return may_remove(call.ino2(), call.name2());
      case rpc::SET_ATTR: {
        const meta::AttrChange change = rpc::FromWire(call.change());
        return check(call.ino(), [&](const meta::Inode& inode) { return MaySetAttr(inode, change); });
      }
      case rpc::SET_XATTR: case rpc::REMOVE_XATTR:
        return check(call.ino(), [&](const meta::Inode& i) { return MayUseXattr(i, name, true); });
      case rpc::GET_XATTR:
        return check(call.ino(), [&](const meta::Inode& i) { return MayUseXattr(i, name, false); });
      case rpc::SET_LAYOUT_XATTR: return may(call.ino(), W_OK, "set this file's layout");
      case rpc::CHECK_ACCESS:
        return may(call.ino(), static_cast<int>(call.number() & (R_OK | W_OK | X_OK)),
                   "use this file so");
      case rpc::OPEN: {
        if (call.flag()) return Status::Ok();  // told again: checked when first opened
        const int flags = static_cast<int>(call.number());
        const int access = flags & O_ACCMODE;
        int mask = 0;
        if (access == O_RDONLY || access == O_RDWR) mask |= R_OK;
        if (access == O_WRONLY || access == O_RDWR || (flags & O_TRUNC)) mask |= W_OK;
        return may(call.ino(), mask, "open this file so");
      }
      default:
        return Status::Ok();
    }
  }

  // Fault injection for tests: every lose_reply_every_-th recorded call is
  // applied but its client hears UNAVAILABLE, as if the reply was lost,
  // and sends it again.
  bool LoseThisReply(const rpc::MetaCall& call) {
    if (lose_reply_every_ == 0 || call.client_id() == 0 || !Recorded(call.op())) return false;
    return recorded_calls_.fetch_add(1, std::memory_order_relaxed) % lose_reply_every_ ==
           lose_reply_every_ - 1;
  }

  // A recorded call: answered from its record if it was applied already
  // (a resend), else run with its record written in its own batch.
  // A squashed caller is checked only when the call is applied: a resend
  // of one applied already is answered as it was (the state it was checked
  // against may have changed since, by the call itself).
  Status RunOnce(const rpc::MetaCall& call, bool squashed, uint64_t session, rpc::MetaReply* reply,
                 Changed* changed) {
    const uint64_t client = call.client_id();
    const uint64_t request = call.request_id();
    if (const uint64_t below = ledger_.Heard(client, call.oldest_unanswered(),
                                             ReplyLedger::Clock::now());
        below != 0) {
      if (Status dropped = fs_->meta().DropReplyRecords(client, below); !dropped.ok()) {
        Logger("mds")->error("dropping reply records of client {:#x}: {}", client,
                             dropped.ToString());
      }
    }
    ledger_.Begin(client, request);
    Status status;
    auto record = fs_->meta().GetReplyRecord(client, request);
    if (!record.ok()) {
      status = record.status();
    } else if (record->has_value()) {
      Logger("mds")->info("call {} of client {:#x} (op {}) was applied already: answered from its record",
                          request, client, static_cast<int>(call.op()));
      status = Reconstruct(call, session, **record, reply);
    } else {
      status = squashed ? CheckSquashed(call) : Status::Ok();
      if (status.ok()) {
        meta::ReplyRecordScope scope(client, request);
        status = Run(call, session, reply, changed);
      }
    }
    ledger_.End(client, request);
    return status;
  }

  // The reply a recorded call gave, from its record and the state: the
  // change was made (and its holders revoked) when it was first applied.
  Status Reconstruct(const rpc::MetaCall& call, uint64_t session, const meta::ReplyRecord& record,
                     rpc::MetaReply* reply) {
    switch (call.op()) {
      case rpc::MAKE_NODE: case rpc::CREATE: {
        if (record.created_ino == 0) {
          return Status::Error(EIO, "the reply record of a create names no inode");
        }
        Grant(session, call.ino());
        auto made = fs_->meta().GetInode(record.created_ino);
        if (!made.ok()) return made.status();  // removed since
        if (call.op() == rpc::MAKE_NODE && call.flag() && S_ISREG(made->mode)) {
          return OpenFor(session, made->ino, reply);
        }
        return GrantFound(session, made->ino, reply);
      }
      case rpc::LINK:
        Grant(session, call.ino2());
        return GrantFound(session, call.ino(), reply);
      case rpc::UNLINK: case rpc::RENAME:
        if (record.removed) rpc::ToWire(*record.removed, reply->mutable_removed());
        return Status::Ok();
      default:
        return Status::Ok();
    }
  }

  // The caller's session may cache `ino` (before what the reply carries
  // of it is read: mds/cache_credits.h); past max_cached_ credits, its
  // least recently granted go back (TrimCache).
  void Grant(uint64_t session, uint64_t ino) {
    if (hub_.Attached(session) && credits_.Grant(ino, session) > max_cached_) TrimCache(session);
  }
  // The same for an inode found by the operation, and its attributes read
  // again after the grant.
  Status GrantFound(uint64_t session, uint64_t ino, rpc::MetaReply* reply) {
    Grant(session, ino);
    return InodeReply(fs_->meta().GetInode(ino), reply);
  }

  static Status InodeReply(const Result<meta::Inode>& inode, rpc::MetaReply* reply) {
    if (!inode.ok()) return inode.status();
    rpc::ToWire(*inode, reply->mutable_inode());
    return Status::Ok();
  }
  static Status ValueReply(const Result<std::string>& value, rpc::MetaReply* reply) {
    if (!value.ok()) return value.status();
    reply->set_value(*value);
    return Status::Ok();
  }
  static Status NumbersReply(const Result<std::vector<uint64_t>>& numbers, rpc::MetaReply* reply) {
    if (!numbers.ok()) return numbers.status();
    for (uint64_t n : *numbers) reply->add_numbers(n);
    return Status::Ok();
  }

  Status Run(const rpc::MetaCall& call, uint64_t session, rpc::MetaReply* reply,
             Changed* changed) {
    meta::MetaStore& store = fs_->meta();
    const std::string& name = call.name();
    switch (call.op()) {
      case rpc::GET_INODE:
        Grant(session, call.ino());
        return InodeReply(store.GetInode(call.ino()), reply);
      case rpc::LOOKUP: {
        Grant(session, call.ino());  // the name (or its absence) is cached
        auto found = store.Lookup(call.ino(), name);
        if (!found.ok()) return found.status();
        return GrantFound(session, found->ino, reply);
      }
      case rpc::CREATE: {
        auto created = store.Create(call.ino(), name, rpc::FromWire(call.node()));
        if (!created.ok()) return created.status();
        changed->directories.push_back(call.ino());
        return GrantFound(session, created->ino, reply);
      }
      case rpc::LINK: {
        Grant(session, call.ino2());  // the linker's kernel keeps the new name
        auto linked = store.Link(call.ino(), call.ino2(), call.name2());
        if (!linked.ok()) return linked.status();
        changed->inodes.push_back(call.ino());
        changed->directories.push_back(call.ino2());
        return GrantFound(session, linked->ino, reply);
      }
      case rpc::RMDIR: {
        auto child = store.Lookup(call.ino(), name);
        SFS_RETURN_IF_ERROR(store.Rmdir(call.ino(), name));
        changed->directories.push_back(call.ino());
        if (child.ok()) changed->directories.push_back(child->ino);
        return Status::Ok();
      }
      case rpc::RENAME: {
        if (call.number() > static_cast<uint64_t>(meta::RenameMode::kExchange)) {
          return Status::Error(EINVAL, "unknown rename mode " + std::to_string(call.number()));
        }
        auto moved = store.Lookup(call.ino(), name);
        auto replaced = store.Rename(call.ino(), name, call.ino2(), call.name2(),
                                     static_cast<meta::RenameMode>(call.number()));
        if (!replaced.ok()) return replaced.status();
        changed->directories.push_back(call.ino());
        if (call.ino2() != call.ino()) changed->directories.push_back(call.ino2());
        if (moved.ok()) changed->inodes.push_back(moved->ino);
        if (replaced->has_value()) {
          changed->inodes.push_back((*replaced)->ino);
          rpc::ToWire(**replaced, reply->mutable_removed());
        }
        return Status::Ok();
      }
      case rpc::SET_ATTR: {
        const meta::AttrChange change = rpc::FromWire(call.change());
        // A chown or chgrp moves the file's usage: room for it first, as
        // the one-process mount's setattr does (fs/ops_file.cc).
        control::QuotaGate::MoveHolds holds;
        uint64_t moved = 0;
        if (change.uid.has_value() || change.gid.has_value()) {
          auto inode = store.GetInode(call.ino());
          if (!inode.ok()) return inode.status();
          moved = S_ISREG(inode->mode) ? inode->size : 0;
          auto reserved = fs_->quota().ReserveMove(
              {inode->uid, inode->gid, inode->projid},
              {change.uid.value_or(inode->uid), change.gid.value_or(inode->gid), inode->projid},
              call.caller().uid(), moved);
          if (!reserved.ok()) {
            return Status::Error(reserved.err(), "chown of inode " + std::to_string(call.ino()) +
                                                     ": " + reserved.status().message());
          }
          holds = std::move(reserved).value();
        }
        // The changer's kernel takes the new attributes from the reply.
        Grant(session, call.ino());
        changed->inodes.push_back(call.ino());
        auto stored = store.SetAttr(call.ino(), change);
        if (stored.ok()) {
          if (holds.bytes) holds.bytes->Use(moved);
          if (holds.inodes) holds.inodes->Use(1);
        }
        return InodeReply(std::move(stored), reply);
      }
      case rpc::NOTE_WRITE:
        Grant(session, call.ino());
        changed->inodes.push_back(call.ino());
        return InodeReply(store.NoteWrite(call.ino(), call.number(), call.flag(), call.flag2()),
                          reply);
      case rpc::READ_DIR_AFTER: {
        Grant(session, call.ino());
        auto entries = store.ReadDirAfter(call.ino(), name,
                                          std::min<uint64_t>(call.number(), kMaxDirEntries));
        if (!entries.ok()) return entries.status();
        for (const meta::DirEntry& entry : *entries) {
          rpc::DirEntry* out = reply->add_entries();
          out->set_name(entry.name);
          out->set_ino(entry.ino);
          out->set_mode(entry.mode);
        }
        return Status::Ok();
      }
      case rpc::GET_LAYOUT:
        return ValueReply(store.GetLayout(call.ino()), reply);
      case rpc::PUT_LAYOUT:
        return store.PutLayout(call.ino(), call.value(), call.number());
      case rpc::GET_XATTR:
        return ValueReply(store.GetXattr(call.ino(), name), reply);
      case rpc::LIST_XATTR: {
        auto names = store.ListXattr(call.ino());
        if (!names.ok()) return names.status();
        for (const std::string& one : *names) reply->add_names(one);
        return Status::Ok();
      }
      case rpc::SET_XATTR:
        changed->inodes.push_back(call.ino());  // its ctime
        return store.SetXattr(call.ino(), name, call.value(), static_cast<int>(call.number()));
      case rpc::REMOVE_XATTR:
        changed->inodes.push_back(call.ino());
        return store.RemoveXattr(call.ino(), name);
      case rpc::ORPHANS:
        return NumbersReply(store.Orphans(), reply);
      case rpc::PURGE:
        return store.Purge(call.ino());
      case rpc::MARK_WRITING:
        return store.MarkWriting(call.ino(), call.flag());
      case rpc::WRITING:
        return NumbersReply(store.Writing(), reply);
      case rpc::ALLOCATE_OBJECT_IDS: {
        if (call.number() == 0 || call.number() > UINT32_MAX) {
          return Status::Error(EINVAL, "object ids are allocated 1 to 2^32-1 at a time");
        }
        auto first = store.AllocateObjectIds(static_cast<uint32_t>(call.number()));
        if (!first.ok()) return first.status();
        reply->set_number(*first);
        return Status::Ok();
      }
      case rpc::GET_SETTING:
        return ValueReply(store.GetSetting(name), reply);
      case rpc::ALL_SETTINGS: {
        auto all = store.AllSettings();
        if (!all.ok()) return all.status();
        for (const auto& [key, value] : *all) (*reply->mutable_settings())[key] = value;
        return Status::Ok();
      }
      case rpc::PUT_SETTINGS: {
        std::map<std::string, std::string> values(call.settings().begin(), call.settings().end());
        std::vector<std::string> erase(call.erase().begin(), call.erase().end());
        return store.PutSettings(values, erase);
      }
      case rpc::ALL_USAGE:
        for (const auto& [id, usage] : store.AllUsage()) rpc::ToWire(id, usage, reply->add_usage());
        return Status::Ok();
      case rpc::SYNC:
        return store.Sync();
      case rpc::MAKE_NODE: {
        if (call.node().symlink().size() > PATH_MAX) {
          return Status::Error(ENAMETOOLONG, "symlink target longer than PATH_MAX");
        }
        fs::Filesystem::Creator who;
        who.uid = call.caller().uid();
        who.gid = call.caller().gid();
        who.pid = call.caller().pid();
        who.jobid = std::make_shared<const std::string>(call.caller().jobid());
        if (name.size() > meta::kMaxNameLen) {
          return Status::Error(ENAMETOOLONG, "name longer than 255 bytes");
        }
        auto made = fs_->MakeNode(who, call.ino(), name, call.node().mode(), call.node().rdev(),
                                  call.node().symlink());
        if (!made.ok()) return made.status();
        changed->directories.push_back(call.ino());
        Grant(session, call.ino());  // the creator's kernel keeps the new name
        if (call.flag() && S_ISREG(made->mode)) {
          Status opened = OpenFor(session, made->ino, reply);
          // The creator hears that the create failed: the name goes.
          if (!opened.ok()) (void)fs_->Unlink(call.ino(), name);
          return opened;
        }
        return GrantFound(session, made->ino, reply);
      }
      case rpc::UNLINK: {
        auto removed = fs_->Unlink(call.ino(), name);
        if (!removed.ok()) return removed.status();
        changed->directories.push_back(call.ino());
        changed->inodes.push_back(removed->ino);
        rpc::ToWire(*removed, reply->mutable_removed());
        return Status::Ok();
      }
      case rpc::OPEN:
        return OpenFor(session, call.ino(), reply, /*removed_ok=*/call.flag());
      case rpc::CLOSE: {
        // Each is closed whatever the others' outcome; the first error
        // answers.
        Status closed = CloseFor(session, call.ino());
        for (uint64_t ino : call.more_inos()) {
          Status also = CloseFor(session, ino);
          if (closed.ok()) closed = std::move(also);
        }
        return closed;
      }
      case rpc::FORGET_REMOVED:
        fs_->ForgetRemoved(call.ino());
        return Status::Ok();
      case rpc::CHECK_ACCESS:
        return Status::Ok();  // a squashed caller was checked before (CheckSquashed)
      case rpc::FS_GET_SETTING:
        return ValueReply(fs_->GetSetting(name), reply);
      case rpc::FS_SET_SETTING:
        SFS_RETURN_IF_ERROR(CheckAdmin(call, name));
        SFS_RETURN_IF_ERROR(fs_->SetSetting(name, call.value(), call.caller().uid()));
        if (auto id = control::QuotaIdOfSetting(name)) changed->quota_limits.push_back(*id);
        return Status::Ok();
      case rpc::FS_REMOVE_SETTING:
        SFS_RETURN_IF_ERROR(CheckAdmin(call, name));
        SFS_RETURN_IF_ERROR(fs_->RemoveSetting(name, call.caller().uid()));
        if (auto id = control::QuotaIdOfSetting(name)) changed->quota_limits.push_back(*id);
        return Status::Ok();
      case rpc::SET_LAYOUT_XATTR:
        changed->inodes.push_back(call.ino());
        return fs_->SetLayoutXattr(call.caller().uid(), call.ino(), call.value());
      default:
        return Status::Error(EINVAL, "unknown metadata operation " + std::to_string(call.op()));
    }
  }

  Status CheckAdmin(const rpc::MetaCall& call, const std::string& name) {
    const uint32_t uid = call.caller().uid();
    if (!fs_->IsAdmin(uid)) {
      return Status::Error(EPERM, "uid " + std::to_string(uid) + " may not change setting " + name);
    }
    if (name == "ost_add" && uid != 0) {
      return Status::Error(EPERM, "only root may add an OST (uid " + std::to_string(uid) + ")");
    }
    return Status::Ok();
  }

  // A client counts as one open of a file however many times it has it
  // open (it tells its first open and its last close), so an open told
  // again (after its stream was lost) counts once.
  Status OpenFor(uint64_t session, uint64_t ino, rpc::MetaReply* reply, bool removed_ok = false) {
    Grant(session, ino);
    const uint64_t generation = hub_.Generation(session);
    bool counted = false;
    {
      std::lock_guard lock(opens_mu_);
      auto in_session = opens_.find(session);
      if (in_session != opens_.end()) {
        auto it = in_session->second.find(ino);
        if (it != in_session->second.end()) {
          // Told again by a stream that replaced the one it was counted
          // under: it now ends with this one.
          it->second.generation = std::max(it->second.generation, generation);
          counted = true;
        }
      }
    }
    if (counted) {
      auto inode = fs_->meta().GetInode(ino);
      auto blob = fs_->meta().GetLayout(ino);
      if (!inode.ok() || !blob.ok()) return !inode.ok() ? inode.status() : blob.status();
      rpc::ToWire(*inode, reply->mutable_inode());
      reply->set_value(*blob);
      return Status::Ok();
    }
    auto opened = fs_->AcquireOpen(ino, nullptr, removed_ok);
    if (!opened.ok()) return opened.status();
    // What the client builds its open file from, read after the open
    // counts (a removal from now on waits for its close).
    auto inode = fs_->meta().GetInode(ino);
    auto blob = fs_->meta().GetLayout(ino);
    if (!inode.ok() || !blob.ok()) {
      fs_->ReleaseOpen(opened->file);
      return !inode.ok() ? inode.status() : blob.status();
    }
    rpc::ToWire(*inode, reply->mutable_inode());
    reply->set_value(*blob);
    std::shared_ptr<fs::OpenFile> twice;
    {
      std::lock_guard lock(opens_mu_);
      auto [it, fresh] = opens_[session].emplace(ino, Open{opened->file, generation});
      if (!fresh) twice = opened->file;  // told twice at once: counted once
    }
    if (twice != nullptr) fs_->ReleaseOpen(twice);
    return Status::Ok();
  }

  Status CloseFor(uint64_t session, uint64_t ino) {
    std::shared_ptr<fs::OpenFile> file;
    {
      std::lock_guard lock(opens_mu_);
      auto in_session = opens_.find(session);
      if (in_session == opens_.end()) return Status::Error(EBADF, "no open of inode " + std::to_string(ino) + " in this session");
      auto it = in_session->second.find(ino);
      if (it == in_session->second.end()) {
        return Status::Error(EBADF, "no open of inode " + std::to_string(ino) + " in this session");
      }
      file = it->second.file;
      in_session->second.erase(it);
      if (in_session->second.empty()) opens_.erase(in_session);
    }
    extents_.Closed(ino, session);
    fs_->ReleaseOpen(file);
    return Status::Ok();
  }

  const size_t max_cached_;  // per client session (ServerOptions::max_cached_per_client)
  const std::vector<AddressRange> trusted_;
  rpc::SessionTable sessions_;
  fs::Filesystem* const fs_;
  CacheCredits credits_;
  CallbackHub hub_;
  ExtentMaster extents_;
  GrantBook grants_;  // quota and room handed to clients
  std::atomic<uint64_t> limits_epoch_{0};  // quota limits changed (AskQuota)
  ReplyLedger ledger_;
  const uint32_t lose_reply_every_;
  std::atomic<uint64_t> recorded_calls_{0};  // for lose_reply_every_
  std::mutex opens_mu_;  // guards opens_; a leaf (released before ReleaseOpen)
  // Per client session, the files it has open, each with the generation
  // of the call-back stream it was (last) told under.
  struct Open {
    std::shared_ptr<fs::OpenFile> file;
    uint64_t generation = 0;
  };
  std::map<uint64_t, std::map<uint64_t, Open>> opens_;
};

class ServerImpl final : public Server {
 public:
  explicit ServerImpl(ServerOptions options) : options_(std::move(options)) {}
  ~ServerImpl() override { Shutdown(); }

  Status Start() {
    fs::Filesystem::Config config;
    config.meta_dir = options_.meta_dir;
    config.oss_credentials = {options_.key_file, options_.tls};
    config.admin_uid = options_.admin_uid;
    config.ost_threads = options_.ost_threads;
    config.ost_timeout = options_.ost_timeout;
    // Reclaimed after the recovery window (the ticker below).
    config.reclaim_orphans = false;
    auto opened = fs::Filesystem::Open(config, nrs::BuiltinPolicies());
    if (!opened.ok()) return opened.status();
    fs_ = std::move(opened).value();
    // Files removed while a client had them open (orphans) wait for the
    // recovery window: a client of the MDS that ran before reconnects and
    // counts its opens again within it (Lustre's recovery window). Reply
    // records of clients that do not call within it go.
    const auto recovery_window = 2 * options_.callback_timeout;
    service_ = std::make_unique<MdsService>(options_.key, fs_.get(), options_.callback_timeout,
                                            recovery_window, options_.lose_reply_every,
                                            options_.trusted, options_.max_cached_per_client);
    const auto reclaim_at = std::chrono::steady_clock::now() + recovery_window;
    ticker_ = std::thread([this, reclaim_at, recovery_window] {
      bool reclaimed = false;
      auto sweep_at = reclaim_at;
      std::unique_lock lock(ticker_mu_);
      while (!ticker_cv_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stopping_; })) {
        service_->hub().Tick(CallbackHub::Clock::now());
        if (std::chrono::steady_clock::now() >= sweep_at) {
          sweep_at += recovery_window / 2;
          service_->SweepReplyRecords();
        }
        if (!reclaimed && std::chrono::steady_clock::now() >= reclaim_at) {
          reclaimed = true;
          if (Status done = fs_->ReclaimOrphans(); !done.ok()) {
            Logger("mds")->error("reclaiming orphans: {}", done.ToString());
          }
        }
      }
    });
    auto credentials = rpc::ServerCredentials(options_.tls);
    if (!credentials.ok()) return credentials.status();
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options_.listen, *credentials, &port_);
    builder.RegisterService(service_.get());
    rpc::ConfigureServer(builder, kMaxMessageBytes);
    server_ = builder.BuildAndStart();
    if (!server_ || port_ == 0) {
      return Status::Error(EADDRINUSE, "cannot listen on " + options_.listen +
                                           " (taken, or not an address of this machine)");
    }
    Logger("mds")->info("serving {} on {} (port {}), {} OSTs", options_.meta_dir, options_.listen,
                        port_, fs_->ost_count());
    return Status::Ok();
  }

  int port() const override { return port_; }

  void Shutdown() override {
    if (server_ != nullptr) {
      // Call-back streams never end by themselves; metadata calls a policy
      // holds are served now (throttles ignored), so every call ends.
      service_->hub().EvictAll();
      if (fs_->mdt() != nullptr) fs_->mdt()->Drain();
      server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
      server_.reset();
    }
    if (ticker_.joinable()) {
      {
        std::lock_guard lock(ticker_mu_);
        stopping_ = true;
      }
      ticker_cv_.notify_all();
      ticker_.join();
    }
    if (service_ != nullptr) {
      service_->ForgetOpens();
      service_.reset();
    }
    if (fs_ != nullptr) {
      fs_.reset();
      Logger("mds")->info("stopped");
    }
  }

 private:
  const ServerOptions options_;
  std::unique_ptr<fs::Filesystem> fs_;
  std::unique_ptr<MdsService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  // Evicts clients that leave a call-back unanswered (CallbackHub::Tick).
  std::thread ticker_;
  std::mutex ticker_mu_;  // guards stopping_
  std::condition_variable ticker_cv_;
  bool stopping_ = false;
};

}  // namespace

Result<std::unique_ptr<Server>> StartServer(ServerOptions options) {
  auto server = std::make_unique<ServerImpl>(std::move(options));
  SFS_RETURN_IF_ERROR(server->Start());
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace sfs::mds
