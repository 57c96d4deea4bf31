// ost::Service with its NRS scheduler: policy switches under load, stats,
// and the timer path taken when a policy answers "nothing until t".
#include <gtest/gtest.h>
#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "nrs/epoch_data.h"
#include "nrs/epoch_hub.h"
#include "nrs/policy.h"
#include "ost/local_service.h"
#include "tests/ost/recorder.h"
#include "tests/ost/test_util.h"

namespace sfs::ost {
namespace {

using nrs::Op;
using testing::MakeIo;
using testing::Recorder;
using testing::TempDir;

const nrs::PolicyStatus* Find(const std::vector<nrs::PolicyStatus>& all, bool primary) {
  for (const auto& s : all) {
    if (primary ? s.primary : s.fallback) return &s;
  }
  return nullptr;
}

TEST(ServicePolicyTest, SwitchingPoliciesUnderLoadDeliversEachRequestOnce) {
  LocalService service(ServiceOptions{0, 3}, NewMemBackend());
  constexpr int kThreads = 4, kPerThread = 500;
  constexpr size_t kLen = 64;
  std::vector<std::string> bufs(kThreads * kPerThread, std::string(kLen, 'p'));
  std::vector<std::shared_ptr<ObjectHandle>> objects;
  for (int i = 0; i < 7; ++i) objects.push_back(service.Object(i));
  Recorder rec;

  std::atomic<int> running{kThreads};
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        uint64_t k = t * kPerThread + i;
        Op op = k % 3 == 0 ? Op::kRead : Op::kWrite;
        service.Submit(MakeIo(op, objects[k % 7], k * kLen, &bufs[k], &rec, k));
      }
      running--;
    });
  }
  // Switch back and forth until the submitters are done, and at least a few
  // times even if they finish first.
  int switches = 0;
  while (running.load() > 0 || switches < 10) {
    if (switches % 2 == 0) {
      service.StartPolicy(nrs::NewFifoPolicy());
    } else {
      service.StopPolicy();
    }
    ++switches;
    std::this_thread::yield();
  }
  for (auto& s : submitters) s.join();

  ASSERT_TRUE(rec.WaitFor(bufs.size()));
  auto results = rec.Results();
  EXPECT_EQ(results.size(), bufs.size());
  std::set<uint64_t> seen;
  for (const auto& d : results) {
    EXPECT_TRUE(seen.insert(d.tag).second) << "request " << d.tag << " served twice";
    EXPECT_EQ(d.err, 0);
    EXPECT_EQ(d.bytes, kLen);
  }
  EXPECT_EQ(seen.size(), bufs.size());
  for (const auto& s : service.PolicyStatus({})) {
    EXPECT_EQ(s.stats.queued, 0u) << s.name;
    EXPECT_EQ(s.stats.active, 0u) << s.name;
  }
}

TEST(ServicePolicyTest, StatusCountsCompletedRequests) {
  LocalService service(ServiceOptions{0, 2}, NewMemBackend());
  Recorder rec;
  constexpr int kFirst = 50, kSecond = 30;
  constexpr size_t kLen = 100;
  std::vector<std::string> bufs(kFirst + kSecond, std::string(kLen, 's'));
  auto object = service.Object(1);

  for (int i = 0; i < kFirst; ++i) {
    service.Submit(MakeIo(Op::kWrite, object, i * kLen, &bufs[i], &rec, i));
  }
  ASSERT_TRUE(rec.WaitFor(kFirst));
  auto status = service.PolicyStatus({"fifo", "tbf"});
  const auto* fallback = Find(status, false);
  ASSERT_NE(fallback, nullptr);
  EXPECT_EQ(fallback->stats.completed, uint64_t(kFirst));
  EXPECT_EQ(fallback->stats.bytes, kFirst * kLen);
  EXPECT_EQ(Find(status, true), nullptr);
  bool tbf_stopped = false;
  for (const auto& s : status) {
    if (s.name == "tbf") tbf_stopped = s.state == nrs::PolicyState::kStopped;
  }
  EXPECT_TRUE(tbf_stopped);

  service.StartPolicy(nrs::NewFifoPolicy());
  for (int i = kFirst; i < kFirst + kSecond; ++i) {
    service.Submit(MakeIo(Op::kWrite, object, i * kLen, &bufs[i], &rec, i));
  }
  ASSERT_TRUE(rec.WaitFor(kFirst + kSecond));
  status = service.PolicyStatus({});
  const auto* primary = Find(status, true);
  ASSERT_NE(primary, nullptr);
  EXPECT_EQ(primary->name, "fifo");
  EXPECT_EQ(primary->stats.completed, uint64_t(kSecond));
  EXPECT_EQ(Find(status, false)->stats.completed, uint64_t(kFirst));
}

// Holds everything back until `open_at`, answering "nothing until then", so
// the service must park its tokens on timers rather than lose them.
class GatePolicy : public nrs::Policy {
 public:
  explicit GatePolicy(nrs::TimePoint open_at, std::atomic<int>* waits)
      : open_at_(open_at), waits_(waits) {}
  std::string_view Name() const override { return "gate"; }
  bool Enqueue(nrs::Request* request, nrs::TimePoint now) override {
    queue_.push_back(request);
    return true;
  }
  nrs::Pick Dequeue(nrs::TimePoint now) override {
    if (queue_.empty()) return nrs::Pick::Empty();
    if (now < open_at_) {
      ++*waits_;
      return nrs::Pick::Until(open_at_);
    }
    nrs::Request* next = queue_.front();
    queue_.pop_front();
    return nrs::Pick::Of(next);
  }
  bool Remove(nrs::Request* request, nrs::TimePoint) override {
    auto it = std::find(queue_.begin(), queue_.end(), request);
    if (it == queue_.end()) return false;
    queue_.erase(it);
    return true;
  }
  size_t Queued() const override { return queue_.size(); }

 private:
  const nrs::TimePoint open_at_;
  std::atomic<int>* const waits_;
  std::deque<nrs::Request*> queue_;
};

// Records when each completion arrived.
class TimedRecorder : public Recorder {
 public:
  void PartDone(IoRequest& request, const Status& status, size_t bytes) override {
    earliest_.store(std::min(earliest_.load(), nrs::Clock::now().time_since_epoch().count()));
    Recorder::PartDone(request, status, bytes);
  }
  nrs::TimePoint Earliest() const { return nrs::TimePoint(nrs::Clock::duration(earliest_.load())); }

 private:
  std::atomic<nrs::Clock::rep> earliest_{std::numeric_limits<nrs::Clock::rep>::max()};
};

TEST(ServicePolicyTest, ThrottledRequestsWaitOnTimersAndAllComplete) {
  TimedRecorder rec;
  std::atomic<int> waits{0};
  const nrs::TimePoint open_at = nrs::Clock::now() + std::chrono::milliseconds(100);
  constexpr int kCount = 20;
  std::vector<std::string> bufs(kCount, std::string(10, 'g'));
  {
    LocalService service(ServiceOptions{0, 2}, NewMemBackend());
    service.StartPolicy(std::make_unique<GatePolicy>(open_at, &waits));
    auto object = service.Object(1);
    for (int i = 0; i < kCount; ++i) {
      service.Submit(MakeIo(Op::kWrite, object, i * 10, &bufs[i], &rec, i));
    }
    ASSERT_TRUE(rec.WaitFor(kCount));
  }
  EXPECT_EQ(rec.Results().size(), size_t(kCount));
  // The gate cannot release anything early, so this is not a timing bet.
  EXPECT_GE(rec.Earliest(), open_at);
  EXPECT_GT(waits.load(), 0);
}

// Records which thread each completion arrived on.
class ThreadRecorder : public Recorder {
 public:
  void PartDone(IoRequest& request, const Status& status, size_t bytes) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads_.push_back(std::this_thread::get_id());
    }
    Recorder::PartDone(request, status, bytes);
  }
  std::vector<std::thread::id> Threads() const {
    std::lock_guard<std::mutex> lock(mu_);
    return threads_;
  }

 private:
  mutable std::mutex mu_;  // guards threads_
  std::vector<std::thread::id> threads_;
};

ServiceOptions WithInlineBudget(int budget) {
  ServiceOptions options{0, 2};
  options.inline_budget = std::make_shared<std::atomic<int>>(budget);
  return options;
}

// An idle OST whose policy dispatches at once serves the request on the
// caller's thread, through the scheduler all the same: counted, and the
// buffers never handed over.
TEST(ServicePolicyTest, SubmitOrRunServesAnIdleOstOnTheCallersThread) {
  ThreadRecorder rec;
  ServiceOptions options = WithInlineBudget(1);
  LocalService service(options, NewMemBackend());
  auto object = service.Object(1);
  std::string data(100, 'i');
  int handed_over = 0;
  for (int i = 0; i < 10; ++i) {
    service.SubmitOrRun(MakeIo(Op::kWrite, object, i * 100, &data, &rec, i),
                        [&](IoRequest&) { handed_over++; });
    // Already done when SubmitOrRun returns: nothing else was in service.
    ASSERT_EQ(rec.Results().size(), size_t(i + 1));
  }
  EXPECT_EQ(handed_over, 0);
  for (const auto& id : rec.Threads()) EXPECT_EQ(id, std::this_thread::get_id());
  for (const auto& done : rec.Results()) EXPECT_EQ(done.err, 0);
  EXPECT_EQ(options.inline_budget->load(), 1);  // given back
  uint64_t served = 0;
  for (const auto& status : service.PolicyStatus({"fifo"})) served += status.stats.completed;
  EXPECT_EQ(served, 10u);
}

// A request the policy holds (a throttle) is queued: its buffers become
// the caller's own first, and a service thread serves it when the policy
// allows. No budget means never inline.
TEST(ServicePolicyTest, SubmitOrRunQueuesWhatThePolicyHolds) {
  TimedRecorder rec;
  std::atomic<int> waits{0};
  const nrs::TimePoint open_at = nrs::Clock::now() + std::chrono::milliseconds(50);
  std::string data(10, 'h');
  int handed_over = 0;
  {
    LocalService service(WithInlineBudget(2), NewMemBackend());
    service.StartPolicy(std::make_unique<GatePolicy>(open_at, &waits));
    auto object = service.Object(1);
    service.SubmitOrRun(MakeIo(Op::kWrite, object, 0, &data, &rec, 1),
                        [&](IoRequest&) { handed_over++; });
    EXPECT_EQ(handed_over, 1);
    ASSERT_TRUE(rec.WaitFor(1));
  }
  EXPECT_GE(rec.Earliest(), open_at);
  {
    ThreadRecorder queued;
    LocalService service(ServiceOptions{0, 2}, NewMemBackend());  // no budget
    service.SubmitOrRun(MakeIo(Op::kWrite, service.Object(2), 0, &data, &queued, 2),
                        [&](IoRequest&) { handed_over++; });
    ASSERT_TRUE(queued.WaitFor(1));
    EXPECT_EQ(handed_over, 2);
    EXPECT_NE(queued.Threads()[0], std::this_thread::get_id());
  }
}

// A read or write of an object already open, on an idle OST, is handed to
// the starter (which does it on the object's descriptor itself, later)
// and stays in service until FinishStarted: counted once, the tail past
// the object's end read as zeros, the inline budget never charged.
TEST(ServicePolicyTest, SubmitOrStartHandsAnIdleOstsReadToTheStarter) {
  TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ThreadRecorder rec;
  ServiceOptions options = WithInlineBudget(1);
  LocalService service(options, std::move(backend).value());
  auto object = service.Object(5);
  std::string written = testing::Pattern(5, 6000);
  service.Submit(MakeIo(Op::kWrite, object, 0, &written, &rec, 1));  // opens the object
  ASSERT_TRUE(rec.WaitFor(1));

  std::string got(8192, 'x');  // 2,192 bytes past the object's end
  IoRequest* started = nullptr;
  std::shared_ptr<ObjectFile> file;
  int handed_over = 0;
  service.SubmitOrStart(
      MakeIo(Op::kRead, object, 0, &got, &rec, 2), [&](IoRequest&) { handed_over++; },
      [&](IoRequest& request, std::shared_ptr<ObjectFile> f) {
        started = &request;
        file = std::move(f);
        return true;
      });
  ASSERT_NE(started, nullptr);
  ASSERT_NE(file, nullptr);
  ASSERT_GE(file->NativeFd(), 0);
  EXPECT_EQ(handed_over, 0);
  EXPECT_EQ(rec.Results().size(), 1u);  // not done until FinishStarted
  ServiceCounters during = service.Counters();
  EXPECT_EQ(during.started, 1u);
  EXPECT_EQ(during.active, 1u);
  EXPECT_GT(during.oldest_in_service.count(), 0);  // Tick would see a read that never ends
  EXPECT_EQ(options.inline_budget->load(), 1);     // it holds no thread

  const ssize_t n = preadv(file->NativeFd(), started->iov.data(),
                           static_cast<int>(started->iov.size()), 0);
  ASSERT_EQ(n, 6000);
  service.FinishStarted(started, *file, Status::Ok(), static_cast<size_t>(n));
  ASSERT_EQ(rec.Results().size(), 2u);
  EXPECT_EQ(rec.Only(2).err, 0);
  EXPECT_EQ(rec.Only(2).bytes, 8192u);
  EXPECT_EQ(rec.Threads()[1], std::this_thread::get_id());
  EXPECT_EQ(got.substr(0, 6000), written);
  EXPECT_EQ(got.substr(6000), std::string(2192, '\0'));
  EXPECT_EQ(options.inline_budget->load(), 1);
  EXPECT_EQ(service.Counters().active, 0u);
  uint64_t served = 0;
  for (const auto& status : service.PolicyStatus({"fifo"})) served += status.stats.completed;
  EXPECT_EQ(served, 2u);

  // A failure the starter reports reaches the observer as the OST's EIO.
  std::string again(100, 'y');
  service.SubmitOrStart(
      MakeIo(Op::kRead, object, 0, &again, &rec, 3), [&](IoRequest&) { handed_over++; },
      [&](IoRequest& request, std::shared_ptr<ObjectFile> f) {
        started = &request;
        file = std::move(f);
        return true;
      });
  service.FinishStarted(started, *file, Status::Error(EIO, "disk gone"), 0);
  EXPECT_EQ(rec.Only(3).err, EIO);

  // A write of the open object too: done by the starter, then its
  // allocation reported and the object marked as existing.
  std::string more = testing::Pattern(6, 4096);
  std::atomic<uint64_t> allocation{0};
  auto write = MakeIo(Op::kWrite, object, 8192, &more, &rec, 4);
  write->allocation = &allocation;
  service.SubmitOrStart(
      std::move(write), [&](IoRequest&) { handed_over++; },
      [&](IoRequest& request, std::shared_ptr<ObjectFile> f) {
        started = &request;
        file = std::move(f);
        return true;
      });
  ASSERT_EQ(started->info.op, Op::kWrite);
  const ssize_t put = pwritev(file->NativeFd(), started->iov.data(),
                              static_cast<int>(started->iov.size()), 8192);
  ASSERT_EQ(put, 4096);
  service.FinishStarted(started, *file, Status::Ok(), static_cast<size_t>(put));
  EXPECT_EQ(rec.Only(4).err, 0);
  EXPECT_EQ(rec.Only(4).bytes, 4096u);
  EXPECT_GT(allocation.load(), 0u);
  EXPECT_EQ(handed_over, 0);
  EXPECT_EQ(service.Counters().started, 3u);  // two reads and the write
}

// One OST on a POSIX backend in a directory of its own.
struct PosixOst {
  explicit PosixOst(const ServiceOptions& service_options)
      : options(service_options),
        service(options, std::move(NewPosixBackend(dir.path())).value()) {}
  // Writes 4 KiB of object `id`'s pattern through a service thread, which
  // leaves the object open (SubmitOrStart starts only those), and returns it.
  std::string WriteToOpen(std::shared_ptr<ObjectHandle> object, ThreadRecorder& rec) {
    std::string written = testing::Pattern(object->object_id(), 4096);
    const size_t before = rec.Results().size();
    service.Submit(MakeIo(Op::kWrite, std::move(object), 0, &written, &rec, 1000 + before));
    EXPECT_TRUE(rec.WaitFor(before + 1));
    return written;
  }
  TempDir dir;
  ServiceOptions options;
  LocalService service;
};

// Keeps what SubmitOrStart hands its starter, to finish it later as an
// io_uring completion would.
struct HeldStart {
  Service::IoStarter Starter() {
    return [this](IoRequest& r, std::shared_ptr<ObjectFile> f) {
      request = &r;
      file = std::move(f);
      return true;
    };
  }
  // Reads what the held read asks for from the object's file itself and
  // tells the service.
  void FinishRead(Service& service) {
    const ssize_t n =
        preadv(file->NativeFd(), request->iov.data(), static_cast<int>(request->iov.size()),
               static_cast<off_t>(request->info.offset));
    ASSERT_GE(n, 0);
    service.FinishStarted(request, *file, Status::Ok(), static_cast<size_t>(n));
  }
  IoRequest* request = nullptr;
  std::shared_ptr<ObjectFile> file;
};

// The inline budget bounds the callers' threads hung OSTs can hold; a
// started request holds none, so it is started even when the budget is
// spent, while SubmitOrRun then hands its request to a service thread.
TEST(ServicePolicyTest, StartedIoTakesNoShareOfTheInlineBudget) {
  ThreadRecorder rec;
  PosixOst ost(WithInlineBudget(0));  // every share taken elsewhere
  Service& service = ost.service;
  auto object = service.Object(9);
  const std::string written = ost.WriteToOpen(object, rec);

  std::string run(4096, 'x');
  service.SubmitOrRun(MakeIo(Op::kRead, object, 0, &run, &rec, 2), [](IoRequest&) {});
  ASSERT_TRUE(rec.WaitFor(2));
  EXPECT_NE(rec.Threads()[1], std::this_thread::get_id());  // no share: a service thread ran it

  std::string got(4096, 'y');
  HeldStart held;
  service.SubmitOrStart(
      MakeIo(Op::kRead, object, 0, &got, &rec, 3), [](IoRequest&) {}, held.Starter());
  ASSERT_NE(held.request, nullptr);
  EXPECT_EQ(ost.options.inline_budget->load(), 0);
  held.FinishRead(service);
  EXPECT_EQ(rec.Only(3).err, 0);
  EXPECT_EQ(got, written);
  EXPECT_EQ(ost.options.inline_budget->load(), 0);  // nothing taken, nothing given back
  EXPECT_EQ(service.Counters().started, 1u);
}

// A started request is in service but holds no thread, so it takes no
// service thread's place: what queues behind it on a one-thread OST is
// served while it is still in flight (a request run on a caller's thread
// would hold that thread's place until it ends).
TEST(ServicePolicyTest, AStartedRequestTakesNoServiceThreadsPlace) {
  ThreadRecorder rec;
  ServiceOptions options{0, 1};  // one service thread
  options.inline_budget = std::make_shared<std::atomic<int>>(1);
  PosixOst ost(options);
  Service& service = ost.service;
  auto object = service.Object(11);
  const std::string written = ost.WriteToOpen(object, rec);

  std::string got(4096, 'x');
  HeldStart held;
  service.SubmitOrStart(
      MakeIo(Op::kRead, object, 0, &got, &rec, 2), [](IoRequest&) {}, held.Starter());
  ASSERT_NE(held.request, nullptr);
  std::string behind(4096, 'y');
  service.Submit(MakeIo(Op::kRead, object, 0, &behind, &rec, 3));
  ASSERT_TRUE(rec.WaitFor(2));  // the third, while the started one is still in flight
  EXPECT_EQ(rec.Only(3).err, 0);
  EXPECT_EQ(behind, written);
  EXPECT_EQ(rec.Results().size(), 2u);  // the started one is not done yet
  EXPECT_EQ(service.Counters().active, 1u);

  held.FinishRead(service);
  EXPECT_EQ(rec.Only(2).err, 0);
  EXPECT_EQ(got, written);
  EXPECT_EQ(service.Counters().active, 0u);
}

// After FinishStarted the starter lets go of the file: a reference others
// still hold is just dropped; the last one (whose drop closes the file) is
// dropped by a service thread, never by the caller, which must not wait on
// a disk.
TEST(ServicePolicyTest, LetGoLeavesTheLastDropToAServiceThread) {
  ThreadRecorder rec;
  PosixOst ost(WithInlineBudget(1));
  Service& service = ost.service;
  auto object = service.Object(10);
  ost.WriteToOpen(object, rec);
  auto opened = object->Get(/*create=*/false);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  const std::shared_ptr<ObjectFile> file = std::move(opened).value();

  // A stand-in reference whose last drop says on which thread it ran.
  std::mutex mu;
  std::condition_variable dropped;
  std::optional<std::thread::id> dropper;  // GUARDED_BY(mu)
  std::shared_ptr<ObjectFile> tracked(file.get(), [&](ObjectFile*) {
    std::lock_guard<std::mutex> lock(mu);
    dropper = std::this_thread::get_id();
    dropped.notify_all();
  });
  std::shared_ptr<ObjectFile> other = tracked;
  service.LetGo(std::move(tracked));  // `other` holds it still
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_FALSE(dropper.has_value());
  }
  service.LetGo(std::move(other));  // the last one
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(
      dropped.wait_for(lock, std::chrono::seconds(10), [&] { return dropper.has_value(); }));
  EXPECT_NE(*dropper, std::this_thread::get_id());
}

// Whatever cannot be started without waiting goes to the service threads,
// served once: an object not open yet (opening it may wait on the disk),
// and a read the starter declines.
TEST(ServicePolicyTest, SubmitOrStartQueuesWhatItCannotStart) {
  TempDir dir;
  auto backend = NewPosixBackend(dir.path());
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  ThreadRecorder rec;
  ServiceOptions options = WithInlineBudget(1);
  LocalService service(options, std::move(backend).value());
  int starts = 0, handed_over = 0;
  auto starter = [&](IoRequest&, std::shared_ptr<ObjectFile>) {
    starts++;
    return false;  // declines
  };
  std::string buf(4096, 'q');
  service.SubmitOrStart(MakeIo(Op::kRead, service.Object(7), 0, &buf, &rec, 1),
                        [&](IoRequest&) { handed_over++; }, starter);
  ASSERT_TRUE(rec.WaitFor(1));
  EXPECT_EQ(starts, 0);  // object 7 was not open
  EXPECT_EQ(handed_over, 1);
  EXPECT_EQ(rec.Only(1).err, 0);  // a hole: zeros

  std::string data = testing::Pattern(8, 4096);
  service.SubmitOrStart(MakeIo(Op::kWrite, service.Object(8), 0, &data, &rec, 2),
                        [&](IoRequest&) { handed_over++; }, starter);
  ASSERT_TRUE(rec.WaitFor(2));
  EXPECT_EQ(starts, 0);  // object 8 was not open either
  EXPECT_EQ(handed_over, 2);

  std::string back(4096, 'r');
  service.SubmitOrStart(MakeIo(Op::kRead, service.Object(8), 0, &back, &rec, 3),
                        [&](IoRequest&) { handed_over++; }, starter);
  ASSERT_TRUE(rec.WaitFor(3));
  EXPECT_EQ(starts, 1);  // offered, declined, then read by a service thread
  EXPECT_EQ(handed_over, 3);  // its buffers made its own before the hand-off
  EXPECT_EQ(rec.Only(3).err, 0);
  EXPECT_EQ(back, data);
  EXPECT_NE(rec.Threads()[2], std::this_thread::get_id());
  EXPECT_EQ(service.Counters().started, 0u);
  EXPECT_EQ(options.inline_budget->load(), 1);
  uint64_t served = 0;
  for (const auto& status : service.PolicyStatus({"fifo"})) served += status.stats.completed;
  EXPECT_EQ(served, 3u);
}

TEST(ServicePolicyTest, DestructorWaitsForParkedTokens) {
  Recorder rec;
  std::atomic<int> waits{0};
  constexpr int kCount = 5;
  std::vector<std::string> bufs(kCount, std::string(10, 'd'));
  {
    LocalService service(ServiceOptions{0, 1}, NewMemBackend());
    service.StartPolicy(
        std::make_unique<GatePolicy>(nrs::Clock::now() + std::chrono::milliseconds(50), &waits));
    auto object = service.Object(1);
    for (int i = 0; i < kCount; ++i) {
      service.Submit(MakeIo(Op::kWrite, object, i * 10, &bufs[i], &rec, i));
    }
  }
  EXPECT_EQ(rec.Results().size(), size_t(kCount));
}

TEST(ServicePolicyTest, StoppingServesThrottledRequestsAtOnce) {
  Recorder rec;
  std::atomic<int> waits{0};
  constexpr int kCount = 5;
  std::vector<std::string> bufs(kCount, std::string(10, 'z'));
  {
    LocalService service(ServiceOptions{0, 1}, NewMemBackend());
    // Held for an hour: only Drain (in ~Service) can release them in time.
    service.StartPolicy(
        std::make_unique<GatePolicy>(nrs::Clock::now() + std::chrono::hours(1), &waits));
    auto object = service.Object(1);
    for (int i = 0; i < kCount; ++i) {
      service.Submit(MakeIo(Op::kWrite, object, i * 10, &bufs[i], &rec, i));
    }
  }
  EXPECT_EQ(rec.Results().size(), size_t(kCount));
}

// An interrupted caller takes its queued requests back (Cancel): they
// never run and their observer never hears of them, while the others are
// served as before; the tokens of those taken back find nothing (the
// destructor does not wait for them).
TEST(ServicePolicyTest, CancelTakesBackQueuedRequestsWhichNeverRun) {
  Recorder rec;
  std::atomic<int> waits{0};
  constexpr int kCount = 4;
  std::vector<std::string> bufs(kCount, std::string(10, 'c'));
  std::vector<std::unique_ptr<IoRequest>> taken;
  {
    LocalService service(ServiceOptions{0, 2}, NewMemBackend());
    // Held for an hour: all four are queued when cancelled, and only Drain
    // (in ~Service) releases the rest.
    service.StartPolicy(
        std::make_unique<GatePolicy>(nrs::Clock::now() + std::chrono::hours(1), &waits));
    auto object = service.Object(1);
    std::vector<IoRequest*> submitted;
    for (int i = 0; i < kCount; ++i) {
      auto request = MakeIo(Op::kWrite, object, i * 10, &bufs[i], &rec, i);
      submitted.push_back(request.get());
      service.Submit(std::move(request));
    }
    for (int i : {1, 3}) {
      ASSERT_TRUE(service.Cancel(*submitted[i]));
      taken.emplace_back(submitted[i]);  // the caller's again
    }
    EXPECT_FALSE(service.Cancel(*taken[0]));  // not queued any more
    const ServiceCounters counters = service.Counters();
    EXPECT_EQ(counters.queued, 2u);
    EXPECT_EQ(counters.cancelled, 2u);
  }
  const std::vector<testing::Done> done = rec.Results();
  ASSERT_EQ(done.size(), 2u);
  for (const testing::Done& d : done) {
    EXPECT_TRUE(d.tag == 0 || d.tag == 2) << d.tag;
    EXPECT_EQ(d.err, 0);
  }
}

// Releases one request per `interval` (a token bucket of depth 1), the
// pattern that would wake every waiting token at each release if each had
// its own timer.
class PacedPolicy : public nrs::Policy {
 public:
  PacedPolicy(std::chrono::nanoseconds interval, std::atomic<int>* untils)
      : interval_(interval), untils_(untils) {}
  std::string_view Name() const override { return "paced"; }
  bool Enqueue(nrs::Request* request, nrs::TimePoint now) override {
    queue_.push_back(request);
    return true;
  }
  nrs::Pick Dequeue(nrs::TimePoint now) override {
    if (queue_.empty()) return nrs::Pick::Empty();
    if (now < next_) {
      ++*untils_;
      return nrs::Pick::Until(next_);
    }
    next_ = now + interval_;
    nrs::Request* r = queue_.front();
    queue_.pop_front();
    return nrs::Pick::Of(r);
  }
  size_t Queued() const override { return queue_.size(); }

 private:
  const std::chrono::nanoseconds interval_;
  std::atomic<int>* const untils_;
  nrs::TimePoint next_{};
  std::deque<nrs::Request*> queue_;
};

TEST(ServicePolicyTest, OneTimerWakeupPerReleaseNotOnePerWaitingRequest) {
  Recorder rec;
  std::atomic<int> untils{0};
  constexpr int kCount = 200;
  std::vector<std::string> bufs(kCount, std::string(10, 'p'));
  LocalService service(ServiceOptions{0, 2}, NewMemBackend());
  service.StartPolicy(std::make_unique<PacedPolicy>(std::chrono::microseconds(500), &untils));
  auto object = service.Object(1);
  for (int i = 0; i < kCount; ++i) {
    service.Submit(MakeIo(Op::kWrite, object, i * 10, &bufs[i], &rec, i));
  }
  ASSERT_TRUE(rec.WaitFor(kCount));
  for (int i = 0; i < kCount; ++i) EXPECT_EQ(rec.Only(i).err, 0);
  // Each token is refused once when it arrives, and each timer wake-up is
  // refused at most once after taking its request: about 2 * kCount. A
  // timer per token would see every waiting token refused at every release,
  // about kCount^2 / 2.
  EXPECT_LE(untils.load(), 3 * kCount);
}

TEST(ServicePolicyTest, HighPriorityHeadServesSyncBeforeQueuedWrites) {
  Recorder rec;
  std::atomic<int> waits{0};
  std::vector<std::string> bufs(11, std::string(10, 'h'));
  LocalService service(ServiceOptions{0, 1}, NewMemBackend());
  // Regular writes are held for 100 ms; a sync on the high-priority head is not.
  service.StartPolicy(nrs::Head::kRegular,
                      std::make_unique<GatePolicy>(
                          nrs::Clock::now() + std::chrono::milliseconds(100), &waits));
  auto object = service.Object(1);
  for (int i = 0; i < 10; ++i) {
    service.Submit(MakeIo(Op::kWrite, object, i * 10, &bufs[i], &rec, i));
  }
  service.Submit(MakeIo(Op::kSync, object, 0, nullptr, &rec, 99));
  ASSERT_TRUE(rec.WaitFor(11));
  EXPECT_EQ(rec.Results().front().tag, 99u);
  EXPECT_EQ(service.PolicyStatus(nrs::Head::kHighPriority, {})[0].stats.completed, 1u);
  EXPECT_EQ(service.HeadStats(nrs::Head::kRegular).dequeued, 10u);
}

// Seed 002's early end: with the epoch policy an OST asks for the next
// epoch as soon as its chosen group has nothing queued (or something waits
// and nothing is chosen), not when the epoch's length has passed. Epochs
// here last 10 s, so epochs that advance within the wait below can only
// have ended early.
TEST(ServicePolicyTest, TheEpochPolicyEndsEpochsEarlyWhenItsGroupIsServed) {
  auto hub = std::make_shared<nrs::SharedEpochHub>(nrs::CombineEpochData, std::chrono::seconds(30));
  nrs::Tunables tunables;
  tunables.epoch_max = std::chrono::seconds(10);
  std::vector<std::unique_ptr<Service>> osts;
  for (uint32_t i = 0; i < 2; i++) {
    ServiceOptions options;
    options.index = i;
    options.threads = 1;
    options.epochs = hub;
    options.epoch_length = std::chrono::seconds(10);
    osts.push_back(std::make_unique<LocalService>(options, NewMemBackend()));
    osts.back()->StartPolicy(std::move(nrs::NewEpochPolicy("jobid", tunables)).value());
  }
  constexpr int kRounds = 20;
  constexpr size_t kLen = 4096;
  std::vector<std::string> bufs(kRounds * 4, std::string(kLen, 'e'));
  const auto jobs = std::vector<std::shared_ptr<const std::string>>{
      std::make_shared<const std::string>("a"), std::make_shared<const std::string>("b")};
  Recorder rec;
  uint64_t tag = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < kRounds; round++) {
    // Each job writes one piece on each OST, as a 2-stripe write does.
    for (uint32_t ost = 0; ost < 2; ost++) {
      for (const auto& job : jobs) {
        auto io = MakeIo(Op::kWrite, osts[ost]->Object(ost + 1), tag * kLen, &bufs[tag], &rec, tag);
        io->info.jobid = job;
        osts[ost]->Submit(std::move(io));
        tag++;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(rec.WaitFor(bufs.size()));
  const auto busy_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  for (const auto& d : rec.Results()) EXPECT_EQ(d.err, 0);
  // Both OSTs joined (the second one's join completes only with an epoch
  // the first one ended) and went through several epochs; a bounded wait,
  // far below the 10 s an epoch would otherwise last.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline &&
         (osts[0]->epoch() < 3 || osts[1]->epoch() < 3)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(osts[0]->epoch(), 3);
  EXPECT_GE(osts[1]->epoch(), 3);
  EXPECT_EQ(osts[0]->epoch(), osts[1]->epoch());
  EXPECT_EQ(hub->epoch(), osts[0]->epoch());
  // Early ends never come sooner than kMinEpochSpan (1 ms) apart, and only
  // while something was queued: at most one per millisecond of the run
  // (+ the joins and the end of the last one).
  EXPECT_LE(hub->epoch(), busy_ms + 3);
}

}  // namespace
}  // namespace sfs::ost
