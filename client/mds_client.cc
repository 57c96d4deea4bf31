#include "client/mds_client.h"
#include "rpc/meta_wire.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <random>
#include <set>
#include <thread>
#include <unordered_set>

#include "common/log.h"
#include "rpc/grpc_setup.h"
#include "rpc/wire.h"

namespace sfs::client {
namespace {

// A metadata call's message is small; a directory listing or a settings
// dump is the largest (kilobytes to a few megabytes).
constexpr int kMaxMessageBytes = 64 << 20;
// One call's deadline: an MDS that holds a call longer is treated as gone
// (the call is retried while `patience` lasts).
constexpr std::chrono::seconds kCallDeadline{30};
constexpr std::chrono::seconds kHelloPatience{5};

thread_local const MdsCaller* tls_caller = nullptr;

void SetCaller(const MdsCaller& caller, rpc::MetaCall* call) {
  call->mutable_caller()->set_uid(caller.uid);
  call->mutable_caller()->set_gid(caller.gid);
  call->mutable_caller()->set_pid(caller.pid);
  call->mutable_caller()->set_jobid(caller.jobid);
}

// Never 0 (a call without an id leaves no record).
uint64_t RandomClientId() {
  std::random_device random;
  for (;;) {
    const uint64_t id = (static_cast<uint64_t>(random()) << 32) ^ random();
    if (id != 0) return id;
  }
}

class GrpcMdsClient final : public MdsClient {
 public:
  GrpcMdsClient(MdsOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials)
      : options_(std::move(options)),
        name_(std::string(kMdsScheme) + options_.address),
        stub_(rpc::Mds::NewStub(
            rpc::MakeChannel(options_.address, std::move(credentials), kMaxMessageBytes))) {}

  ~GrpcMdsClient() override {
    StopCallbacks();
    {
      std::lock_guard lock(close_mu_);
      close_stop_ = true;
    }
    close_cv_.notify_all();
    if (closer_.joinable()) closer_.join();
  }

  void CloseSoon(uint64_t ino) override {
    {
      std::lock_guard lock(close_mu_);
      if (!closer_.joinable()) closer_ = std::thread([this] { CloseLoop(); });
      closes_.push_back(ino);
    }
    close_cv_.notify_all();
  }

  bool KnownAbsent(uint64_t dir, const std::string& name) const override {
    return known_dirs_.Absent(dir, name);
  }

  bool squashes_root() const override {
    return options_.root_squash || squashed_by_mds_.load(std::memory_order_relaxed);
  }

  Result<Opened> Open(uint64_t ino, int flags) override {
    bool took_close = false;
    {
      std::unique_lock lock(close_mu_);
      // A close not told yet: the MDS still counts the open, which this
      // one continues.
      auto queued = std::find(closes_.begin(), closes_.end(), ino);
      if (queued != closes_.end()) {
        closes_.erase(queued);
        took_close = true;
      }
      close_cv_.wait(lock, [&] { return closing_.count(ino) == 0; });
    }
    auto opened = MdsClient::Open(ino, flags);
    // Failed: the close it took the place of is told after all.
    if (!opened.ok() && took_close) CloseSoon(ino);
    return opened;
  }

  Status Connect() {
    auto session = Hello(std::chrono::seconds(kHelloPatience));
    if (!session.ok()) return session.status();
    std::lock_guard lock(mu_);
    session_ = std::move(session).value();
    return Status::Ok();
  }

  CacheLog& cache_log() override { return cache_log_; }

  void StartCallbacks(CallbackHandlers handlers) override {
    handlers_ = std::move(handlers);
    callbacks_ = std::thread([this] { CallbackLoop(); });
    lease_watch_ = std::thread([this] { LeaseWatch(); });
  }

  void StopCallbacks() override {
    {
      std::lock_guard lock(stream_mu_);
      if (stopping_) return;
      stopping_ = true;
      if (stream_context_ != nullptr) stream_context_->TryCancel();
    }
    if (callbacks_.joinable()) callbacks_.join();
    if (lease_watch_.joinable()) lease_watch_.join();
    extent_releasers_.Stop();
    grant_releasers_.Stop();
  }

  const std::string& address() const override { return options_.address; }

  Result<rpc::MetaReply> Call(rpc::MetaCall call) override {
    // The request id stays the same for every resend of this call: the
    // MDS answers a resend of a call it applied from its reply record.
    if (!call.has_caller()) {
      if (const MdsCaller* caller = CallerScope::Current()) SetCaller(*caller, &call);
    }
    call.set_squash_root(options_.root_squash);
    const InFlight in_flight(this);
    // Before the call: what its reply may let this client know
    // (KnownDirs::Created) is judged against revocations from here on.
    const uint64_t begun = cache_log_.Begin();
    call.set_request_id(in_flight.id);
    call.set_client_id(client_id_);
    call.set_oldest_unanswered(in_flight.oldest);
    const std::string fields = rpc::MetaCallFields(call);
    const auto give_up = std::chrono::steady_clock::now() + options_.patience;
    bool said = false;
    int refused = 0;  // refusals in a row, each in a session opened for this call
    for (;;) {
      std::shared_ptr<rpc::ClientSession> session = CurrentSession();
      Status failed;
      if (session != nullptr) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
        rpc::SignCall(*session, context, rpc::kMetaMethod, fields);
        rpc::MetaReply reply;
        const grpc::Status sent = stub_->Meta(&context, call, &reply);
        if (sent.ok()) {
          squashed_by_mds_.store(reply.root_squashed(), std::memory_order_relaxed);
          Learn(call, reply, begun);
          if (said) Logger("client")->info("{}: answering again", name_);
          return reply;
        }
        failed = rpc::FromGrpc(sent, name_);
        // Refused for its session (the MDS restarted and forgot it, or
        // dropped it): nothing was done; a new one is opened below.
        if (sent.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
          DropSession(session);
          // Refused again in a session just opened: not a forgotten
          // session but the key.
          if (++refused >= 2) {
            return Status::Error(EACCES, name_ + " refused the key: " + sent.error_message());
          }
        }
      } else {
        failed = Status::Error(EIO, name_ + ": no session");
      }
      if (std::chrono::steady_clock::now() >= give_up) {
        ForgetDirsOf(call);  // applied or not: unknown
        return Status::Error(EIO, failed.message());
      }
      if (!said) {
        Logger("client")->warn("{}: {}; retrying", name_, failed.message());
        said = true;
      }
      if (CurrentSession() == nullptr) {
        auto opened = Hello(kHelloPatience);
        if (opened.ok()) {
          std::lock_guard lock(mu_);
          session_ = std::move(opened).value();
        } else if (opened.err() == EACCES) {
          return opened.status();  // the key: no retry helps
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

 private:
  Result<std::shared_ptr<rpc::ClientSession>> Hello(std::chrono::nanoseconds patience) {
    auto session = std::make_shared<rpc::ClientSession>(options_.key);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + patience);
    context.set_wait_for_ready(true);
    rpc::HelloRequest request;
    request.set_client_nonce(session->client_nonce());
    rpc::HelloReply reply;
    SFS_RETURN_IF_ERROR(rpc::FromGrpc(stub_->Hello(&context, request, &reply), name_));
    SFS_RETURN_IF_ERROR(session->Open(reply.session(), reply.server_nonce()));
    return session;
  }
  // One stream at a time, reopened after a loss (with a new session if
  // the MDS forgot the old one), until StopCallbacks.
  void CallbackLoop() {
    bool said = false;
    while (true) {
      grpc::ClientContext context;
      {
        std::lock_guard lock(stream_mu_);
        if (stopping_) return;
        stream_context_ = &context;
      }
      std::shared_ptr<rpc::ClientSession> session = CurrentSession();
      if (session == nullptr) {
        auto opened = Hello(kHelloPatience);
        if (opened.ok()) {
          std::lock_guard lock(mu_);
          if (session_ == nullptr) session_ = std::move(opened).value();
          session = session_;
        }
      }
      grpc::Status ended = grpc::Status::CANCELLED;
      if (session != nullptr) {
        rpc::SignCall(*session, context, rpc::kCallbacksMethod, "");
        auto stream = stub_->Callbacks(&context);
        auto acks = std::make_shared<AckWriter>(stream.get());
        rpc::Callback callback;
        bool up = false;
        if (acks->Write(0)) {  // id 0: the opening message
          while (stream->Read(&callback)) {
            Heard(callback.lease_ms());
            if (callback.id() == 0) {
              if (up) continue;  // a lease renewed
              up = true;
              cache_log_.Connected();
              if (said) Logger("client")->info("{}: call-backs up again", name_);
              said = false;
              if (handlers_.reconnected) handlers_.reconnected();
              continue;
            }
            std::vector<uint64_t> inodes(callback.inodes().begin(), callback.inodes().end());
            std::vector<uint64_t> directories(callback.directories().begin(),
                                              callback.directories().end());
            std::vector<uint64_t> all = inodes;
            all.insert(all.end(), directories.begin(), directories.end());
            cache_log_.Revoked(all);
            known_dirs_.Forget(all);  // after the log: KnownDirs::Created reads it
            if (handlers_.revoke && !all.empty()) handlers_.revoke(inodes, directories);
            if (callback.extents_size() > 0 || callback.grants_size() > 0) {
              // Given back once the I/O in flight under them ended, on the
              // releaser's thread: this one keeps reading and acknowledging
              // (an I/O may wait for a change that waits for that).
              ReleaseSoon(callback.id(),
                          std::vector<uint64_t>(callback.extents().begin(),
                                                callback.extents().end()),
                          std::vector<uint64_t>(callback.grants().begin(),
                                                callback.grants().end()),
                          acks);
              continue;
            }
            if (!acks->Write(callback.id())) break;
          }
        }
        acks->Close();
        ended = stream->Finish();
      }
      const bool was_up = cache_log_.connected();
      cache_log_.Disconnected();
      known_dirs_.Clear();
      if (was_up && handlers_.lost) handlers_.lost();
      {
        std::lock_guard lock(stream_mu_);
        stream_context_ = nullptr;
        if (stopping_) return;
      }
      if (ended.error_code() == grpc::StatusCode::UNAUTHENTICATED) DropSession(session);
      if (!said) {
        Logger("client")->warn("{}: call-back stream ended ({}); nothing is cached until it is "
                               "back",
                               name_, ended.error_message());
        said = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // What this client's own namespace changes tell of the directories it
  // knows whole (client/known_dirs.h); a change that failed, or whose
  // outcome is unknown, makes them unknown.
  void Learn(const rpc::MetaCall& call, const rpc::MetaReply& reply, uint64_t begun) {
    if (reply.err() != 0) return ForgetDirsOf(call);
    switch (call.op()) {
      case rpc::MAKE_NODE: case rpc::CREATE:
        known_dirs_.Added(call.ino(), call.name());
        if (S_ISDIR(reply.inode().mode())) known_dirs_.Created(reply.inode().ino(), begun, cache_log_);
        return;
      case rpc::LINK:
        known_dirs_.Added(call.ino2(), call.name2());
        return;
      case rpc::UNLINK: case rpc::RMDIR:
        known_dirs_.Removed(call.ino(), call.name());
        return;
      case rpc::RENAME:
        if (call.number() == static_cast<uint64_t>(meta::RenameMode::kExchange)) return;
        known_dirs_.Removed(call.ino(), call.name());
        known_dirs_.Added(call.ino2(), call.name2());
        return;
      default:
        return;
    }
  }
  void ForgetDirsOf(const rpc::MetaCall& call) {
    switch (call.op()) {
      case rpc::MAKE_NODE: case rpc::CREATE: case rpc::UNLINK: case rpc::RMDIR:
        return known_dirs_.Forget({call.ino()});
      case rpc::LINK:
        return known_dirs_.Forget({call.ino2()});
      case rpc::RENAME:
        return known_dirs_.Forget({call.ino(), call.ino2()});
      default:
        return;
    }
  }

  // Acknowledgements on one stream, from the call-back thread and the
  // releaser's; none once the stream is closed.
  class AckWriter {
   public:
    explicit AckWriter(grpc::ClientReaderWriter<rpc::CallbackAck, rpc::Callback>* stream)
        : stream_(stream) {}
    bool Write(uint64_t id) {
      std::lock_guard lock(mu_);
      if (stream_ == nullptr) return false;
      rpc::CallbackAck ack;
      ack.set_id(id);
      return stream_->Write(ack);
    }
    void Close() {
      std::lock_guard lock(mu_);
      stream_ = nullptr;
    }

   private:
    std::mutex mu_;  // guards stream_ and its writes
    grpc::ClientReaderWriter<rpc::CallbackAck, rpc::Callback>* stream_;
  };

  // A few threads that give credits back, each once the I/O in flight
  // under it ended: one file whose I/O is slow (a slow OST) holds back
  // only its own acknowledgement.
  class ReleaserPool {
   public:
    explicit ReleaserPool(size_t threads) : max_threads_(threads) {}
    void Run(std::function<void()> job) {
      {
        std::lock_guard lock(mu_);
        if (stop_) return;
        jobs_.push_back(std::move(job));
        if (jobs_.size() > idle_ && threads_.size() < max_threads_) {
          threads_.emplace_back([this] { Loop(); });
        }
      }
      cv_.notify_one();
    }
    // Runs what is queued, then joins the threads.
    void Stop() {
      {
        std::lock_guard lock(mu_);
        stop_ = true;
      }
      cv_.notify_all();
      for (std::thread& thread : threads_) thread.join();
    }

   private:
    void Loop() {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock lock(mu_);
          ++idle_;
          cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
          --idle_;
          if (jobs_.empty()) return;
          job = std::move(jobs_.front());
          jobs_.pop_front();
        }
        job();
      }
    }
    const size_t max_threads_;
    std::mutex mu_;  // guards the four below
    std::condition_variable cv_;
    std::deque<std::function<void()>> jobs_;
    bool stop_ = false;
    size_t idle_ = 0;
    std::vector<std::thread> threads_;  // started under mu_, joined by Stop
  };

  // Extent credits and grants go back on pools of their own: a grant's
  // revocation (which a write waiting for its grant may need) never queues
  // behind extent revocations waiting for that write. The acknowledgement
  // goes once both parts are back.
  void ReleaseSoon(uint64_t id, std::vector<uint64_t> extents, std::vector<uint64_t> grants,
                   std::shared_ptr<AckWriter> acks) {
    auto parts = std::make_shared<std::atomic<int>>(!extents.empty() + !grants.empty());
    auto part_done = [id, acks, parts] {
      // A stream gone meanwhile: the MDS dropped them.
      if (parts->fetch_sub(1) == 1) acks->Write(id);
    };
    if (!extents.empty()) {
      extent_releasers_.Run([this, extents = std::move(extents), part_done] {
        if (handlers_.revoke_extents) handlers_.revoke_extents(extents);
        part_done();
      });
    }
    if (!grants.empty()) {
      grant_releasers_.Run([this, grants = std::move(grants), part_done] {
        if (handlers_.revoke_grants) handlers_.revoke_grants(grants);
        part_done();
      });
    }
  }

  // The stream said something: the lease runs from now (`lease_ms`, when
  // the message carries it, is its length).
  void Heard(uint64_t lease_ms) {
    if (lease_ms != 0) lease_ms_.store(lease_ms, std::memory_order_relaxed);
    heard_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                    std::memory_order_relaxed);
  }

  // Seed 003's lease, client side: a client that hears nothing from the
  // MDS for a lease (cut off; the MDS renews it every third) may have been
  // evicted, so it drops its cache and caches nothing until a new stream
  // is up, before the MDS (after twice the lease) lets a change go on
  // without it.
  void LeaseWatch() {
    for (;;) {
      {
        std::lock_guard lock(stream_mu_);
        if (stopping_) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      const uint64_t lease_ms = lease_ms_.load(std::memory_order_relaxed);
      if (lease_ms == 0 || !cache_log_.connected()) continue;
      const auto heard = std::chrono::steady_clock::time_point(
          std::chrono::steady_clock::duration(heard_ns_.load(std::memory_order_relaxed)));
      if (std::chrono::steady_clock::now() - heard < std::chrono::milliseconds(lease_ms)) continue;
      Logger("client")->warn("{}: nothing heard for the {} ms lease: cached metadata dropped, "
                             "call-back stream reopened",
                             name_, lease_ms);
      cache_log_.Disconnected();
      known_dirs_.Clear();
      if (handlers_.lost) handlers_.lost();
      std::lock_guard lock(stream_mu_);
      if (stream_context_ != nullptr) stream_context_->TryCancel();
    }
  }

  static constexpr size_t kClosesPerCall = 256;

  Status CloseAll(const std::vector<uint64_t>& inos) {
    rpc::MetaCall call;
    call.set_op(rpc::CLOSE);
    call.set_ino(inos.front());
    for (size_t i = 1; i < inos.size(); ++i) call.add_more_inos(inos[i]);
    auto reply = Call(std::move(call));
    if (!reply.ok()) return reply.status();
    return rpc::StatusOf(*reply);
  }

  void CloseLoop() {
    std::unique_lock lock(close_mu_);
    for (;;) {
      close_cv_.wait(lock, [&] { return close_stop_ || !closes_.empty(); });
      if (close_stop_) return;
      // What piled up while the last call ran goes in one call.
      std::vector<uint64_t> inos;
      while (!closes_.empty() && inos.size() < kClosesPerCall) {
        inos.push_back(closes_.front());
        closes_.pop_front();
        closing_.insert(inos.back());
      }
      lock.unlock();
      Status closed = CloseAll(inos);
      if (!closed.ok()) {
        Logger("client")->warn("{} closes (inode {} first) not all told to the MDS: {}",
                               inos.size(), inos.front(), closed.ToString());
      }
      lock.lock();
      for (uint64_t ino : inos) closing_.erase(ino);
      close_cv_.notify_all();
    }
  }

  std::shared_ptr<rpc::ClientSession> CurrentSession() {
    std::lock_guard lock(mu_);
    return session_;
  }
  // The MDS refused `session` (it restarted, or forgot it): calls open a
  // new one, and the call-back stream must follow, since the MDS grants
  // credits only to a session with a stream. Until it is up again nothing
  // may be cached.
  void DropSession(const std::shared_ptr<rpc::ClientSession>& session) {
    {
      std::lock_guard lock(mu_);
      if (session_ != session) return;
      session_.reset();
    }
    cache_log_.Disconnected();
    known_dirs_.Clear();
    std::lock_guard lock(stream_mu_);
    if (stream_context_ != nullptr) stream_context_->TryCancel();
  }

  const MdsOptions options_;
  const std::string name_;
  const std::unique_ptr<rpc::Mds::Stub> stub_;
  // A call from its request id's allotment to its answer (or failure):
  // the MDS may drop reply records below the oldest one in flight.
  struct InFlight {
    explicit InFlight(GrpcMdsClient* client) : client_(client) {
      std::lock_guard lock(client->requests_mu_);
      id = client->next_request_++;
      client->in_flight_.insert(id);
      oldest = *client->in_flight_.begin();
    }
    ~InFlight() {
      std::lock_guard lock(client_->requests_mu_);
      client_->in_flight_.erase(id);
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;
    GrpcMdsClient* const client_;
    uint64_t id = 0;
    uint64_t oldest = 0;
  };
  // Random, for the mount's life: a client mount restarted is a new client
  // (its old records go when the MDS sees it no more).
  const uint64_t client_id_ = RandomClientId();
  std::mutex requests_mu_;  // guards next_request_ and in_flight_; a leaf
  uint64_t next_request_ = 1;
  std::set<uint64_t> in_flight_;
  // Credits given back on threads of their own (ReleaseSoon).
  ReleaserPool extent_releasers_{4};
  ReleaserPool grant_releasers_{8};
  KnownDirs known_dirs_;
  // The MDS's latest reply said it squashes this client's root.
  std::atomic<bool> squashed_by_mds_{false};
  std::mutex mu_;  // guards session_
  std::shared_ptr<rpc::ClientSession> session_;
  CacheLog cache_log_;
  CallbackHandlers handlers_;  // set before the thread starts, then read only
  std::thread callbacks_;
  std::mutex stream_mu_;  // guards stopping_ and stream_context_
  bool stopping_ = false;
  grpc::ClientContext* stream_context_ = nullptr;
  std::mutex close_mu_;  // guards the closes below
  std::condition_variable close_cv_;
  std::deque<uint64_t> closes_;          // not told yet, in order
  std::unordered_set<uint64_t> closing_;  // being told
  bool close_stop_ = false;
  std::thread closer_;  // started by the first CloseSoon
  std::thread lease_watch_;
  std::atomic<uint64_t> lease_ms_{0};   // 0: no lease given yet
  std::atomic<int64_t> heard_ns_{0};    // steady_clock, the stream's last message
};

rpc::MetaCall NewCall(rpc::MetaOp op, const MdsCaller* caller = nullptr) {
  rpc::MetaCall call;
  call.set_op(op);
  if (caller != nullptr) SetCaller(*caller, &call);
  return call;
}

// The call's reply when the operation succeeded, else its error.
Result<rpc::MetaReply> Done(Result<rpc::MetaReply> reply) {
  if (!reply.ok()) return reply.status();
  SFS_RETURN_IF_ERROR(rpc::StatusOf(*reply));
  return reply;
}

}  // namespace

bool IsMdsPath(const std::string& source) { return source.rfind(kMdsScheme, 0) == 0; }

Result<std::string> ParseMdsPath(const std::string& source) {
  if (!IsMdsPath(source)) return Status::Error(EINVAL, source + ": not mds://ADDRESS:PORT");
  std::string address = source.substr(std::string(kMdsScheme).size());
  while (!address.empty() && address.back() == '/') address.pop_back();
  const size_t colon = address.rfind(':');
  if (address.empty() || address.find('/') != std::string::npos || colon == std::string::npos ||
      colon == 0 || colon + 1 == address.size()) {
    return Status::Error(EINVAL, source + ": expected mds://ADDRESS:PORT");
  }
  for (size_t i = colon + 1; i < address.size(); ++i) {
    if (address[i] < '0' || address[i] > '9') {
      return Status::Error(EINVAL, source + ": the port is not a number");
    }
  }
  return address;
}

Result<std::shared_ptr<MdsClient>> MdsClient::Connect(MdsOptions options) {
  auto credentials = rpc::ClientCredentials(options.tls);
  if (!credentials.ok()) return credentials.status();
  auto client = std::make_shared<GrpcMdsClient>(std::move(options), std::move(credentials).value());
  SFS_RETURN_IF_ERROR(client->Connect());
  return std::shared_ptr<MdsClient>(std::move(client));
}

Result<meta::Inode> MdsClient::MakeNode(const MdsCaller& caller, uint64_t parent,
                                        const std::string& name, uint32_t mode, uint64_t rdev,
                                        const std::string& symlink, Opened* opened) {
  rpc::MetaCall call = NewCall(rpc::MAKE_NODE, &caller);
  call.set_flag(opened != nullptr);
  call.set_ino(parent);
  call.set_name(name);
  call.mutable_node()->set_mode(mode);
  call.mutable_node()->set_rdev(rdev);
  call.mutable_node()->set_symlink(symlink);
  auto reply = Done(Call(std::move(call)));
  if (!reply.ok()) return reply.status();
  if (opened != nullptr) *opened = Opened{rpc::FromWire(reply->inode()), reply->value()};
  return rpc::FromWire(reply->inode());
}

Result<meta::Removed> MdsClient::Unlink(uint64_t parent, const std::string& name) {
  rpc::MetaCall call = NewCall(rpc::UNLINK);
  call.set_ino(parent);
  call.set_name(name);
  auto reply = Done(Call(std::move(call)));
  if (!reply.ok()) return reply.status();
  return rpc::FromWire(reply->removed());
}

CallerScope::CallerScope(std::optional<MdsCaller> caller)
    : caller_(std::move(caller)), saved_(tls_caller) {
  tls_caller = caller_ ? &*caller_ : nullptr;
}
CallerScope::~CallerScope() { tls_caller = saved_; }
const MdsCaller* CallerScope::Current() { return tls_caller; }

Result<MdsClient::Opened> MdsClient::Open(uint64_t ino, int flags) {
  rpc::MetaCall call = NewCall(rpc::OPEN);
  call.set_ino(ino);
  call.set_number(static_cast<uint64_t>(flags & (O_ACCMODE | O_TRUNC)));
  auto reply = Done(Call(std::move(call)));
  if (!reply.ok()) return reply.status();
  return Opened{rpc::FromWire(reply->inode()), reply->value()};
}

Result<rpc::MetaReply> MdsClient::CallOnceAttached(const rpc::MetaCall& call) {
  // EAGAIN: the MDS grants only a client whose call-back stream is up
  // (just mounted, or the stream is being reopened).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto reply = Done(Call(call));
    if (reply.ok() || reply.err() != EAGAIN) return reply;
    if (std::chrono::steady_clock::now() >= give_up) {
      // Not EAGAIN to the caller of read(2) or write(2): the MDS is there
      // but its call-back stream to this client has not come up.
      return Status::Error(EIO, address() + ": no call-back stream for 30 s: " +
                                    reply.status().message());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

Status MdsClient::ExtentGet(uint64_t ino, bool write) {
  rpc::MetaCall call = NewCall(rpc::EXTENT_GET);
  call.set_ino(ino);
  call.set_number(write ? 2 : 1);
  return CallOnceAttached(call).status();
}

Result<RoomGrant> MdsClient::AskRoom(const std::map<uint32_t, uint64_t>& per_ost,
                                     const std::vector<uint64_t>& done) {
  rpc::MetaCall call = NewCall(rpc::ROOM_GRANT);
  for (const auto& [ost, bytes] : per_ost) {
    rpc::OstBytes* one = call.mutable_room()->add_per_ost();
    one->set_ost(ost);
    one->set_bytes(bytes);
  }
  for (uint64_t id : done) call.mutable_room()->add_done(id);
  auto reply = CallOnceAttached(call);
  if (!reply.ok()) return reply.status();
  RoomGrant grant;
  for (const rpc::OstBytes& room : reply->rooms()) {
    grant.id = room.grant();
    grant.bytes[room.ost()] = room.bytes();
  }
  if (grant.bytes.size() != per_ost.size()) {
    return Status::Error(EIO, "the MDS answered room on " + std::to_string(grant.bytes.size()) +
                                  " OSTs for an ask of " + std::to_string(per_ost.size()));
  }
  return grant;
}

Result<QuotaGrant> MdsClient::AskQuota(const control::QuotaOwner& owner, uint32_t caller,
                                       size_t ost, uint64_t bytes,
                                       const std::vector<uint64_t>& done) {
  // The request's own caller (its job id, for the metadata NRS), else the
  // mount's work for a write admitted later: the uid is the write's.
  const MdsCaller* current = CallerScope::Current();
  MdsCaller who = current != nullptr ? *current : MdsCaller{};
  who.uid = caller;
  rpc::MetaCall call = NewCall(rpc::QUOTA_GRANT, &who);
  rpc::QuotaAsk* ask = call.mutable_quota();
  ask->set_uid(owner.uid);
  ask->set_gid(owner.gid);
  ask->set_projid(owner.projid);
  ask->set_ost(static_cast<uint32_t>(ost));
  ask->set_bytes(bytes);
  for (uint64_t id : done) ask->add_done(id);
  auto reply = CallOnceAttached(call);
  if (!reply.ok()) return reply.status();
  QuotaGrant grant;
  grant.id = reply->number();
  grant.unlimited = reply->granted() == UINT64_MAX;
  grant.bytes = grant.unlimited ? 0 : reply->granted();
  return grant;
}

Status MdsClient::CheckAccess(uint64_t ino, int mask) {
  rpc::MetaCall call = NewCall(rpc::CHECK_ACCESS);
  call.set_ino(ino);
  call.set_number(static_cast<uint64_t>(mask));
  return Done(Call(std::move(call))).status();
}

Status MdsClient::Reopen(uint64_t ino) {
  rpc::MetaCall call = NewCall(rpc::OPEN);
  call.set_ino(ino);
  call.set_flag(true);
  return Done(Call(std::move(call))).status();
}

Status MdsClient::Close(uint64_t ino) {
  rpc::MetaCall call = NewCall(rpc::CLOSE);
  call.set_ino(ino);
  return Done(Call(std::move(call))).status();
}

Status MdsClient::ForgetRemoved(uint64_t ino) {
  rpc::MetaCall call = NewCall(rpc::FORGET_REMOVED);
  call.set_ino(ino);
  return Done(Call(std::move(call))).status();
}

Result<std::string> MdsClient::GetFsSetting(const std::string& name) {
  rpc::MetaCall call = NewCall(rpc::FS_GET_SETTING);
  call.set_name(name);
  auto reply = Done(Call(std::move(call)));
  if (!reply.ok()) return reply.status();
  return reply->value();
}

Status MdsClient::SetFsSetting(const MdsCaller& caller, const std::string& name,
                               const std::string& value) {
  rpc::MetaCall call = NewCall(rpc::FS_SET_SETTING, &caller);
  call.set_name(name);
  call.set_value(value);
  return Done(Call(std::move(call))).status();
}

Status MdsClient::RemoveFsSetting(const MdsCaller& caller, const std::string& name) {
  rpc::MetaCall call = NewCall(rpc::FS_REMOVE_SETTING, &caller);
  call.set_name(name);
  return Done(Call(std::move(call))).status();
}

Status MdsClient::SetLayoutXattr(const MdsCaller& caller, uint64_t ino, const std::string& value) {
  rpc::MetaCall call = NewCall(rpc::SET_LAYOUT_XATTR, &caller);
  call.set_ino(ino);
  call.set_value(value);
  return Done(Call(std::move(call))).status();
}

}  // namespace sfs::client
