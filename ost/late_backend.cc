#include "ost/late_backend.h"

#include <condition_variable>
#include <mutex>

#include <fmt/format.h>

namespace sfs::ost {
namespace {

class LateState final : public LateAttach {
 public:
  LateState(std::string describe, std::chrono::nanoseconds timeout)
      : describe_(std::move(describe)), timeout_(timeout) {}

  bool Attach(std::unique_ptr<Backend> backend) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (settled_) return false;
      inner_ = std::move(backend);
      settled_ = true;
    }
    answered_.notify_all();
    return true;
  }
  void Fail(Status why) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (settled_) return;
      // Always EIO: the label reader's ENOENT ("no label") must not read as
      // a missing object, i.e. a hole, to whoever calls this backend.
      failure_ = Status::Error(EIO, why.message());
      settled_ = true;
    }
    answered_.notify_all();
  }
  void Abandon() override {
    Fail(Status::Error(EIO, fmt::format("ost {}: the OST directory never answered", describe_)));
  }

  // The real backend, waiting at most the timeout for the directory to
  // answer; or why there is none.
  Result<Backend*> Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!answered_.wait_for(lock, timeout_, [&] { return settled_; })) {
      return Status::Error(EIO, fmt::format("ost {}: the OST directory has not answered since "
                                            "the mount",
                                            describe_));
    }
    if (inner_ == nullptr) return failure_;
    return inner_.get();
  }
  // The backend without waiting, if attached.
  Backend* Now() {
    std::lock_guard<std::mutex> lock(mu_);
    return inner_.get();
  }
  const std::string& describe() const { return describe_; }

 private:
  const std::string describe_;
  const std::chrono::nanoseconds timeout_;
  std::mutex mu_;  // guards the three below
  std::condition_variable answered_;
  bool settled_ = false;
  std::unique_ptr<Backend> inner_;  // set once; then never changes
  Status failure_;
};

class LateBackend final : public Backend {
 public:
  explicit LateBackend(std::shared_ptr<LateState> state) : state_(std::move(state)) {}

  Result<std::unique_ptr<ObjectFile>> Open(uint64_t id, bool create) override {
    auto inner = state_->Wait();
    if (!inner.ok()) return inner.status();
    return (*inner)->Open(id, create);
  }
  Status Remove(uint64_t id) override {
    auto inner = state_->Wait();
    if (!inner.ok()) return inner.status();
    return (*inner)->Remove(id);
  }
  Result<SpaceInfo> Space() override {
    auto inner = state_->Wait();
    if (!inner.ok()) return inner.status();
    return (*inner)->Space();
  }
  bool Available() const override { return state_->Now() != nullptr; }
  std::string Describe() const override {
    Backend* inner = state_->Now();
    return inner != nullptr ? inner->Describe() : state_->describe();
  }

 private:
  const std::shared_ptr<LateState> state_;
};

}  // namespace

std::unique_ptr<Backend> NewLateBackend(const std::string& describe,
                                        std::chrono::nanoseconds timeout,
                                        std::shared_ptr<LateAttach>* control) {
  auto state = std::make_shared<LateState>(describe, timeout);
  *control = state;
  return std::make_unique<LateBackend>(std::move(state));
}

}  // namespace sfs::ost
