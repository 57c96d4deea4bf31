// A test IoObserver that records every PartDone and lets a test wait for a
// count with a bounded timeout, plus a builder for IoRequests.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "ost/service.h"
#include "tests/ost/test_util.h"

namespace sfs::ost::testing {

inline constexpr std::chrono::seconds kWaitLimit{30};

struct Done {
  uint64_t tag;
  int err;
  size_t bytes;
};

class Recorder : public IoObserver {
 public:
  void PartDone(IoRequest& request, const Status& status, size_t bytes) override {
    std::lock_guard<std::mutex> lock(mu_);
    done_.push_back({request.tag, status.err(), bytes});
    cv_.notify_all();
  }

  // False if fewer than `n` completions arrived within kWaitLimit.
  bool WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWaitLimit, [&] { return done_.size() >= n; });
  }

  std::vector<Done> Results() const {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }

  // The one result with `tag`; fails the test if there is not exactly one.
  Done Only(uint64_t tag) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Done> found;
    for (const Done& d : done_) {
      if (d.tag == tag) found.push_back(d);
    }
    EXPECT_EQ(found.size(), 1u) << "tag " << tag;
    return found.empty() ? Done{tag, -1, 0} : found[0];
  }

 private:
  mutable std::mutex mu_;  // guards done_
  std::condition_variable cv_;
  std::vector<Done> done_;
};

// A request on `object`; for reads and writes `buf` is the data (split into
// iovecs of `piece` bytes) and must outlive the completion.
inline std::unique_ptr<IoRequest> MakeIo(nrs::Op op, std::shared_ptr<ObjectHandle> object,
                                         uint64_t offset, std::string* buf, Recorder* observer,
                                         uint64_t tag, size_t piece = 4096) {
  auto r = std::make_unique<IoRequest>();
  r->info.op = op;
  r->info.object_id = object->object_id();
  r->info.offset = offset;
  if (buf != nullptr) {
    r->info.length = buf->size();
    r->iov = Iov(*buf, piece);
  }
  r->object = std::move(object);
  r->observer = observer;
  r->tag = tag;
  return r;
}

}  // namespace sfs::ost::testing
