// The object storage target on this machine: ost::Service (ost/service.h)
// over a Backend, with its NRS scheduler and Boost.Asio service threads.
// Everything the interface's header says of the data path, epochs, health
// and space samples is this class's; a remote OST (an OSS's, reached over
// the network) forwards to one of these on its server.
#pragma once

#include <memory>

#include "ost/service.h"

namespace sfs::ost {

class LocalService final : public Service {
 public:
  // The interface's convenience overloads (the regular head).
  using Service::PolicyStatus;
  using Service::StartPolicy;
  using Service::StopPolicy;

  // Starts `options.threads` service threads.
  LocalService(const ServiceOptions& options, std::unique_ptr<Backend> backend);
  // Serves every request already submitted (at once: see Drain), then
  // joins the threads.
  ~LocalService() override;

  uint32_t index() const override { return index_; }
  Backend& backend() override { return *backend_; }

  std::shared_ptr<ObjectHandle> Object(uint64_t object_id) override;
  void CloseObject(uint64_t object_id) override;
  void SetOpenObjects(size_t open_objects) override { objects_.SetCapacity(open_objects); }

  void Submit(std::unique_ptr<IoRequest> request) override;
  void SubmitOrRun(std::unique_ptr<IoRequest> request,
                   const std::function<void(IoRequest&)>& before_queueing) override;
  void SubmitOrStart(std::unique_ptr<IoRequest> request,
                     const std::function<void(IoRequest&)>& before_queueing,
                     const IoStarter& start) override;
  void FinishStarted(IoRequest* request, ObjectFile& file, Status status, size_t bytes) override;
  void LetGo(std::shared_ptr<ObjectFile> file) override;

  void Raise(IoRequest& request) override;
  bool Cancel(IoRequest& request) override;

  void StartPolicy(nrs::Head head, std::unique_ptr<nrs::Policy> policy) override;
  void StopPolicy(nrs::Head head) override;
  void Retune(nrs::Head head, const nrs::Tunables& tunables) override;
  void SetHighPriority(nrs::OpSet ops, uint32_t ratio) override;
  void SetEpochLength(std::chrono::nanoseconds length) override;
  nrs::Epoch epoch() const override;
  nrs::Standing EpochStanding() const override;
  void Drain() override;

  std::string PrimaryName(nrs::Head head) const override;
  std::vector<nrs::PolicyStatus> PolicyStatus(nrs::Head head,
                                              const std::vector<std::string>& registered,
                                              bool with_classes = true) const override;
  nrs::HeadStats HeadStats(nrs::Head head) const override;
  ServiceCounters Counters() const override;

  void Tick(nrs::TimePoint now) override;
  void SetHealthListener(std::function<void(uint32_t index, bool responsive)> listener) override;
  void SetSpaceFreedListener(
      std::function<void(uint32_t index, uint64_t bytes, nrs::TimePoint from)> listener) override;
  bool responsive() const override;
  SpaceSample LastSpace() const override;
  void RequestSpaceSample() override;
  uint64_t DestroysInFlight() const override;
  bool read_only() const override;
  jobstats::JobStats& job_stats() override;

 private:
  // Sets what Submit and SubmitOrRun fill in: arrival (if unset), the
  // object handle (if unset) and the OST index.
  void Stamp(IoRequest& request);
  // Counts a destroy in DestroysInFlight as it is queued (once).
  void CountDestroy(const IoRequest& request);
  // A request that held the inline slot is done with it.
  void EndInline();
  // REQUIRES: the inline slot claimed. If the OST is idle and responsive,
  // enqueues `request` and asks its policy: kDispatched, it is in service
  // and `request` the caller's to serve; kQueued, the policy holds it
  // (`request` released, `before_queueing` ran, a token is due); kBusy,
  // `request` untouched.
  enum class Admission { kDispatched, kQueued, kBusy };
  Admission AdmitIfIdle(std::unique_ptr<IoRequest>& request,
                        const std::function<void(IoRequest&)>& before_queueing);
  // Gives the inline slot back and sees to a request AdmitIfIdle did not
  // dispatch: submitted (kBusy) or its token posted (kQueued).
  void NotAdmitted(Admission admission, std::unique_ptr<IoRequest> request,
                   const std::function<void(IoRequest&)>& before_queueing);

  struct Impl;
  const uint32_t index_;
  std::unique_ptr<Backend> backend_;
  ObjectCache objects_;  // borrows backend_
  std::unique_ptr<Impl> impl_;
};

}  // namespace sfs::ost
