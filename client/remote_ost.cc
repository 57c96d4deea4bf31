#include "client/remote_ost.h"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <unordered_set>

#include "common/log.h"
#include "ost/execute.h"
#include "rpc/bulk.h"
#include "rpc/nrs_wire.h"
#include "rpc/grpc_setup.h"
#include "rpc/wire.h"

namespace sfs::client {
namespace {

using Clock = nrs::Clock;

// As the OSS's: the largest request (64 MiB) and the message around it.
constexpr int kMaxMessageBytes = (64 << 20) + (1 << 20);
// How often the status thread asks the OSS for its OST's status.
constexpr std::chrono::milliseconds kStatusInterval{200};
// How long mount-time checks (and a stop's wait for calls) may take.
constexpr std::chrono::seconds kConnectPatience{5};
// How long a settings change or an nrs_stats read waits for an OSS; one
// that does not answer gets the settings when it does (the status thread).
constexpr std::chrono::seconds kSettingsPatience{2};
// An OSS that stops answering (a dead machine, a cut network, a stopped
// process) is found by HTTP/2 pings (rpc/grpc_setup.h): the calls on it
// then fail (EIO) instead of waiting.
// However long a request may wait in the OSS's queues (a TBF throttle),
// at most this (Lustre's at_max).
constexpr std::chrono::seconds kIoDeadline{600};
// Asynchronous calls in flight per remote OST; more wait here. The OSS
// holds a thread per call its NRS keeps queued (oss/server.cc), so
// without a bound one busy mount could take them all.
constexpr size_t kMaxAsyncCalls = 64;

// Opens a session with Hello, waiting at most `patience`.
Result<std::shared_ptr<rpc::ClientSession>> Hello(rpc::Oss::Stub& stub, const rpc::Key& key,
                                                  const std::string& peer,
                                                  std::chrono::nanoseconds patience) {
  auto session = std::make_shared<rpc::ClientSession>(key);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + patience);
  rpc::HelloRequest request;
  request.set_client_nonce(session->client_nonce());
  rpc::HelloReply reply;
  SFS_RETURN_IF_ERROR(rpc::FromGrpc(stub.Hello(&context, request, &reply), peer));
  SFS_RETURN_IF_ERROR(session->Open(reply.session(), reply.server_nonce()));
  return session;
}

// A read's reply into the request's buffers, as a local OST leaves them:
// `length` bytes, zeros past what the OSS sent. A longer reply is cut (an
// OSS does not send one; the pipe has room for `length` bytes only).
// A read's reply bytes, in pieces (one for a message, the received
// slices for a bulk reply), into the request's pipe or buffers; past what
// the OSS sent (the object's end) zeros.
Status Deliver(const std::vector<std::string_view>& pieces, ost::IoRequest& r) {
  const uint64_t length = r.info.length;
  uint64_t at = 0;
  size_t next_iov = 0, iov_at = 0;
  for (std::string_view piece : pieces) {
    piece = piece.substr(0, static_cast<size_t>(std::min<uint64_t>(piece.size(), length - at)));
    if (r.pipe >= 0) {
      SFS_RETURN_IF_ERROR(ost::WriteToPipe(r.pipe, piece.data(), piece.size()));
    } else {
      size_t from = 0;
      while (from < piece.size() && next_iov < r.iov.size()) {
        const iovec& part = r.iov[next_iov];
        const size_t n = std::min(part.iov_len - iov_at, piece.size() - from);
        std::memcpy(static_cast<char*>(part.iov_base) + iov_at, piece.data() + from, n);
        from += n;
        iov_at += n;
        if (iov_at == part.iov_len) {
          ++next_iov;
          iov_at = 0;
        }
      }
    }
    at += piece.size();
  }
  if (r.pipe >= 0) return ost::ZerosToPipe(r.pipe, length - at);
  ost::ZeroFrom(r.iov, at);
  return Status::Ok();
}

// What a remote OST's backend asks of its RemoteOst (settling writes after
// an unclean stop, fs/settle_writes.cc).
class RemoteObjects {
 public:
  virtual ~RemoteObjects() = default;
  // The object's size and allocation (rpc ObjectStat); ENOENT if missing.
  virtual Result<rpc::ObjectReply> Stat(uint64_t object_id) = 0;
  // A truncate or destroy of the object, as a request through its OST's
  // NRS (the OSS's object cache sees it), waited for.
  virtual Status Change(nrs::Op op, uint64_t object_id, uint64_t size) = 0;
  // Every object of the OST (rpc ListObjects).
  virtual Result<ost::ObjectListing> List() = 0;
};

// An object of a remote OST as settling sees it: looked at and cut or
// removed, never read or written this way (requests do that).
class RemoteObjectFile final : public ost::ObjectFile {
 public:
  RemoteObjectFile(RemoteObjects* objects, uint64_t object_id)
      : objects_(objects), object_id_(object_id) {}
  Result<size_t> ReadV(const iovec*, int, uint64_t) override { return Unsupported(); }
  Status WriteV(const iovec*, int, uint64_t) override { return Unsupported(); }
  Status Sync(bool) override { return Unsupported(); }
  Status Truncate(uint64_t size) override {
    return objects_->Change(nrs::Op::kTruncate, object_id_, size);
  }
  Status Punch(uint64_t, uint64_t) override { return Unsupported(); }
  Status Allocate(uint64_t, uint64_t, bool) override { return Unsupported(); }
  Result<uint64_t> Size() override {
    auto stat = objects_->Stat(object_id_);
    if (!stat.ok()) return stat.status();
    return stat->size();
  }
  Result<uint64_t> Allocated() override {
    auto stat = objects_->Stat(object_id_);
    if (!stat.ok()) return stat.status();
    return stat->allocated();
  }
  Result<std::optional<uint64_t>> Seek(uint64_t, int) override { return Unsupported(); }

 private:
  static Status Unsupported() {
    return Status::Error(ENOTSUP, "objects of a remote OST are read and written by requests");
  }
  RemoteObjects* const objects_;
  const uint64_t object_id_;
};

// What the mount keeps of an OST's backend when the OSS has it: a name for
// log lines, whether it answers, and the little settling needs (objects
// are otherwise reached only through requests: the OSS's NRS sees every
// one).
class RemoteBackend final : public ost::Backend {
 public:
  RemoteBackend(std::string name, const std::atomic<bool>* connected, RemoteObjects* objects)
      : name_(std::move(name)), connected_(connected), objects_(objects) {}
  Result<std::unique_ptr<ost::ObjectFile>> Open(uint64_t object_id, bool create) override {
    if (create) return Unsupported();
    auto stat = objects_->Stat(object_id);
    if (!stat.ok()) return stat.status();
    return std::unique_ptr<ost::ObjectFile>(std::make_unique<RemoteObjectFile>(objects_, object_id));
  }
  Status Remove(uint64_t object_id) override {
    return objects_->Change(nrs::Op::kDestroy, object_id, 0);
  }
  Result<ost::SpaceInfo> Space() override { return Unsupported(); }
  Result<ost::ObjectListing> ListObjects() override { return objects_->List(); }
  bool Available() const override { return connected_->load(std::memory_order_relaxed); }
  std::string Describe() const override { return name_; }

 private:
  Status Unsupported() const {
    return Status::Error(ENOTSUP, name_ + ": objects of a remote OST are reached by requests only");
  }
  const std::string name_;
  const std::atomic<bool>* const connected_;  // the RemoteOst's
  RemoteObjects* const objects_;               // the RemoteOst
};

class RemoteOst final : public ost::Service, private RemoteObjects {
 public:
  RemoteOst(RemoteOstOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials)
      : options_(std::move(options)),
        name_(kOssScheme + options_.oss.address + options_.oss.dir),
        channel_(rpc::MakeChannel(options_.oss.address, std::move(credentials), kMaxMessageBytes)),
        stub_(rpc::Oss::NewStub(channel_)),
        bulk_stub_(channel_),
        backend_(name_, &connected_, this) {
    ref_.set_dir(options_.oss.dir);
    ref_.set_fs_uuid(options_.fs_uuid);
    ref_.set_ost_uuid(options_.ost_uuid);
    ref_.set_index(options_.index);
  }

  ~RemoteOst() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      wake_status_.notify_all();
    }
    {
      std::lock_guard lock(epoch_mu_);
      epoch_stopping_ = true;
      if (epoch_context_ != nullptr) epoch_context_->TryCancel();
      wake_epochs_.notify_all();
    }
    if (epoch_thread_.joinable()) epoch_thread_.join();
    {
      // The hub may still hold a callback of this OST's; it finds no one.
      std::lock_guard lock(epoch_gate_->mu);
      epoch_gate_->self = nullptr;
    }
    if (status_thread_.joinable()) status_thread_.join();
    // Calls that waited for a session the status thread will not open now.
    std::vector<Call*> waiting, later;
    {
      std::lock_guard lock(mu_);
      later.swap(deliver_later_);
      waiting.swap(waiting_);
      waiting.insert(waiting.end(), capped_.begin(), capped_.end());
      capped_.clear();
    }
    for (Call* call : later) Complete(call, std::move(*call->parked));
    for (Call* call : waiting) Complete(call, Status::Error(EIO, name_ + ": stopping"));
    std::unique_lock lock(mu_);
    // Outcomes a Cancel left to tell now that the status thread is gone.
    auto drain_later = [&] {
      while (!deliver_later_.empty()) {
        std::vector<Call*> later;
        later.swap(deliver_later_);
        lock.unlock();
        for (Call* call : later) Complete(call, std::move(*call->parked));
        lock.lock();
      }
    };
    const auto patience = std::chrono::steady_clock::now() + kConnectPatience;
    while (!in_flight_.empty() && std::chrono::steady_clock::now() < patience) {
      drain_later();
      idle_.wait_until(lock, std::min(patience, std::chrono::steady_clock::now() +
                                                    std::chrono::milliseconds(100)));
    }
    if (!in_flight_.empty()) {
      Logger("client")->warn("{}: {} requests still unanswered at stop; cancelling them", name_,
                             in_flight_.size());
      for (Call* call : in_flight_) {
        if (call->context) call->context->TryCancel();
      }
      while (!in_flight_.empty()) {
        drain_later();
        idle_.wait_for(lock, std::chrono::milliseconds(100));
      }
    }
  }

  // Checks, with a few seconds' patience, that the OSS takes the key and
  // serves this OST under its label. An OSS that does not answer is not
  // an error here: the OST starts unresponsive and comes in when it does.
  Status Connect() {
    Status checked = CheckAtConnect();
    if (!checked.ok()) return checked;
    status_thread_ = std::thread([this] { StatusLoop(); });
    if (options_.epochs) epoch_thread_ = std::thread([this] { EpochLoop(); });
    return checked;
  }

  Status CheckAtConnect() {
    auto session = Hello(*stub_, options_.key, name_, kConnectPatience);
    if (!session.ok()) {
      Logger("client")->warn("{}: not answering at mount ({}); unresponsive until it does",
                             name_, session.status().message());
      return Status::Ok();
    }
    {
      std::lock_guard lock(mu_);
      session_ = *session;
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kConnectPatience);
    rpc::StatusCall call;
    *call.mutable_ost() = ref_;
    rpc::SignCall(**session, context, rpc::kStatusMethod, rpc::OstRefFields(call.ost()));
    rpc::StatusReply reply;
    Status sent = rpc::FromGrpc(stub_->Status(&context, call, &reply), name_);
    if (sent.err() == EACCES) {
      return Status::Error(EACCES, name_ + " refused this filesystem's key: " + sent.message());
    }
    if (!sent.ok()) return Status::Ok();  // unresponsive for now, as above
    if (reply.err() != 0) return Status::Error(reply.err(), name_ + ": " + reply.message());
    TakeStatus(reply, Clock::now());
    return Status::Ok();
  }

  uint32_t index() const override { return options_.index; }
  ost::Backend& backend() override { return backend_; }

  std::shared_ptr<ost::ObjectHandle> Object(uint64_t object_id) override {
    // The handle names the object; nothing opens it on this side.
    return std::make_shared<ost::ObjectHandle>(/*cache=*/nullptr, object_id);
  }
  void CloseObject(uint64_t) override {}  // the OSS's object cache is its own
  void SetOpenObjects(size_t) override {}

  void Submit(std::unique_ptr<ost::IoRequest> request) override {
    Send(Prepare(std::move(request)).release());
  }

  void SubmitOrRun(std::unique_ptr<ost::IoRequest> request,
                   const std::function<void(ost::IoRequest&)>& before_queueing) override {
    // On the caller's thread when a share of the budget is free and a
    // session is open: a blocking call, whose reply wakes this thread
    // only (no hand-off to a gRPC thread and back).
    std::shared_ptr<rpc::ClientSession> session;
    if (ClaimInline()) {
      std::lock_guard lock(mu_);
      session = work_conserving_ ? session_ : nullptr;
      if (!session) ReleaseInline();
    }
    if (!session) {
      // The reply comes on another thread: the caller's buffers must be
      // its own first.
      if (before_queueing) before_queueing(*request);
      Submit(std::move(request));
      return;
    }
    std::unique_ptr<Call> call = Prepare(std::move(request));
    {
      std::lock_guard lock(mu_);
      in_flight_.insert(call.get());
    }
    grpc::Status status = CallNow(*call, std::move(session));
    ReleaseInline();
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      // A new session first: through the asynchronous path, which waits
      // for it (the caller's buffers made its own).
      call->resent = true;
      {
        std::lock_guard lock(mu_);
        if (session_ == call->session) session_.reset();
      }
      if (before_queueing) before_queueing(*call->request);
      Send(call.release());  // still in in_flight_: a stop waits for it
      return;
    }
    OnReply(call.release(), std::move(status));
  }

 private:
  Result<rpc::ObjectReply> Stat(uint64_t object_id) override {
    std::shared_ptr<rpc::ClientSession> session;
    {
      std::lock_guard lock(mu_);
      session = session_;
    }
    if (!session) return Status::Error(EIO, name_ + ": no session");
    rpc::ObjectCall call;
    *call.mutable_ost() = ref_;
    call.set_object_id(object_id);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kConnectPatience);
    rpc::SignCall(*session, context, rpc::kObjectStatMethod, rpc::ObjectCallFields(call));
    rpc::ObjectReply reply;
    SFS_RETURN_IF_ERROR(rpc::FromGrpc(stub_->ObjectStat(&context, call, &reply), name_));
    if (reply.err() != 0) return Status::Error(reply.err(), name_ + ": " + reply.message());
    return reply;
  }

  Result<ost::ObjectListing> List() override {
    std::shared_ptr<rpc::ClientSession> session;
    {
      std::lock_guard lock(mu_);
      session = session_;
    }
    if (!session) return Status::Error(EIO, name_ + ": no session");
    rpc::ObjectCall call;
    *call.mutable_ost() = ref_;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kIoDeadline);
    rpc::SignCall(*session, context, rpc::kListObjectsMethod, rpc::ObjectCallFields(call));
    auto reader = stub_->ListObjects(&context, call);
    ost::ObjectListing listing;
    rpc::ObjectBatch batch;
    while (reader->Read(&batch)) {
      if (batch.err() != 0) return Status::Error(batch.err(), name_ + ": " + batch.message());
      if (batch.id_size() != batch.size_size()) {
        return Status::Error(EIO, name_ + ": a listing whose ids and sizes differ");
      }
      for (int i = 0; i < batch.id_size(); ++i) listing.objects.push_back({batch.id(i), batch.size(i)});
      for (const std::string& stranger : batch.strangers()) listing.strangers.push_back(stranger);
    }
    SFS_RETURN_IF_ERROR(rpc::FromGrpc(reader->Finish(), name_));
    return listing;
  }

  Status Change(nrs::Op op, uint64_t object_id, uint64_t size) override {
    // Told on a reply thread; this one waits.
    class Waiter final : public ost::IoObserver {
     public:
      void PartDone(ost::IoRequest&, const Status& status, size_t) override {
        std::lock_guard lock(mu);
        result = status;
        cv.notify_one();
      }
      std::mutex mu;
      std::condition_variable cv;
      std::optional<Status> result;
    } waiter;
    auto request = std::make_unique<ost::IoRequest>();
    request->info.op = op;
    request->info.object_id = object_id;
    request->object = Object(object_id);
    request->truncate_size = size;
    request->observer = &waiter;
    Submit(std::move(request));
    std::unique_lock lock(waiter.mu);
    waiter.cv.wait(lock, [&] { return waiter.result.has_value(); });
    return *waiter.result;
  }

  struct Call;
  std::unique_ptr<Call> Prepare(std::unique_ptr<ost::IoRequest> request) {
    ost::IoRequest& r = *request;
    if (r.info.arrival == nrs::TimePoint{}) r.info.arrival = Clock::now();
    r.info.ost = options_.index;
    auto call = std::make_unique<Call>();
    call->request = std::move(request);
    rpc::IoCall& io = call->call;
    *io.mutable_ost() = ref_;
    io.set_op(static_cast<uint32_t>(r.info.op));
    io.set_object_id(r.object ? r.object->object_id() : r.info.object_id);
    io.set_offset(r.info.offset);
    io.set_length(r.info.length);
    io.set_truncate_size(r.truncate_size);
    io.set_keep_size(r.keep_size);
    io.set_data_only(r.data_only);
    io.set_whence(r.whence);
    io.set_must_exist(r.must_exist);
    io.mutable_caller()->set_uid(r.info.uid);
    io.mutable_caller()->set_gid(r.info.gid);
    io.mutable_caller()->set_pid(r.info.pid);
    if (r.info.jobid) io.mutable_caller()->set_jobid(*r.info.jobid);
    const bool data_op = r.info.op == nrs::Op::kWrite || r.info.op == nrs::Op::kRead;
    call->bulk = data_op && r.info.length >= rpc::kBulkBytes;
    if (r.info.op == nrs::Op::kWrite && !call->bulk) {
      std::string* data = io.mutable_data();
      data->reserve(r.info.length);
      for (const iovec& part : r.iov) data->append(static_cast<const char*>(part.iov_base), part.iov_len);
    }
    if (r.info.op == nrs::Op::kDestroy) destroys_.fetch_add(1, std::memory_order_relaxed);
    io.set_request_id(next_request_id_.fetch_add(1, std::memory_order_relaxed));
    return call;
  }

  // One share of the mount's inline budget at most, as a LocalService
  // takes: an OSS that stops answering holds one FUSE worker, not all.
  bool ClaimInline() {
    if (!options_.inline_budget || inline_busy_.exchange(true)) return false;
    if (options_.inline_budget->fetch_sub(1, std::memory_order_acq_rel) > 0) return true;
    options_.inline_budget->fetch_add(1, std::memory_order_acq_rel);
    inline_busy_.store(false);
    return false;
  }
  void ReleaseInline() {
    options_.inline_budget->fetch_add(1, std::memory_order_acq_rel);
    inline_busy_.store(false);
  }

  // The call, made and waited for on this thread.
  grpc::Status CallNow(Call& call, std::shared_ptr<rpc::ClientSession> session) {
    StartContext(call, std::move(session));
    if (!call.bulk) return stub_->Io(call.context.get(), call.call, &call.reply);
    // The generic stub has no blocking call: this thread waits for its
    // completion.
    std::mutex mu;
    std::condition_variable cv;
    std::optional<grpc::Status> result;
    StartBulk(call, [&](grpc::Status status) {
      std::lock_guard lock(mu);
      result = std::move(status);
      cv.notify_one();
    });
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return result.has_value(); });
    return *result;
  }

  // A fresh context, signed in `session`, and the reply cleared.
  // A fresh context, signed in `session` as the call is now (Raise may
  // have marked it raised meanwhile), published with the session and
  // `issued` under mu_ (Raise, Cancel and a stop read them there).
  void StartContext(Call& call, std::shared_ptr<rpc::ClientSession> session) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + kIoDeadline);
    call.reply.Clear();
    call.reply_data.clear();
    std::lock_guard lock(mu_);
    const bool write = call.request->info.op == nrs::Op::kWrite;
    call.fields = call.bulk ? rpc::IoCallFields(call.call, write ? call.request->info.length : 0)
                            : rpc::IoCallFields(call.call);
    rpc::SignCall(*session, *context, call.bulk ? rpc::kIoBulkMethod : rpc::kIoMethod, call.fields);
    call.context = std::move(context);
    call.session = std::move(session);
    call.issued = true;
  }

  // Sends a bulk call. A write's bytes are copied once into a slice gRPC
  // owns (the only copy on this side): slices referring to the caller's
  // buffers could still be in the transport's hands after a call ended by
  // deadline or cancellation, when the caller has freed them.
  void StartBulk(Call& call, std::function<void(grpc::Status)> done) {
    std::vector<grpc::Slice> payload;
    if (call.request->info.op == nrs::Op::kWrite) {
      grpc::Slice owned(static_cast<size_t>(call.request->info.length));
      uint8_t* at = const_cast<uint8_t*>(owned.begin());
      for (const iovec& part : call.request->iov) {
        const size_t n = std::min<size_t>(part.iov_len, owned.end() - at);
        std::memcpy(at, part.iov_base, n);
        at += n;
      }
      payload.push_back(std::move(owned));
    }
    call.bulk_message = rpc::EncodeBulk(call.call, payload);
    call.bulk_reply.Clear();
    bulk_stub_.UnaryCall(call.context.get(), rpc::kIoBulkPath, grpc::StubOptions(),
                         &call.bulk_message, &call.bulk_reply, std::move(done));
  }

 public:
  void SubmitOrStart(std::unique_ptr<ost::IoRequest> request,
                     const std::function<void(ost::IoRequest&)>& before_queueing,
                     const IoStarter&) override {
    // A thread that must not wait (an io_uring queue's): asynchronous.
    if (before_queueing) before_queueing(*request);
    Submit(std::move(request));
  }
  void FinishStarted(ost::IoRequest*, ost::ObjectFile&, Status, size_t) override {
    // SubmitOrStart never starts one here.
  }
  void LetGo(std::shared_ptr<ost::ObjectFile>) override {}

  // Seed 000's nrs_priority on the OSS: a request not sent yet goes
  // marked raised; one the OSS may hold is raised there (rpc Steer, not
  // waited for).
  void Raise(ost::IoRequest& request) override {
    uint64_t request_id = 0;
    std::shared_ptr<rpc::ClientSession> session;
    {
      std::lock_guard lock(mu_);
      Call* call = FindLocked(request);
      if (call == nullptr) return;
      if (!call->issued) {
        call->call.set_raised(true);  // signed and sent so
        return;
      }
      if (!call->session) return;
      request_id = call->call.request_id();
      session = call->session;
    }
    auto steer = std::make_shared<SteerState>();
    steer->call.set_request_id(request_id);
    rpc::SignCall(*session, steer->context, rpc::kSteerMethod, rpc::SteerCallFields(steer->call));
    steer->context.set_deadline(std::chrono::system_clock::now() + kSettingsPatience);
    stub_->async()->Steer(&steer->context, &steer->call, &steer->reply,
                          [steer](grpc::Status) {});  // kept alive until done
  }

  // An interrupted caller: a request not sent yet is taken back here; one
  // the OSS holds is taken out of its queues if it is still there (rpc
  // Steer, at most kSettingsPatience), and its call's answer (ECANCELED)
  // is dropped. False if it is in service or done (it goes on as usual).
  bool Cancel(ost::IoRequest& request) override {
    uint64_t request_id = 0;
    std::shared_ptr<rpc::ClientSession> session;
    Call* call = nullptr;
    {
      std::lock_guard lock(mu_);
      call = FindLocked(request);
      if (call == nullptr || call->cancel_pending || call->parked) return false;
      if (TakeUnsentLocked(call)) {
        if (request.info.op == nrs::Op::kDestroy) destroys_.fetch_sub(1, std::memory_order_relaxed);
        call->request.release();  // the caller's again
        in_flight_.erase(call);
        if (in_flight_.empty()) idle_.notify_all();
        delete call;
        return true;
      }
      // A caller's thread waits in a synchronous call only while the OSS's
      // policies hold nothing back (SubmitOrRun): not worth taking back.
      if (!call->issued || !call->async || !call->session) return false;
      call->cancel_pending = true;
      request_id = call->call.request_id();
      session = call->session;
    }
    rpc::SteerCall steer;
    steer.set_request_id(request_id);
    steer.set_cancel(true);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kSettingsPatience);
    rpc::SignCall(*session, context, rpc::kSteerMethod, rpc::SteerCallFields(steer));
    rpc::SteerReply reply;
    const bool cancelled = stub_->Steer(&context, steer, &reply).ok() && reply.cancelled();
    std::unique_lock lock(mu_);
    // Its call answers at once (ECANCELED); nobody is told of it. Should
    // the answer not come in time, it is not taken back: the ECANCELED
    // that comes later sends it again (OnReply), and it is served.
    if (cancelled &&
        parked_cv_.wait_for(lock, kSettingsPatience, [&] { return call->parked.has_value(); }) &&
        call->parked->err() == ECANCELED) {
      in_flight_.erase(call);
      if (in_flight_.empty()) idle_.notify_all();
      if (request.info.op == nrs::Op::kDestroy) destroys_.fetch_sub(1, std::memory_order_relaxed);
      call->request.release();  // the caller's again
      lock.unlock();
      delete call;
      return true;
    }
    call->cancel_pending = false;
    if (call->parked) {
      // Its outcome came while the OSS was asked: told from the status
      // thread (the caller of Cancel may hold the lock its observer takes).
      deliver_later_.push_back(call);
      wake_status_.notify_all();
    }
    return false;
  }

  // The settings layer's decision for this OST, sent whole to its OSS now
  // if it answers, else by the status thread once it does (an OSS that
  // restarted runs fifo until then: its Status says it runs none).
  void Apply(const nrs::TargetSettings&, const nrs::TargetSettings& next,
             const nrs::PolicyRegistry&) override {
    {
      std::lock_guard lock(mu_);
      settings_ = next;
      settings_bytes_ = rpc::ToWire(next).SerializeAsString();
      ++settings_version_;
      work_conserving_ = std::all_of(next.specs.begin(), next.specs.end(), [](const std::string& spec) {
        const std::string_view policy = std::string_view(spec).substr(0, spec.find(' '));
        return policy == "fifo" || policy == "crrn" || policy == "orr";
      });
    }
    if (connected_.load()) SendSettings();
  }
  // Unused: Apply sends the whole, and nothing else calls these on an OST.
  void StartPolicy(nrs::Head, std::unique_ptr<nrs::Policy>) override {}
  void StopPolicy(nrs::Head) override {}
  void Retune(nrs::Head, const nrs::Tunables&) override {}
  void SetHighPriority(nrs::OpSet, uint32_t) override {}
  void SetEpochLength(std::chrono::nanoseconds) override {}
  // As the mount's hub sees the OST's scheduler on the OSS.
  nrs::Epoch epoch() const override { return epoch_.load(); }
  nrs::Standing EpochStanding() const override {
    return options_.epochs ? options_.epochs->StandingOf(options_.index) : nrs::Standing::kAbsent;
  }
  void Drain() override {}

  std::string PrimaryName(nrs::Head head) const override {
    std::lock_guard lock(mu_);
    const std::string& spec = settings_.specs[head == nrs::Head::kRegular ? 0 : 1];
    return spec.substr(0, spec.find(' '));
  }
  // From the OSS (a call, at most kSettingsPatience); nothing if it does
  // not answer.
  std::vector<nrs::PolicyStatus> PolicyStatus(nrs::Head head,
                                              const std::vector<std::string>& registered,
                                              bool with_classes) const override {
    auto reply = NrsStatusCall(head, registered, with_classes);
    return reply ? rpc::PoliciesFromWire(*reply) : std::vector<nrs::PolicyStatus>{};
  }
  nrs::HeadStats HeadStats(nrs::Head head) const override {
    auto reply = NrsStatusCall(head, {}, false);
    return reply ? rpc::HeadStatsFromWire(*reply) : nrs::HeadStats{};
  }
  ost::ServiceCounters Counters() const override {
    std::lock_guard lock(mu_);
    ost::ServiceCounters counters = counters_;
    counters.responsive = ResponsiveLocked();
    counters.errors += transport_errors_;
    counters.io_errors += transport_errors_;
    return counters;
  }

  void Tick(nrs::TimePoint now) override {
    bool changed = false, responsive = false;
    std::function<void(uint32_t, bool)> listener;
    {
      std::lock_guard lock(mu_);
      responsive = ResponsiveLocked();
      if (responsive != reported_responsive_) {
        changed = true;
        reported_responsive_ = responsive;
        listener = health_listener_;
      }
    }
    if (changed) {
      Logger("client")->warn("{} is {}", name_, responsive ? "answering again" : "not answering");
      if (listener) listener(options_.index, responsive);
    }
  }
  void SetHealthListener(std::function<void(uint32_t, bool)> listener) override {
    std::lock_guard lock(mu_);
    health_listener_ = std::move(listener);
  }
  void SetSpaceFreedListener(
      std::function<void(uint32_t, uint64_t, nrs::TimePoint)> listener) override {
    freed_listener_ = std::move(listener);
  }
  bool responsive() const override {
    std::lock_guard lock(mu_);
    return ResponsiveLocked();
  }
  ost::SpaceSample LastSpace() const override {
    std::lock_guard lock(mu_);
    return space_;
  }
  // The status thread asks the OSS for a fresh sample at once (the grants
  // wait a little for one newer than their ask before refusing room).
  void RequestSpaceSample() override {
    {
      std::lock_guard lock(mu_);
      space_sample_due_ = true;
    }
    wake_status_.notify_all();
  }
  uint64_t DestroysInFlight() const override {
    std::lock_guard lock(mu_);
    return destroys_.load(std::memory_order_relaxed) + server_destroys_;
  }
  bool read_only() const override {
    std::lock_guard lock(mu_);
    return read_only_;
  }
  jobstats::JobStats& job_stats() override { return job_stats_; }

 private:
  struct Call {
    std::unique_ptr<ost::IoRequest> request;
    rpc::IoCall call;
    std::string fields;  // what the signature covers
    rpc::IoReply reply;
    std::unique_ptr<grpc::ClientContext> context;
    std::shared_ptr<rpc::ClientSession> session;  // the one it was signed in
    bool resent = false;
    bool async = false;  // holds one of the kMaxAsyncCalls places
    // A bulk call (rpc/bulk.h): the message sent (a write's payload refers
    // to the request's buffers) and the one received, whose payload a
    // read's reply bytes are.
    bool bulk = false;
    grpc::ByteBuffer bulk_message;
    grpc::ByteBuffer bulk_reply;
    std::vector<grpc::Slice> reply_data;
    // Raise and Cancel (Steer): set under mu_.
    bool issued = false;          // handed to gRPC (the OSS may hold it)
    bool cancel_pending = false;  // Cancel asks the OSS; its outcome waits
    std::optional<Status> parked;  // the outcome that came meanwhile
  };

  bool ResponsiveLocked() const { return connected_.load() && server_responsive_; }

  // REQUIRES: mu_ held. The call of `request`, or null.
  Call* FindLocked(const ost::IoRequest& request) const {
    for (Call* call : in_flight_) {
      if (call->request.get() == &request) return call;
    }
    return nullptr;
  }
  // REQUIRES: mu_ held. Takes `call` out of the queues of calls not sent
  // yet (waiting for a session or a place); false if it is in none.
  bool TakeUnsentLocked(Call* call) {
    if (auto it = std::find(waiting_.begin(), waiting_.end(), call); it != waiting_.end()) {
      waiting_.erase(it);
      return true;
    }
    auto it = std::find(capped_.begin(), capped_.end(), call);
    if (it == capped_.end()) return false;
    capped_.erase(it);
    return true;
  }

  // A Steer raise in flight, alive until its answer.
  struct SteerState {
    grpc::ClientContext context;
    rpc::SteerCall call;
    rpc::SteerReply reply;
  };

  // The epoch thread: while the OSS answers, one Epochs stream on which
  // the OST's scheduler there asks the mount's hub for its epochs.
  void EpochLoop() {
    for (;;) {
      std::shared_ptr<rpc::ClientSession> session;
      {
        std::unique_lock lock(epoch_mu_);
        wake_epochs_.wait_for(lock, kStatusInterval, [&] { return epoch_stopping_; });
        if (epoch_stopping_) return;
      }
      {
        std::lock_guard lock(mu_);
        session = session_;
      }
      if (session && connected_.load()) RunEpochStream(session);
    }
  }

  void RunEpochStream(const std::shared_ptr<rpc::ClientSession>& session) {
    grpc::ClientContext context;
    context.AddMetadata(rpc::kOstHeader, ref_.SerializeAsString());
    rpc::SignCall(*session, context, rpc::kEpochsMethod, rpc::OstRefFields(ref_));
    // The context is published before the call starts, so a stop can
    // cancel it whatever the call is waiting for (a connection, a read);
    // nothing blocking is done under epoch_mu_.
    {
      std::lock_guard lock(epoch_mu_);
      if (epoch_stopping_) return;
      epoch_context_ = &context;
    }
    std::unique_ptr<grpc::ClientReaderWriter<rpc::EpochToOss, rpc::EpochFromOss>> stream =
        stub_->Epochs(&context);
    uint64_t generation = 0;
    {
      std::lock_guard lock(epoch_mu_);
      epoch_stream_ = stream.get();
      generation = ++epoch_generation_;
    }
    nrs::EpochHub& hub = *options_.epochs;
    const nrs::ParticipantId who = options_.index;
    rpc::EpochFromOss message;
    bool opened = false;
    while (stream->Read(&message)) {
      if (!opened) {
        Logger("client")->info("{}: its scheduler takes part in this mount's epochs", name_);
        opened = true;
      }
      switch (message.kind()) {
        case rpc::EpochFromOss::NEXT: {
          const std::string& bytes = message.data();
          hub.NextEpoch(who, message.epoch(), nrs::EpochData(bytes.begin(), bytes.end()),
                        [gate = epoch_gate_, generation](
                            nrs::Epoch next, std::shared_ptr<const nrs::EpochData> reduced) {
                          std::lock_guard lock(gate->mu);
                          if (gate->self != nullptr) gate->self->AnswerEpoch(generation, next, reduced);
                        });
          break;
        }
        case rpc::EpochFromOss::LAST:
          hub.LastEpoch(who, message.epoch());
          break;
        case rpc::EpochFromOss::EVICT:
          hub.Evict(who);
          break;
        default:
          break;
      }
    }
    bool stopping = false;
    {
      std::lock_guard lock(epoch_mu_);
      epoch_context_ = nullptr;
      epoch_stream_ = nullptr;
      stopping = epoch_stopping_;
    }
    const grpc::Status status = stream->Finish();
    // Its scheduler is out of reach (or the mount stops): the others do
    // not wait eh_timeout for it. It joins afresh on the next stream.
    const nrs::Standing standing = hub.StandingOf(who);
    if (standing == nrs::Standing::kMember || standing == nrs::Standing::kAsked) {
      if (stopping) {
        hub.LastEpoch(who, epoch_.load());
      } else {
        hub.Evict(who);
      }
    }
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      std::lock_guard lock(mu_);
      if (session_ == session) session_.reset();
    }
    if (opened && !stopping) {
      Logger("client")->warn("{}: epoch stream ended ({})", name_,
                             status.ok() ? "closed by the OSS" : status.error_message());
    }
  }

  // The mount's hub answers the OSS's NEXT (on whichever thread completed
  // the epoch); dropped if the stream it was asked on is gone.
  void AnswerEpoch(uint64_t generation, nrs::Epoch next,
                   const std::shared_ptr<const nrs::EpochData>& reduced) {
    if (!nrs::EpochError(next)) epoch_.store(next);
    rpc::EpochToOss answer;
    answer.set_epoch(next);
    if (reduced) answer.set_data(reduced->data(), reduced->size());
    std::lock_guard lock(epoch_mu_);
    if (epoch_stream_ == nullptr || generation != epoch_generation_) return;
    epoch_stream_->Write(answer);
  }

  // Sends the latest settings (serialized with other sends, so the OSS
  // gets them in order); true once the OSS runs them.
  bool SendSettings() {
    std::lock_guard send_lock(send_settings_mu_);
    rpc::ConfigureCall call;
    std::shared_ptr<rpc::ClientSession> session;
    {
      std::lock_guard lock(mu_);
      if (settings_version_ == settings_base_) return true;  // nothing decided yet
      session = session_;
      call.set_version(settings_version_);
      call.set_settings(settings_bytes_);
    }
    if (!session) return false;  // the status thread opens one, then sends
    *call.mutable_ost() = ref_;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kSettingsPatience);
    rpc::SignCall(*session, context, rpc::kConfigureMethod, rpc::ConfigureCallFields(call));
    rpc::ConfigureReply reply;
    const grpc::Status status = stub_->Configure(&context, call, &reply);
    std::lock_guard lock(mu_);
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      if (session_ == session) session_.reset();  // the OSS restarted: sent in the next one
      return false;
    }
    if (!status.ok()) {
      Logger("client")->warn("{}: NRS settings not sent ({}); sent when it answers", name_,
                             status.error_message());
      return false;
    }
    if (reply.err() != 0) {
      // It runs what it ran. Settings it cannot run (EINVAL) are not sent
      // again until they change; any other refusal (a relabel under way)
      // is tried again at the next status poll.
      if (reply.err() != EINVAL) return false;
      if (refused_version_ != call.version()) {
        Logger("client")->error("{}: the OSS refused NRS settings: {}", name_, reply.message());
        refused_version_ = call.version();
      }
      return false;
    }
    return true;
  }

  std::optional<rpc::NrsStatusReply> NrsStatusCall(nrs::Head head,
                                                   const std::vector<std::string>& registered,
                                                   bool with_classes) const {
    std::shared_ptr<rpc::ClientSession> session;
    {
      std::lock_guard lock(mu_);
      session = session_;
    }
    if (!session || !connected_.load()) return std::nullopt;
    rpc::NrsStatusCall call;
    *call.mutable_ost() = ref_;
    call.set_head(static_cast<uint32_t>(head));
    call.set_with_classes(with_classes);
    for (const std::string& name : registered) call.add_registered(name);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kSettingsPatience);
    rpc::SignCall(*session, context, rpc::kNrsStatusMethod, rpc::NrsStatusCallFields(call));
    rpc::NrsStatusReply reply;
    const grpc::Status status = stub_->NrsStatus(&context, call, &reply);
    if (!status.ok() || reply.err() != 0) return std::nullopt;
    return reply;
  }

  // Signs and sends `call` in the current session, or queues it for the
  // session a Hello under way will open.
  void Send(Call* call) {
    std::shared_ptr<rpc::ClientSession> session;
    {
      std::unique_lock lock(mu_);
      in_flight_.insert(call);
      call->issued = false;  // (again): not on the OSS until Issue signs it anew
      if (stopping_) {
        lock.unlock();
        Complete(call, Status::Error(EIO, name_ + ": stopping"));
        return;
      }
      if (!session_) {
        // The status thread opens one and sends what waits for it.
        waiting_.push_back(call);
        hello_due_ = true;
        wake_status_.notify_all();
        return;
      }
      session = session_;
    }
    Issue(call, std::move(session));
  }

  void Issue(Call* call, std::shared_ptr<rpc::ClientSession> session) {
    {
      std::lock_guard lock(mu_);
      if (async_calls_ >= kMaxAsyncCalls) {
        capped_.push_back(call);  // sent when one in flight is answered
        return;
      }
      ++async_calls_;
    }
    call->async = true;
    StartContext(*call, std::move(session));
    auto done = [this, call](grpc::Status status) { OnReply(call, std::move(status)); };
    if (call->bulk) {
      StartBulk(*call, std::move(done));
      return;
    }
    stub_->async()->Io(call->context.get(), &call->call, &call->reply, std::move(done));
  }

  // The status thread: every kStatusInterval (or at once when a call
  // waits for a session), a session if there is none, then the OST's
  // status; synchronous calls with a deadline, on this thread alone, so
  // that neither the monitor's Tick nor a caller ever waits on the network
  // for them.
  void StatusLoop() {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      // A sample asked for wakes the thread only with a session: without
      // one (the OSS is down) the Hello below would be tried at once, again
      // and again.
      wake_status_.wait_for(lock, kStatusInterval, [&] {
        return stopping_ || hello_due_ || (space_sample_due_ && session_ != nullptr) ||
               !deliver_later_.empty();
      });
      if (!deliver_later_.empty()) {
        std::vector<Call*> later;
        later.swap(deliver_later_);
        lock.unlock();
        for (Call* call : later) Complete(call, std::move(*call->parked));
        lock.lock();
      }
      if (stopping_) break;
      std::shared_ptr<rpc::ClientSession> session = session_;
      lock.unlock();
      if (!session) session = OpenSession();
      if (session && PollStatus(session)) SendSettings();
      lock.lock();
    }
  }

  // A new session, and the calls that waited for one sent in it (or failed
  // if the OSS does not answer).
  std::shared_ptr<rpc::ClientSession> OpenSession() {
    auto opened = Hello(*stub_, options_.key, name_, kConnectPatience);
    std::vector<Call*> waiting;
    std::shared_ptr<rpc::ClientSession> session;
    {
      std::lock_guard lock(mu_);
      hello_due_ = false;
      waiting.swap(waiting_);
      if (opened.ok()) {
        session_ = *opened;
        session = session_;
        // Those that waited for a place while there was no session too.
        waiting.insert(waiting.end(), capped_.begin(), capped_.end());
        capped_.clear();
      } else if (connected_.exchange(false)) {
        Logger("client")->warn("{}: {}", name_, opened.status().message());
      }
    }
    for (Call* call : waiting) {
      if (session) {
        Issue(call, session);
      } else {
        Complete(call, Status::Error(EIO, name_ + ": no session: " + opened.status().message()));
      }
    }
    return session;
  }

  // True when the OSS answered and runs other NRS settings than the
  // latest (it was down, or restarted): the caller sends them.
  bool PollStatus(const std::shared_ptr<rpc::ClientSession>& session) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kConnectPatience);
    rpc::StatusCall call;
    *call.mutable_ost() = ref_;
    {
      std::lock_guard lock(mu_);
      call.set_sample_space(space_sample_due_);
      space_sample_due_ = false;
    }
    rpc::SignCall(*session, context, rpc::kStatusMethod, rpc::OstRefFields(call.ost()));
    rpc::StatusReply reply;
    const grpc::Status status = stub_->Status(&context, call, &reply);
    std::lock_guard lock(mu_);
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      if (session_ == session) session_.reset();  // the OSS restarted: a new one next time
      return false;
    }
    if (!status.ok() || reply.err() != 0) {
      connected_.store(false);
      // Once per reason: a refusal after a restart (the wrong disk) says
      // more than the lost connection before it.
      std::string why = status.ok() ? reply.message() : status.error_message();
      if (why != last_problem_) {
        Logger("client")->warn("{}: status: {}", name_, why);
        last_problem_ = std::move(why);
      }
      return false;
    }
    last_problem_.clear();
    TakeStatusLocked(reply, Clock::now());
    const bool behind = settings_version_ != settings_base_ &&
                        reply.settings_version() != settings_version_ &&
                        refused_version_ != settings_version_;
    if (behind && reply.settings_version() != reported_behind_) {
      Logger("client")->info("{}: its OSS runs {} NRS settings; sending this mount's", name_,
                             reply.settings_version() == 0 ? "no" : "other");
      reported_behind_ = reply.settings_version();
    }
    return behind;
  }

  void OnReply(Call* call, grpc::Status status) {
    if (call->async) {
      // Its place goes to a call that waited for one.
      call->async = false;
      Call* next = nullptr;
      std::shared_ptr<rpc::ClientSession> session;
      {
        std::lock_guard lock(mu_);
        --async_calls_;
        if (!capped_.empty() && session_) {
          next = capped_.front();
          capped_.pop_front();
          session = session_;
        }
      }
      if (next != nullptr) Issue(next, std::move(session));
    }
    if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED && !call->resent) {
      // The OSS forgot the session (it restarted): a new one, and once
      // more. It stays in in_flight_ meanwhile, so a stop waits for it.
      call->resent = true;
      {
        std::lock_guard lock(mu_);
        if (session_ == call->session) session_.reset();
      }
      Send(call);
      return;
    }
    if (status.ok() && call->bulk) {
      uint64_t bytes = 0;
      if (!rpc::DecodeBulk(call->bulk_reply, &call->reply, &call->reply_data, &bytes)) {
        status = grpc::Status(grpc::StatusCode::INTERNAL, "a bulk reply that does not parse");
      }
    }
    Status result = rpc::FromGrpc(status, name_);
    if (result.ok() && call->reply.err() != 0) {
      result = Status::Error(call->reply.err(), call->reply.message());
    }
    if (result.err() == ECANCELED) {
      // Taken out of the OSS's queue unserved by a Cancel that gave up
      // waiting for the OSS's word: nothing ran, so it is sent again.
      bool pending = false;
      {
        std::lock_guard lock(mu_);
        pending = call->cancel_pending;
      }
      if (!pending) {
        Send(call);
        return;
      }
    }
    if (!status.ok()) {
      std::lock_guard lock(mu_);
      ++transport_errors_;
      if (status.error_code() == grpc::StatusCode::UNAVAILABLE) connected_.store(false);
    }
    Complete(call, std::move(result));
  }

  // Tells the request's observer, then forgets the call; while Cancel asks
  // the OSS, the outcome waits for it instead.
  void Complete(Call* call, Status status) {
    {
      std::lock_guard lock(mu_);
      if (call->cancel_pending) {
        call->parked = std::move(status);
        parked_cv_.notify_all();
        return;
      }
    }
    ost::IoRequest& r = *call->request;
    size_t bytes = 0;
    const rpc::IoReply& reply = call->reply;
    if (status.ok()) {
      bytes = static_cast<size_t>(std::min<uint64_t>(reply.bytes(), r.info.length));
      r.object_exists = reply.object_exists();
      if (reply.has_seek()) r.seek_result = reply.seek_result();
      if (reply.has_allocation() && r.allocation != nullptr) {
        r.allocation->store(reply.allocation(), std::memory_order_relaxed);
      }
      if (r.info.op == nrs::Op::kRead) {
        std::vector<std::string_view> pieces;
        if (call->bulk) {
          for (const grpc::Slice& slice : call->reply_data) {
            pieces.emplace_back(reinterpret_cast<const char*>(slice.begin()), slice.size());
          }
        } else {
          pieces.emplace_back(reply.data());
        }
        status = Deliver(pieces, r);
        if (!status.ok()) bytes = 0;
      }
      if (reply.freed() > 0 && freed_listener_) {
        freed_listener_(options_.index, reply.freed(), r.info.arrival);
      }
    } else {
      // Without a reply nobody knows whether a write or preallocation made
      // its object: the file must record that it may have (unlink then
      // destroys it; a missing object is no error there).
      const bool answered = call->reply.err() != 0;
      r.object_exists = answered ? reply.object_exists()
                                 : (r.info.op == nrs::Op::kWrite || r.info.op == nrs::Op::kAllocate);
      Logger("client")->debug("{}: request failed: {}", name_, status.ToString());
      // As a local OST reports failures (ost::CallerErrno): space, size
      // and read-only as such, anything else (an OSS's refusal, the
      // network) as EIO.
      if (status.err() != ENOSPC && status.err() != EDQUOT && status.err() != EFBIG &&
          status.err() != EROFS) {
        status = Status::Error(EIO, status.message());
      }
    }
    if (r.info.op == nrs::Op::kDestroy) destroys_.fetch_sub(1, std::memory_order_relaxed);
    const auto done = Clock::now();
    if (status.ok() && r.info.jobid) {
      job_stats_.Record(*r.info.jobid, ost::JobOpOf(r.info.op), bytes, done - r.info.arrival, done);
    }
    if (r.observer != nullptr) r.observer->PartDone(r, status, bytes);
    std::unique_ptr<Call> owned(call);
    std::lock_guard lock(mu_);
    in_flight_.erase(call);
    if (in_flight_.empty()) idle_.notify_all();
  }

  void TakeStatus(const rpc::StatusReply& reply, nrs::TimePoint received) {
    std::lock_guard lock(mu_);
    TakeStatusLocked(reply, received);
  }

  // REQUIRES: mu_ held.
  void TakeStatusLocked(const rpc::StatusReply& reply, nrs::TimePoint received) {
    connected_.store(true);
    server_responsive_ = reply.responsive();
    read_only_ = reply.ost_read_only();
    server_destroys_ = reply.destroys_in_flight();
    counters_.queued = reply.queued();
    counters_.active = reply.active();
    counters_.bytes = reply.bytes();
    counters_.errors = reply.errors();
    counters_.io_errors = reply.io_errors();
    counters_.last_error = reply.last_error();
    counters_.oldest_in_service = std::chrono::microseconds(reply.oldest_in_service_us());
    space_.error = reply.space_err() != 0 ? Status::Error(reply.space_err(), reply.space_message())
                                          : Status::Ok();
    if (reply.has_space()) {
      ost::SpaceInfo space;
      space.block_size = reply.block_size();
      space.total_blocks = reply.total_blocks();
      space.free_blocks = reply.free_blocks();
      space.avail_blocks = reply.avail_blocks();
      space.total_files = reply.total_files();
      space.free_files = reply.free_files();
      space.read_only = reply.read_only();
      space.device = reply.device();
      space.max_object_size = reply.max_object_size();
      space_.space = space;
      // On this side's clock, no earlier than the OSS's statvfs returned
      // (a free this side began later is surely not in it).
      space_.until = received - std::chrono::microseconds(reply.space_age_us());
      space_.at = space_.until;
    }
  }

  const RemoteOstOptions options_;
  const std::string name_;  // oss://ADDRESS:PORT/DIR
  rpc::OstRef ref_;         // set in the constructor, then read-only
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<rpc::Oss::Stub> stub_;
  grpc::GenericStub bulk_stub_;  // IoBulk (rpc/bulk.h) on channel_
  std::atomic<bool> connected_{false};
  RemoteBackend backend_;  // borrows connected_
  jobstats::JobStats job_stats_;  // its own lock
  std::atomic<uint64_t> destroys_{0};
  std::atomic<bool> inline_busy_{false};  // a caller's thread is in a call (ClaimInline)
  std::atomic<uint64_t> next_request_id_{1};  // IoCall.request_id
  // Set before the first request (ost::Service's rule); read by reply threads.
  std::function<void(uint32_t, uint64_t, nrs::TimePoint)> freed_listener_;

  std::mutex send_settings_mu_;  // one Configure call at a time, in order

  // The Epochs stream (EpochLoop) and the hub's way back to it.
  struct EpochGate {
    explicit EpochGate(RemoteOst* owner) : self(owner) {}
    std::mutex mu;  // guards self; held while a callback uses it
    RemoteOst* self;
  };
  const std::shared_ptr<EpochGate> epoch_gate_ = std::make_shared<EpochGate>(this);
  std::atomic<nrs::Epoch> epoch_{0};  // the latest the hub started for it
  std::thread epoch_thread_;
  std::mutex epoch_mu_;  // guards the four below; one stream write at a time
  std::condition_variable wake_epochs_;  // epoch_stopping_ set
  bool epoch_stopping_ = false;
  grpc::ClientContext* epoch_context_ = nullptr;  // the stream's, while it is open
  grpc::ClientReaderWriter<rpc::EpochToOss, rpc::EpochFromOss>* epoch_stream_ = nullptr;
  uint64_t epoch_generation_ = 0;  // of the latest stream
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable idle_;         // in_flight_ became empty
  std::condition_variable wake_status_;  // stopping_, hello_due_ or space_sample_due_ set
  std::shared_ptr<rpc::ClientSession> session_;  // null: none (Hello due)
  bool stopping_ = false;   // the status thread ends
  bool hello_due_ = false;  // a call waits for a session
  bool space_sample_due_ = false;  // RequestSpaceSample: the next poll asks for one
  std::vector<Call*> waiting_;  // for the session a Hello opens
  size_t async_calls_ = 0;       // asynchronous calls in flight
  std::string last_problem_;     // of the latest failed status call, logged once
  std::deque<Call*> capped_;     // waiting for one of them to end
  std::condition_variable parked_cv_;  // a call's outcome parked for Cancel
  std::vector<Call*> deliver_later_;   // parked outcomes Cancel left to tell
  std::unordered_set<Call*> in_flight_;
  bool server_responsive_ = true;
  bool reported_responsive_ = true;
  bool read_only_ = false;
  uint64_t server_destroys_ = 0;
  uint64_t transport_errors_ = 0;
  ost::ServiceCounters counters_;
  ost::SpaceSample space_;
  std::function<void(uint32_t, bool)> health_listener_;
  // The NRS settings decided for this OST (Apply) and their version. The
  // count starts at a random number so that a version an OSS kept from
  // an earlier mount is never taken for this mount's.
  nrs::TargetSettings settings_;
  std::string settings_bytes_;  // rpc::NrsSettings, serialized
  const uint64_t settings_base_ = [] {
    std::random_device random;
    return (uint64_t{random()} << 32 | random()) | 1;
  }();
  uint64_t settings_version_ = settings_base_;  // == base: none decided yet
  // Whether the OSS serves a request as soon as it can (its policies never
  // hold one back on purpose: fifo, crrn, orr), from settings_: only then
  // may a caller's thread wait for it (SubmitOrRun). Under TBF, delay or
  // epoch a request may wait long, and an interrupt must find it queued
  // (Cancel), not in a call a thread is blocked in.
  bool work_conserving_ = true;
  uint64_t refused_version_ = 0;  // the OSS refused it; not resent
  uint64_t reported_behind_ = ~uint64_t{0};  // logged once per version the OSS runs
  std::thread status_thread_;  // StatusLoop, from Connect to the destructor
};

}  // namespace

bool IsOssPath(const std::string& path) { return path.rfind(kOssScheme, 0) == 0; }

Result<OssAddress> ParseOssPath(const std::string& path) {
  if (!IsOssPath(path)) return Status::Error(EINVAL, path + " is not oss://ADDRESS:PORT/DIR");
  const std::string rest = path.substr(std::strlen(kOssScheme));
  const size_t slash = rest.find('/');
  if (slash == std::string::npos || slash == 0) {
    return Status::Error(EINVAL, path + ": no ADDRESS:PORT/DIR after oss://");
  }
  OssAddress oss{rest.substr(0, slash), rest.substr(slash)};
  const size_t colon = oss.address.rfind(':');
  if (colon == std::string::npos || colon + 1 == oss.address.size() ||
      oss.address.find_first_not_of("0123456789", colon + 1) != std::string::npos) {
    return Status::Error(EINVAL, path + ": the address has no port");
  }
  if (oss.dir.size() < 2 || oss.dir.back() == '/' || oss.dir.find("/../") != std::string::npos ||
      oss.dir.find("//") != std::string::npos) {
    return Status::Error(EINVAL, path + ": the directory must be an absolute path, as the OSS "
                                        "serves it");
  }
  return oss;
}

Result<std::unique_ptr<ost::Service>> ConnectRemoteOst(RemoteOstOptions options) {
  auto credentials = rpc::ClientCredentials(options.tls);
  if (!credentials.ok()) return credentials.status();
  auto remote = std::make_unique<RemoteOst>(std::move(options), std::move(credentials).value());
  SFS_RETURN_IF_ERROR(remote->Connect());
  return std::unique_ptr<ost::Service>(std::move(remote));
}

Result<std::unique_ptr<ost::Service>> ConnectRemoteOst(
    uint32_t index, const std::string& path, const std::string& fs_uuid,
    const std::string& ost_uuid, const Credentials& credentials,
    std::shared_ptr<std::atomic<int>> inline_budget, std::shared_ptr<nrs::EpochHub> epochs) {
  const std::string& key_file = credentials.key_file;
  auto oss = ParseOssPath(path);
  if (!oss.ok()) return oss.status();
  if (key_file.empty()) {
    return Status::Error(EINVAL, "OST " + std::to_string(index) + " is on an OSS (" + path +
                                     "): mount with -o key=FILE");
  }
  auto key = rpc::ReadKeyFile(key_file);
  if (!key.ok()) return key.status();
  return ConnectRemoteOst({index, *oss, fs_uuid, ost_uuid, std::move(key).value(),
                           credentials.tls, std::move(inline_budget), std::move(epochs)});
}

Status LabelRemoteOst(const OssAddress& oss, const rpc::Key& key, const rpc::TlsFiles& tls,
                      const std::string& fs_uuid, uint32_t index, const std::string& ost_uuid,
                      bool force, bool check_only) {
  const std::string name = kOssScheme + oss.address + oss.dir;
  auto credentials = rpc::ClientCredentials(tls);
  if (!credentials.ok()) return credentials.status();
  auto stub = rpc::Oss::NewStub(rpc::MakeChannel(oss.address, std::move(credentials).value(), kMaxMessageBytes));
  auto session = Hello(*stub, key, name, kConnectPatience);
  if (!session.ok()) return session.status();
  rpc::LabelCall call;
  call.set_dir(oss.dir);
  call.set_fs_uuid(fs_uuid);
  call.set_index(index);
  call.set_ost_uuid(ost_uuid);
  call.set_force(force);
  call.set_check_only(check_only);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kConnectPatience);
  rpc::SignCall(**session, context, rpc::kLabelMethod, rpc::LabelCallFields(call));
  rpc::LabelReply reply;
  Status sent = rpc::FromGrpc(stub->Label(&context, call, &reply), name);
  if (sent.err() == EACCES) return Status::Error(EACCES, name + " refused the key: " + sent.message());
  SFS_RETURN_IF_ERROR(sent);
  if (reply.err() != 0) return Status::Error(reply.err(), name + ": " + reply.message());
  return Status::Ok();
}

}  // namespace sfs::client
