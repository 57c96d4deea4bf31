#include "oss/server.h"

#include <grpcpp/grpcpp.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <cctype>

#include "common/log.h"
#include "ost/backend.h"
#include "ost/label.h"
#include "ost/local_service.h"
#include "ost/monitor.h"
#include "nrs/registry.h"
#include "oss/epoch_relay.h"
#include "rpc/bulk.h"
#include "rpc/nrs_wire.h"
#include "rpc/grpc_setup.h"
#include "rpc/wire.h"

namespace sfs::oss {
namespace {

using Clock = std::chrono::steady_clock;

// Largest request a mount sends: max_request is at most 16 MiB (bytes of
// one stripe part); a little over for the message around it.
constexpr uint64_t kMaxIoBytes = 64ull << 20;
constexpr int kMaxMessageBytes = static_cast<int>(kMaxIoBytes + (1 << 20));
// gRPC's threads at most: calls waiting in a throttle each hold one.
constexpr int kMaxThreads = 512;

// What the OST's space-freed listener heard on this thread: LocalService
// calls it on the serving thread just before the request's observer
// (LocalService::Impl::Complete), so the observer can put it in the reply.
thread_local uint64_t tls_freed = 0;

bool IsDataOp(uint32_t op) { return op <= static_cast<uint32_t>(nrs::Op::kSeek); }

// Descriptors: the soft limit raised to the hard one; a quarter kept for
// sockets, pipes and the labels, the rest shared by the OSTs' object
// caches (a mount does the same, fs/fd_budget.h).
uint64_t RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? (1u << 20) : limit.rlim_cur;
}
size_t ObjectsPerOst(uint64_t limit, size_t osts) {
  const uint64_t for_objects = limit - limit / 4 - std::min<uint64_t>(limit / 4, 64);
  return static_cast<size_t>(std::max<uint64_t>(16, for_objects / std::max<size_t>(1, osts)));
}

// Label uuids become lines of the label file: short, printable, no '='.
bool GoodUuid(const std::string& text) {
  if (text.empty() || text.size() > 64) return false;
  for (char c : text) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_')) return false;
  }
  return true;
}

// A refusal in a reply (every reply has err and message).
template <typename Reply>
void Refuse(Reply* reply, const Status& status) {
  reply->set_err(status.err());
  reply->set_message(status.message());
}

// One OST directory this server was given.
struct OstSlot {
  std::string dir;
  std::mutex mu;  // guards every member below (Label replaces them)
  std::optional<ost::Label> label;
  std::shared_ptr<ost::LocalService> service;
  // The NRS settings the service runs (Configure), and their version as
  // the mount numbered them (0: none since the service started).
  nrs::TargetSettings applied;
  uint64_t settings_version = 0;
};

constexpr uint64_t kNoAllocation = ~uint64_t{0};

// A finished request's outcome in its reply (its data, if any, is the
// caller's to place).
void FillReply(rpc::IoReply& reply, const ost::IoRequest& request, const Status& status,
               size_t bytes, uint64_t allocation) {
  reply.set_err(status.err());
  if (!status.ok()) reply.set_message(status.message());
  reply.set_bytes(bytes);
  reply.set_object_exists(request.object_exists);
  if (request.seek_result) {
    reply.set_has_seek(true);
    reply.set_seek_result(*request.seek_result);
  }
  if (allocation != kNoAllocation) {
    reply.set_has_allocation(true);
    reply.set_allocation(allocation);
  }
  reply.set_freed(std::exchange(tls_freed, 0));
}

// A request an Io or IoBulk call queued, as Steer finds it (by the call's
// session and request id): alive while `done` is false.
struct QueuedCall {
  std::mutex mu;  // guards done; held while Steer raises or cancels the request
  bool done = false;  // its observer was told (or is being told)
  ost::IoRequest* request = nullptr;
  std::shared_ptr<ost::LocalService> service;
  ost::IoObserver* observer = nullptr;
  bool raise_when_queued = false;  // a raise came before the call did
  void MarkDone() {
    std::lock_guard lock(mu);
    done = true;
  }
};
using CallKey = std::pair<uint64_t, uint64_t>;  // session, request id

// One Io call in flight: the request's observer, which fills in the reply
// and wakes the call's thread (or finds it never slept: served inline).
class ServedIo final : public ost::IoObserver {
 public:
  explicit ServedIo(rpc::IoReply* reply) : reply_(reply) {}
  std::atomic<uint64_t> allocation{kNoAllocation};
  std::shared_ptr<QueuedCall> queued;  // null: not steerable

  void PartDone(ost::IoRequest& request, const Status& status, size_t bytes) override {
    if (queued) queued->MarkDone();
    FillReply(*reply_, request, status, bytes, allocation.load(std::memory_order_relaxed));
    if (!status.ok()) reply_->clear_data();
    // Notified under the lock: once Wait returns, nothing here touches
    // this object (it lives on the waiting thread's stack).
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_one();
  }
  void Wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_; });
  }

 private:
  rpc::IoReply* const reply_;
  std::mutex mu_;  // guards done_
  std::condition_variable cv_;
  bool done_ = false;
};

// One IoBulk call in flight (rpc/bulk.h): it owns what the request borrows
// (the write's received slices, the read's slice) and finishes the call
// from whichever thread served the request; then it is gone.
class BulkServed final : public ost::IoObserver {
 public:
  BulkServed(grpc::ServerUnaryReactor* reactor, grpc::ByteBuffer* response)
      : reactor_(reactor), response_(response) {}
  std::atomic<uint64_t> allocation{kNoAllocation};
  std::vector<grpc::Slice> payload;  // a write's bytes, where gRPC received them
  grpc::Slice read;                  // a read's bytes, sent as they are
  std::shared_ptr<QueuedCall> queued;  // null: not steerable
  std::function<void()> forget;        // takes it out of Steer's reach

  void PartDone(ost::IoRequest& request, const Status& status, size_t bytes) override {
    if (queued) queued->MarkDone();
    if (forget) forget();
    rpc::IoReply reply;
    FillReply(reply, request, status, bytes, allocation.load(std::memory_order_relaxed));
    std::vector<grpc::Slice> data;
    if (status.ok() && request.info.op == nrs::Op::kRead && bytes > 0) {
      data.push_back(read.sub(0, std::min(bytes, read.size())));
    }
    *response_ = rpc::EncodeBulk(reply, data);
    reactor_->Finish(grpc::Status::OK);
    delete this;
  }

 private:
  grpc::ServerUnaryReactor* const reactor_;
  grpc::ByteBuffer* const response_;
};

// gRPC's synchronous server: a call runs on the thread that read it, and
// a request the OST takes at once is served there too (SubmitOrRun), so a
// call costs no thread hand-off on this side; one a policy holds back
// keeps its thread waiting (gRPC starts more, up to kMaxThreads). The
// callback API measured slower here (a hand-off to its "nexting" thread
// per call; docs/design.md).
// IoBulk is gRPC's callback API (the only one that hands a method its raw
// ByteBuffer); the rest is synchronous.
class OssService final : public rpc::Oss::WithRawCallbackMethod_IoBulk<rpc::Oss::Service> {
 public:
  OssService(rpc::Key key, std::vector<std::unique_ptr<OstSlot>> slots, const ServerOptions& options)
      : sessions_(std::move(key)), slots_(std::move(slots)), options_(options) {}

  // Starts the service of every labelled OST, and their monitor.
  ::sfs::Status StartOsts() {
    std::vector<ost::Service*> services;
    for (auto& slot : slots_) {
      std::lock_guard lock(slot->mu);
      auto label = ost::ReadLabel(slot->dir);
      if (label.err() == ENOENT) {
        Logger("oss")->info("{}: no label yet; served once a mkfs labels it", slot->dir);
        continue;
      }
      if (!label.ok()) return label.status();
      SFS_RETURN_IF_ERROR(StartLocked(*slot, *label));
      services.push_back(slot->service.get());
    }
    monitor_ = std::make_unique<ost::Monitor>(
        services, ost::Monitor::IntervalFor(options_.ost_timeout));
    std::lock_guard hubs_lock(hubs_mu_);
    for (const auto& [fs_uuid, hub] : hubs_) monitor_->AddHub(hub);
    return ::sfs::Status::Ok();
  }

  void DrainOsts() {
    for (auto& slot : slots_) {
      std::lock_guard lock(slot->mu);
      if (slot->service) slot->service->Drain();
    }
  }

  // Stops every OST (after the gRPC server stopped taking calls).
  void StopOsts() {
    monitor_.reset();
    for (auto& slot : slots_) {
      std::lock_guard lock(slot->mu);
      slot->service.reset();
    }
    std::lock_guard retired_lock(retired_mu_);
    retired_.clear();
  }

  grpc::Status Hello(grpc::ServerContext*, const rpc::HelloRequest* request,
                     rpc::HelloReply* reply) override {
    auto opened = sessions_.Open(request->client_nonce());
    if (!opened.ok()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, opened.status().message());
    }
    reply->set_server_nonce(opened->server_nonce);
    reply->set_session(opened->session);
    return grpc::Status::OK;
  }

  grpc::Status Io(grpc::ServerContext* context, const rpc::IoCall* call,
                  rpc::IoReply* reply) override {
    if (grpc::Status auth = Authenticate(*context, rpc::kIoMethod, rpc::IoCallFields(*call));
        !auth.ok()) {
      return auth;
    }
    auto service = Find(call->ost());
    ::sfs::Status valid = service.ok() ? CheckIo(*call, call->data().size()) : service.status();
    if (!valid.ok()) {
      Logger("oss")->warn("refused a request from {}: {}", context->peer(), valid.message());
      Refuse(reply, valid);
      return grpc::Status::OK;
    }
    std::unique_ptr<ost::IoRequest> request = MakeRequest(*call, **service);
    if (request->info.op == nrs::Op::kWrite) {
      // The call's bytes, written from where gRPC parsed them.
      request->iov.push_back({const_cast<char*>(call->data().data()), call->data().size()});
    } else if (request->info.op == nrs::Op::kRead) {
      std::string* data = reply->mutable_data();
      data->resize(request->info.length);
      request->iov.push_back({data->data(), data->size()});
    }
    ServedIo observer(reply);
    request->observer = &observer;
    request->allocation = &observer.allocation;
    const CallKey key{rpc::SessionOf(*context), call->request_id()};
    observer.queued = Steerable(key, *service, *request, &observer);
    // Served on this thread when the OST is idle and its policy lets the
    // request go at once (bounded by the inline budget, so that a hung
    // disk holds few threads in system calls); else queued for the OST's
    // service threads while this one waits. The buffers are the call's,
    // alive until this returns: nothing to copy if it queues.
    ost::IoRequest* submitted = request.get();
    (*service)->SubmitOrRun(std::move(request), [](ost::IoRequest&) {});
    if (call->raised() || (observer.queued && observer.queued->raise_when_queued)) {
      RaiseIfQueued(observer.queued, **service, submitted);
    }
    observer.Wait();
    Forget(key);
    return grpc::Status::OK;
  }

  // A large read or write: queued for the OST's service threads (this
  // callback thread must not wait on a disk), which finish the call.
  grpc::ServerUnaryReactor* IoBulk(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* message,
                                   grpc::ByteBuffer* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    auto served = std::make_unique<BulkServed>(reactor, response);
    rpc::IoCall call;
    uint64_t data_bytes = 0;
    if (!rpc::DecodeBulk(*message, &call, &served->payload, &data_bytes)) {
      reactor->Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "not a bulk call"));
      return reactor;
    }
    if (grpc::Status auth =
            Authenticate(*context, rpc::kIoBulkMethod, rpc::IoCallFields(call, data_bytes));
        !auth.ok()) {
      reactor->Finish(auth);
      return reactor;
    }
    auto service = Find(call.ost());
    ::sfs::Status valid = service.ok() ? CheckIo(call, data_bytes) : service.status();
    if (valid.ok() && call.op() != static_cast<uint32_t>(nrs::Op::kRead) &&
        call.op() != static_cast<uint32_t>(nrs::Op::kWrite)) {
      valid = ::sfs::Status::Error(EINVAL, "a bulk call is a read or a write");
    }
    if (!valid.ok()) {
      Logger("oss")->warn("refused a request from {}: {}", context->peer(), valid.message());
      rpc::IoReply reply;
      Refuse(&reply, valid);
      *response = rpc::EncodeBulk(reply, {});
      reactor->Finish(grpc::Status::OK);
      return reactor;
    }
    std::unique_ptr<ost::IoRequest> request = MakeRequest(call, **service);
    if (request->info.op == nrs::Op::kWrite) {
      for (const grpc::Slice& slice : served->payload) {
        request->iov.push_back({const_cast<uint8_t*>(slice.begin()), slice.size()});
      }
    } else {
      served->read = grpc::Slice(static_cast<size_t>(request->info.length));
      request->iov.push_back({const_cast<uint8_t*>(served->read.begin()), served->read.size()});
    }
    request->allocation = &served->allocation;
    const CallKey key{rpc::SessionOf(*context), call.request_id()};
    served->queued = Steerable(key, *service, *request, served.get());
    if (served->queued) served->forget = [this, key] { Forget(key); };
    request->observer = served.release();  // deletes itself when done
    ost::IoRequest* submitted = request.get();
    std::shared_ptr<QueuedCall> queued =
        static_cast<BulkServed*>(request->observer)->queued;
    (*service)->Submit(std::move(request));
    if (call.raised() || (queued && queued->raise_when_queued)) {
      RaiseIfQueued(queued, **service, submitted);
    }
    return reactor;
  }

  grpc::Status Status(grpc::ServerContext* context, const rpc::StatusCall* call,
                      rpc::StatusReply* reply) override {
    if (grpc::Status auth =
            Authenticate(*context, rpc::kStatusMethod, rpc::OstRefFields(call->ost()));
        !auth.ok()) {
      return auth;
    }
    auto service = Find(call->ost());
    if (!service.ok()) {
      Refuse(reply, service.status());
    } else {
      if (call->sample_space()) AwaitFreshSample(**service);
      FillStatus(**service, *reply);
      OstSlot* slot = SlotOf(call->ost().dir());
      std::lock_guard lock(slot->mu);
      if (slot->service == *service) reply->set_settings_version(slot->settings_version);
    }
    return grpc::Status::OK;
  }

  grpc::Status Label(grpc::ServerContext* context, const rpc::LabelCall* call,
                     rpc::LabelReply* reply) override {
    if (grpc::Status auth = Authenticate(*context, rpc::kLabelMethod, rpc::LabelCallFields(*call));
        !auth.ok()) {
      return auth;
    }
    ::sfs::Status done = DoLabel(*call);
    if (!done.ok()) {
      Logger("oss")->warn("label of {} refused: {}", call->dir(), done.message());
      Refuse(reply, done);
    }
    return grpc::Status::OK;
  }

  // The mount's NRS settings for one OST, applied whole or not at all.
  grpc::Status Configure(grpc::ServerContext* context, const rpc::ConfigureCall* call,
                         rpc::ConfigureReply* reply) override {
    if (grpc::Status auth =
            Authenticate(*context, rpc::kConfigureMethod, rpc::ConfigureCallFields(*call));
        !auth.ok()) {
      return auth;
    }
    ::sfs::Status done = DoConfigure(*call);
    if (!done.ok()) {
      Logger("oss")->warn("NRS settings for {} refused: {}", call->ost().dir(), done.message());
      Refuse(reply, done);
    }
    return grpc::Status::OK;
  }

  grpc::Status NrsStatus(grpc::ServerContext* context, const rpc::NrsStatusCall* call,
                         rpc::NrsStatusReply* reply) override {
    if (grpc::Status auth =
            Authenticate(*context, rpc::kNrsStatusMethod, rpc::NrsStatusCallFields(*call));
        !auth.ok()) {
      return auth;
    }
    auto service = Find(call->ost());
    if (!service.ok()) {
      Refuse(reply, service.status());
      return grpc::Status::OK;
    }
    if (call->head() > static_cast<uint32_t>(nrs::Head::kHighPriority)) {
      Refuse(reply, ::sfs::Status::Error(EINVAL, "no head " + std::to_string(call->head())));
      return grpc::Status::OK;
    }
    const auto head = static_cast<nrs::Head>(call->head());
    const std::vector<std::string> registered(call->registered().begin(),
                                              call->registered().end());
    rpc::ToWire((*service)->PolicyStatus(head, registered, call->with_classes()),
                (*service)->HeadStats(head), reply);
    return grpc::Status::OK;
  }

  // One OST's epochs, relayed between its scheduler here and the mount's
  // hub (oss/epoch_relay.h), for as long as the mount keeps the stream.
  grpc::Status Epochs(grpc::ServerContext* context,
                      grpc::ServerReaderWriter<rpc::EpochFromOss, rpc::EpochToOss>* stream) override {
    // The OST is named in the call's metadata, under its signature:
    // checked before anything is read, so a peer without the key holds no
    // thread here.
    rpc::OstRef ost;
    {
      const auto& metadata = context->client_metadata();
      auto it = metadata.find(rpc::kOstHeader);
      if (it == metadata.end() || !ost.ParseFromArray(it->second.data(),
                                                     static_cast<int>(it->second.size()))) {
        return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the call names no OST");
      }
    }
    if (grpc::Status auth = Authenticate(*context, rpc::kEpochsMethod, rpc::OstRefFields(ost));
        !auth.ok()) {
      return auth;
    }
    auto service = Find(ost);
    if (!service.ok()) {
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, service.status().message());
    }
    rpc::EpochToOss message;
    const nrs::ParticipantId who = ost.index();
    const std::string dir = ost.dir();
    const std::shared_ptr<EpochRelay> relay = HubFor(ost.fs_uuid());
    {
      std::lock_guard lock(streams_mu_);
      if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "stopping");
      streams_.insert(context);
    }
    // Writes come from the OST's threads; the stream is this call's, so a
    // write after the call ended must find it gone.
    auto writer = std::make_shared<StreamWriter>(stream);
    const uint64_t token = relay->Attach(
        who, [writer](EpochRelay::Kind kind, nrs::Epoch epoch, const nrs::EpochData& data) {
          rpc::EpochFromOss out;
          out.set_kind(kind == EpochRelay::Kind::kNext   ? rpc::EpochFromOss::NEXT
                       : kind == EpochRelay::Kind::kLast ? rpc::EpochFromOss::LAST
                                                         : rpc::EpochFromOss::EVICT);
          out.set_epoch(epoch);
          out.set_data(data.data(), data.size());
          return writer->Write(out);
        });
    Logger("oss")->info("{}: epochs from the mount's hub ({})", dir, context->peer());
    while (stream->Read(&message)) {
      if (message.epoch() == 0) continue;  // no answer (an older mount's opening message)
      const std::string& bytes = message.data();
      if (bytes.size() > nrs::kMaxEpochData) {
        relay->Deliver(who, token, -EMSGSIZE, {});
        continue;
      }
      relay->Deliver(who, token, message.epoch(), nrs::EpochData(bytes.begin(), bytes.end()));
    }
    writer->Close();
    relay->Detach(who, token);
    {
      std::lock_guard lock(streams_mu_);
      streams_.erase(context);
    }
    Logger("oss")->info("{}: the mount's epoch stream ended; epochs from this server's own hub",
                        dir);
    return grpc::Status::OK;
  }

  grpc::Status ObjectStat(grpc::ServerContext* context, const rpc::ObjectCall* call,
                          rpc::ObjectReply* reply) override {
    if (grpc::Status auth =
            Authenticate(*context, rpc::kObjectStatMethod, rpc::ObjectCallFields(*call));
        !auth.ok()) {
      return auth;
    }
    ::sfs::Status done = DoObjectStat(*call, *reply);
    if (!done.ok()) {
      if (done.err() != ENOENT) {
        Logger("oss")->warn("object {:#x} of {}: {}", call->object_id(), call->ost().dir(),
                            done.message());
      }
      Refuse(reply, done);
    }
    return grpc::Status::OK;
  }

  grpc::Status Steer(grpc::ServerContext* context, const rpc::SteerCall* call,
                     rpc::SteerReply* reply) override {
    if (grpc::Status auth = Authenticate(*context, rpc::kSteerMethod, rpc::SteerCallFields(*call));
        !auth.ok()) {
      return auth;
    }
    std::shared_ptr<QueuedCall> queued;
    {
      std::lock_guard lock(calls_mu_);
      const CallKey key{rpc::SessionOf(*context), call->request_id()};
      auto it = calls_.find(key);
      if (it == calls_.end()) {
        // Done already, or its call not here yet (a raise may overtake a
        // large call still arriving): a raise is kept for it.
        if (!call->cancel()) RememberEarlyRaiseLocked(key);
        return grpc::Status::OK;
      }
      queued = it->second;
    }
    std::unique_lock lock(queued->mu);
    if (queued->done) return grpc::Status::OK;
    if (!call->cancel()) {
      queued->service->Raise(*queued->request);
      return grpc::Status::OK;
    }
    if (!queued->service->Cancel(*queued->request)) return grpc::Status::OK;  // in service
    // Out of the NRS, ours again: its call answers ECANCELED.
    queued->done = true;
    lock.unlock();
    std::unique_ptr<ost::IoRequest> request(queued->request);
    queued->observer->PartDone(*request, ::sfs::Status::Error(ECANCELED, "cancelled by its caller"),
                               0);
    reply->set_cancelled(true);
    return grpc::Status::OK;
  }

  grpc::Status ListObjects(grpc::ServerContext* context, const rpc::ObjectCall* call,
                           grpc::ServerWriter<rpc::ObjectBatch>* writer) override {
    if (grpc::Status auth =
            Authenticate(*context, rpc::kListObjectsMethod, rpc::ObjectCallFields(*call));
        !auth.ok()) {
      return auth;
    }
    auto service = Find(call->ost());
    auto listing = service.ok() ? (*service)->backend().ListObjects()
                                : Result<ost::ObjectListing>(service.status());
    rpc::ObjectBatch batch;
    if (!listing.ok()) {
      Refuse(&batch, listing.status());
      writer->Write(batch);
      return grpc::Status::OK;
    }
    constexpr size_t kPerBatch = 8192;
    for (const std::string& stranger : listing->strangers) batch.add_strangers(stranger);
    for (const ost::StoredObject& object : listing->objects) {
      batch.add_id(object.id);
      batch.add_size(object.size);
      if (static_cast<size_t>(batch.id_size()) == kPerBatch) {
        if (!writer->Write(batch)) return grpc::Status::OK;
        batch.Clear();
      }
    }
    writer->Write(batch);
    return grpc::Status::OK;
  }

  // Ends every Epochs call (before the server stops: they would hold it).
  void CancelStreams() {
    std::lock_guard lock(streams_mu_);
    stopping_ = true;
    for (grpc::ServerContext* context : streams_) context->TryCancel();
  }

 private:
  // Puts a request within Steer's reach (a call without a request id is
  // not: null).
  std::shared_ptr<QueuedCall> Steerable(const CallKey& key,
                                        const std::shared_ptr<ost::LocalService>& service,
                                        ost::IoRequest& request, ost::IoObserver* observer) {
    if (key.second == 0) return nullptr;
    auto queued = std::make_shared<QueuedCall>();
    queued->request = &request;
    queued->service = service;
    queued->observer = observer;
    std::lock_guard lock(calls_mu_);
    calls_[key] = queued;
    if (early_raises_.erase(key) != 0) queued->raise_when_queued = true;
    return queued;
  }
  // REQUIRES: calls_mu_ held. At most kEarlyRaises kept, the oldest
  // forgotten first (one whose call never comes is forgotten so).
  void RememberEarlyRaiseLocked(const CallKey& key) {
    static constexpr size_t kEarlyRaises = 4096;
    if (!early_raises_.insert(key).second) return;
    early_order_.push_back(key);
    while (early_order_.size() > kEarlyRaises) {
      early_raises_.erase(early_order_.front());
      early_order_.pop_front();
    }
  }
  void Forget(const CallKey& key) {
    if (key.second == 0) return;
    std::lock_guard lock(calls_mu_);
    calls_.erase(key);
  }
  // A request its mount raised before sending it (seed 000's nrs_priority).
  static void RaiseIfQueued(const std::shared_ptr<QueuedCall>& queued, ost::LocalService& service,
                            ost::IoRequest* request) {
    if (!queued) return;
    std::lock_guard lock(queued->mu);
    if (!queued->done) service.Raise(*request);
  }

  // An Epochs stream's writing end, shared by the threads that write.
  class StreamWriter {
   public:
    explicit StreamWriter(grpc::ServerReaderWriter<rpc::EpochFromOss, rpc::EpochToOss>* stream)
        : stream_(stream) {}
    bool Write(const rpc::EpochFromOss& message) {
      std::lock_guard lock(mu_);
      return stream_ != nullptr && stream_->Write(message);
    }
    void Close() {
      std::lock_guard lock(mu_);
      stream_ = nullptr;
    }

   private:
    std::mutex mu_;  // guards stream_; one write at a time
    grpc::ServerReaderWriter<rpc::EpochFromOss, rpc::EpochToOss>* stream_;
  };

  // A file of its own (not the OST's object cache): it only looks.
  ::sfs::Status DoObjectStat(const rpc::ObjectCall& call, rpc::ObjectReply& reply) {
    auto service = Find(call.ost());
    if (!service.ok()) return service.status();
    auto file = (*service)->backend().Open(call.object_id(), /*create=*/false);
    if (!file.ok()) return file.status();
    auto size = (*file)->Size();
    if (!size.ok()) return size.status();
    auto allocated = (*file)->Allocated();
    if (!allocated.ok()) return allocated.status();
    reply.set_size(*size);
    reply.set_allocated(*allocated);
    return ::sfs::Status::Ok();
  }

  ::sfs::Status DoConfigure(const rpc::ConfigureCall& call) {
    rpc::NrsSettings wire;
    if (!wire.ParseFromString(call.settings())) {
      return ::sfs::Status::Error(EINVAL, "NRS settings that do not parse");
    }
    auto next = rpc::FromWire(wire);
    if (!next.ok()) return next.status();
    // Every policy it names must start here before any is switched: a
    // server older than its mount refuses rather than half applies.
    for (size_t head = 0; head < 2; head++) {
      if (next->specs[head] == "fifo") continue;
      auto policy = registry_.Create(next->specs[head], next->tunables[head]);
      if (!policy.ok()) return policy.status();
    }
    auto service = Find(call.ost());
    if (!service.ok()) return service.status();
    OstSlot* slot = SlotOf(call.ost().dir());
    std::lock_guard lock(slot->mu);
    if (slot->service != *service) {
      return ::sfs::Status::Error(EIO, slot->dir + " was labelled anew meanwhile");
    }
    slot->service->Apply(slot->applied, *next, registry_);
    HubFor(slot->label->fs_uuid)->SetTimeout(next->eh_timeout);
    slot->applied = *next;
    if (slot->settings_version != call.version()) {
      Logger("oss")->info("{}: NRS settings applied (regular head {}, high-priority head {})",
                          slot->dir, next->specs[0], next->specs[1]);
    }
    slot->settings_version = call.version();
    return ::sfs::Status::Ok();
  }

  // The epoch hub the OSTs of filesystem `fs_uuid` on this server share
  // (made on first use): filesystem-wide TBF rates are shared among them.
  std::shared_ptr<EpochRelay> HubFor(const std::string& fs_uuid) {
    std::lock_guard lock(hubs_mu_);
    auto& hub = hubs_[fs_uuid];
    if (!hub) {
      hub = std::make_shared<EpochRelay>(nrs::TargetSettings{}.eh_timeout);
      if (monitor_) monitor_->AddHub(hub);
    }
    return hub;
  }

  grpc::Status Authenticate(const grpc::ServerContextBase& context, const char* method,
                            const std::string& fields) {
    grpc::Status checked = rpc::CheckCall(sessions_, context, method, fields);
    if (!checked.ok()) {
      Logger("oss")->warn("refused a {} call from {}: {}", method, context.peer(),
                          checked.error_message());
    }
    return checked;
  }

  OstSlot* SlotOf(const std::string& dir) {
    for (auto& slot : slots_) {
      if (slot->dir == dir) return slot.get();
    }
    return nullptr;
  }

  Result<std::shared_ptr<ost::LocalService>> Find(const rpc::OstRef& ref) {
    OstSlot* slot = SlotOf(ref.dir());
    if (slot == nullptr) {
      return ::sfs::Status::Error(ENOENT, "this server does not serve " + ref.dir());
    }
    std::lock_guard lock(slot->mu);
    if (!slot->label || !slot->service) {
      return ::sfs::Status::Error(EIO, ref.dir() + " on this server has no label");
    }
    if (slot->label->fs_uuid != ref.fs_uuid() || slot->label->ost_uuid != ref.ost_uuid() ||
        slot->label->index != ref.index()) {
      return ::sfs::Status::Error(
          EIO, fmt::format("{} on this server holds OST {} ({}) of filesystem {}, not OST {} ({}) "
                           "of {}: the wrong disk?",
                           ref.dir(), slot->label->index, slot->label->ost_uuid,
                           slot->label->fs_uuid, ref.index(), ref.ost_uuid(), ref.fs_uuid()));
    }
    return slot->service;
  }

  static std::unique_ptr<ost::IoRequest> MakeRequest(const rpc::IoCall& call,
                                                     ost::LocalService& service) {
    auto request = std::make_unique<ost::IoRequest>();
    nrs::RequestInfo& info = request->info;
    info.op = static_cast<nrs::Op>(call.op());
    info.object_id = call.object_id();
    info.offset = call.offset();
    info.length = call.length();
    info.uid = call.caller().uid();
    info.gid = call.caller().gid();
    info.pid = call.caller().pid();
    if (!call.caller().jobid().empty()) {
      info.jobid = std::make_shared<const std::string>(call.caller().jobid());
    }
    request->object = service.Object(call.object_id());
    request->truncate_size = call.truncate_size();
    request->keep_size = call.keep_size();
    request->data_only = call.data_only();
    request->whence = call.whence();
    request->must_exist = call.must_exist();
    return request;
  }

  static ::sfs::Status CheckIo(const rpc::IoCall& call, uint64_t data_bytes) {
    if (!IsDataOp(call.op())) {
      return ::sfs::Status::Error(EINVAL, "op " + std::to_string(call.op()) + " is not an OST's");
    }
    const auto op = static_cast<nrs::Op>(call.op());
    if ((op == nrs::Op::kRead || op == nrs::Op::kWrite) && call.length() > kMaxIoBytes) {
      return ::sfs::Status::Error(EINVAL, "a request of " + std::to_string(call.length()) +
                                              " bytes is over the largest");
    }
    if (op == nrs::Op::kWrite && data_bytes != call.length()) {
      return ::sfs::Status::Error(EINVAL, "a write's data is not its length");
    }
    return ::sfs::Status::Ok();
  }

  // REQUIRES: slot.mu held.
  ::sfs::Status StartLocked(OstSlot& slot, const ost::Label& label) {
    auto backend = ost::NewPosixBackend(slot.dir);
    if (!backend.ok()) return backend.status();
    ost::ServiceOptions options;
    options.index = label.index;
    options.threads = options_.ost_threads;
    options.timeout = options_.ost_timeout;
    options.inline_budget = inline_budget_;
    options.open_objects = ObjectsPerOst(fd_limit_, slots_.size());
    options.epochs = HubFor(label.fs_uuid);
    auto service = std::make_shared<ost::LocalService>(options, std::move(backend).value());
    service->SetSpaceFreedListener(
        [](uint32_t, uint64_t bytes, nrs::TimePoint) { tls_freed += bytes; });
    slot.label = label;
    slot.service = std::move(service);
    // A new service runs fifo until its mount sends what it should run.
    slot.applied = nrs::TargetSettings{};
    slot.settings_version = 0;
    Logger("oss")->info("serving {} as OST {} of filesystem {}", slot.dir, label.index,
                        label.fs_uuid);
    return ::sfs::Status::Ok();
  }

  ::sfs::Status DoLabel(const rpc::LabelCall& call) {
    OstSlot* slot = SlotOf(call.dir());
    if (slot == nullptr) {
      return ::sfs::Status::Error(ENOENT, "this server does not serve " + call.dir());
    }
    std::lock_guard lock(slot->mu);
    SFS_RETURN_IF_ERROR(ost::CheckReusable(slot->dir, call.force()));
    if (call.check_only()) return ::sfs::Status::Ok();
    if (!GoodUuid(call.fs_uuid()) || !GoodUuid(call.ost_uuid())) {
      return ::sfs::Status::Error(EINVAL, "a label needs filesystem and OST uuids");
    }
    if (slot->service) {
      // A filesystem made anew over this OST: the old one's service stops
      // first, and what it had queued is served (as fast as it goes)
      // before the directory is cleared, so none of it lands in the new
      // filesystem's objects. The monitor keeps its pointer, so the
      // object stays until shutdown.
      std::shared_ptr<ost::LocalService> old = std::move(slot->service);
      slot->label.reset();
      old->Drain();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      for (;;) {
        const ost::ServiceCounters counters = old->Counters();
        if (counters.queued == 0 && counters.active == 0) break;
        if (std::chrono::steady_clock::now() > deadline) {
          return ::sfs::Status::Error(EBUSY, slot->dir + " is still serving the old filesystem's "
                                                         "requests; try again");
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      std::lock_guard retired_lock(retired_mu_);
      retired_.push_back(std::move(old));
    }
    ost::ClearOstDir(slot->dir);
    const ost::Label label{call.fs_uuid(), call.index(), call.ost_uuid()};
    SFS_RETURN_IF_ERROR(ost::WriteLabel(slot->dir, label));
    SFS_RETURN_IF_ERROR(StartLocked(*slot, label));
    if (monitor_) monitor_->Add(slot->service.get());
    return ::sfs::Status::Ok();
  }

  // Asks the OST for a space sample and waits for it a little (a healthy
  // disk answers in a millisecond; a hung one is answered with the last).
  static void AwaitFreshSample(ost::LocalService& service) {
    const auto asked = nrs::Clock::now();
    service.RequestSpaceSample();
    for (int i = 0; i < 50; ++i) {
      const ost::SpaceSample sample = service.LastSpace();
      if (sample.at && *sample.at >= asked) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  static void FillStatus(ost::LocalService& service, rpc::StatusReply& reply) {
    const ost::SpaceSample sample = service.LastSpace();
    const auto now = nrs::Clock::now();
    if (sample.space) {
      const ost::SpaceInfo& space = *sample.space;
      reply.set_has_space(true);
      reply.set_block_size(space.block_size);
      reply.set_total_blocks(space.total_blocks);
      reply.set_free_blocks(space.free_blocks);
      reply.set_avail_blocks(space.avail_blocks);
      reply.set_total_files(space.total_files);
      reply.set_free_files(space.free_files);
      reply.set_read_only(space.read_only);
      reply.set_device(space.device);
      reply.set_max_object_size(space.max_object_size);
      if (sample.until) {
        reply.set_space_age_us(
            std::chrono::duration_cast<std::chrono::microseconds>(now - *sample.until).count());
      }
    }
    reply.set_space_err(sample.error.err());
    reply.set_space_message(sample.error.message());
    const ost::ServiceCounters counters = service.Counters();
    reply.set_responsive(counters.responsive);
    reply.set_queued(counters.queued);
    reply.set_active(counters.active);
    reply.set_bytes(counters.bytes);
    reply.set_errors(counters.errors);
    reply.set_io_errors(counters.io_errors);
    reply.set_last_error(counters.last_error);
    reply.set_destroys_in_flight(service.DestroysInFlight());
    reply.set_oldest_in_service_us(
        std::chrono::duration_cast<std::chrono::microseconds>(counters.oldest_in_service).count());
    reply.set_ost_read_only(service.read_only());
  }

  rpc::SessionTable sessions_;
  const nrs::PolicyRegistry registry_ = nrs::BuiltinPolicies();
  std::mutex hubs_mu_;  // guards hubs_
  std::map<std::string, std::shared_ptr<EpochRelay>> hubs_;  // by filesystem uuid
  std::mutex calls_mu_;  // guards calls_
  std::map<CallKey, std::shared_ptr<QueuedCall>> calls_;  // Io and IoBulk calls under way
  std::set<CallKey> early_raises_;    // raises that came before their calls
  std::deque<CallKey> early_order_;   // early_raises_, oldest first
  std::mutex streams_mu_;  // guards streams_
  std::set<grpc::ServerContext*> streams_;  // Epochs calls under way
  bool stopping_ = false;                   // guarded by streams_mu_: no new stream
  const std::vector<std::unique_ptr<OstSlot>> slots_;
  const ServerOptions& options_;  // the Server's, which owns this
  std::unique_ptr<ost::Monitor> monitor_;
  // Requests served on gRPC's threads at once, over all OSTs (Io).
  const std::shared_ptr<std::atomic<int>> inline_budget_ = std::make_shared<std::atomic<int>>(
      std::max(1u, std::thread::hardware_concurrency()));
  // Services replaced by a relabel; the monitor may still tick them.
  std::mutex retired_mu_;  // guards retired_
  std::vector<std::shared_ptr<ost::LocalService>> retired_;
  const uint64_t fd_limit_ = RaiseDescriptorLimit();
};

class ServerImpl final : public Server {
 public:
  explicit ServerImpl(ServerOptions options) : options_(std::move(options)) {}
  ~ServerImpl() override { Shutdown(); }

  ::sfs::Status Start() {
    std::vector<std::unique_ptr<OstSlot>> slots;
    std::set<std::string> seen;
    for (const std::string& dir : options_.dirs) {
      if (dir.empty() || dir[0] != '/') {
        return ::sfs::Status::Error(EINVAL, "OST directory " + dir + " is not an absolute path");
      }
      if (!seen.insert(dir).second) {
        return ::sfs::Status::Error(EINVAL, "OST directory " + dir + " is given twice");
      }
      struct stat st {};
      if (stat(dir.c_str(), &st) != 0) return ErrnoStatus(errno, "OST directory " + dir);
      if (!S_ISDIR(st.st_mode)) {
        return ::sfs::Status::Error(ENOTDIR, "OST directory " + dir + " is not a directory");
      }
      // It will hold every user's data: private to root, as mkfs makes it.
      if (chmod(dir.c_str(), 0700) != 0) return ErrnoStatus(errno, "chmod 700 " + dir);
      auto slot = std::make_unique<OstSlot>();
      slot->dir = dir;
      slots.push_back(std::move(slot));
    }
    auto credentials = rpc::ServerCredentials(options_.tls);
    if (!credentials.ok()) return credentials.status();
    service_ = std::make_unique<OssService>(options_.key, std::move(slots), options_);
    SFS_RETURN_IF_ERROR(service_->StartOsts());

    grpc::ServerBuilder builder;
    builder.AddListeningPort(options_.listen, *credentials, &port_);
    builder.RegisterService(service_.get());
    rpc::ConfigureServer(builder, kMaxMessageBytes);
    // Calls a policy holds back keep their threads: room for many.
    grpc::ResourceQuota quota("stripefs-oss");
    quota.SetMaxThreads(kMaxThreads);
    builder.SetResourceQuota(quota);
    server_ = builder.BuildAndStart();
    if (!server_ || port_ == 0) {
      service_->StopOsts();
      return ::sfs::Status::Error(EADDRINUSE, "cannot listen on " + options_.listen +
                                                  " (taken, or not an address of this machine)");
    }
    Logger("oss")->info("listening on {} (port {}), {} OST directories{}", options_.listen, port_,
                        options_.dirs.size(),
                        !options_.tls.on()        ? ""
                        : options_.tls.ca.empty() ? ", TLS"
                                                  : ", TLS with client certificates");
    return ::sfs::Status::Ok();
  }

  int port() const override { return port_; }

  void Shutdown() override {
    if (!server_) return;
    // Calls under way finish, their OSTs serving as fast as they can (no
    // throttle holds a request back: ost::Service::Drain); new ones are
    // refused.
    service_->CancelStreams();
    service_->DrainOsts();
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    service_->StopOsts();
    server_.reset();
    Logger("oss")->info("stopped");
  }

 private:
  const ServerOptions options_;
  int port_ = 0;
  std::unique_ptr<OssService> service_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace

Result<std::unique_ptr<Server>> StartServer(ServerOptions options) {
  auto server = std::make_unique<ServerImpl>(std::move(options));
  SFS_RETURN_IF_ERROR(server->Start());
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace sfs::oss
