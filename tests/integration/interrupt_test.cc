// Interrupts of throttled requests (issue 33, item 3) on a real mount: a
// user's O_DIRECT reads and writes wait in TBF at one request a second;
// a signal to their callers ends the calls at once (EINTR) instead of when
// the rate lets them through, and what they would have written is not
// stored. A caller killed with SIGKILL goes at once too, and the mount can
// then be unmounted. Nothing here knows the FUSE transport: the kernel
// sends FUSE_INTERRUPT however the requests travel.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "file_util.h"
#include "mounted_fs.h"

namespace sfs::test {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uid_t kNobody = 65534;
constexpr size_t kPage = 4096;  // O_DIRECT alignment
// Callers, each with one request: at the throttled rate (1/s) the last
// waits about kCallers - 1 seconds.
constexpr int kCallers = 8;
constexpr char kOriginal = 'o';

// What one caller saw: 0 (its call did the whole block, and a read found
// the original bytes), an errno, or -1 (a read found other bytes).
struct Outcome {
  int err = 0;
  double seconds = 0;  // the call's own duration
};

struct Caller {
  pid_t pid = -1;
  int pipe = -1;  // read end: the Outcome
  bool writes = false;
  size_t size = 0;  // of its call
  char fill = 0;  // what a writer writes
};

// Forks a caller running as nobody, with a SIGUSR1 handler installed
// without SA_RESTART (so an interrupted call returns EINTR rather than
// starting again), which runs `call` and sends its Outcome on the pipe.
// `call` sends a byte on it (Ready) just before its system call.
Caller Fork(const std::function<Outcome(int pipe)>& call) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  Caller caller{fork(), fds[0]};
  if (caller.pid != 0) {
    close(fds[1]);
    return caller;
  }
  close(fds[0]);
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = +[](int) {};
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART
  sigaction(SIGUSR1, &action, nullptr);
  Outcome outcome;
  if (setgroups(0, nullptr) != 0 || setgid(kNobody) != 0 || setuid(kNobody) != 0) {
    outcome.err = errno;
  } else {
    outcome = call(fds[1]);
  }
  (void)!write(fds[1], &outcome, sizeof(outcome));
  _exit(0);
}

void Ready(int pipe) {
  const char ready = 'r';
  (void)!write(pipe, &ready, 1);
}

// A caller doing one O_DIRECT pread or pwrite of `size` bytes at offset 0
// of `path`.
Caller StartCaller(const std::string& path, bool writes, size_t size, char fill) {
  Caller caller = Fork([&](int pipe) {
    Outcome outcome;
    void* buffer = nullptr;
    const int fd = open(path.c_str(), (writes ? O_WRONLY : O_RDONLY) | O_DIRECT);
    if (fd < 0 || posix_memalign(&buffer, kPage, size) != 0) {
      outcome.err = errno != 0 ? errno : ENOMEM;
      return outcome;
    }
    std::memset(buffer, writes ? fill : 0, size);
    Ready(pipe);
    const Clock::time_point start = Clock::now();
    const ssize_t n = writes ? pwrite(fd, buffer, size, 0) : pread(fd, buffer, size, 0);
    outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (n < 0) {
      outcome.err = errno;
    } else if (static_cast<size_t>(n) != size) {
      outcome.err = EIO;
    } else if (!writes) {
      const char* bytes = static_cast<const char*>(buffer);
      for (size_t i = 0; i < size; i++) {
        if (bytes[i] != kOriginal) outcome.err = -1;
      }
    }
    return outcome;
  });
  caller.writes = writes;
  caller.size = size;
  caller.fill = fill;
  return caller;
}

// Waits for `caller` to exit until `deadline` (then SIGKILLs it and
// returns false); sets `outcome` from what it reported, if anything.
bool Reap(Caller& caller, Clock::time_point deadline, Outcome* outcome) {
  bool exited = false;
  while (!exited && Clock::now() < deadline) {
    exited = waitpid(caller.pid, nullptr, WNOHANG) == caller.pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!exited) {
    kill(caller.pid, SIGKILL);
    waitpid(caller.pid, nullptr, 0);
  }
  if (outcome != nullptr && read(caller.pipe, outcome, sizeof(*outcome)) != sizeof(*outcome)) {
    outcome->err = ECHILD;  // killed before it could say
  }
  close(caller.pipe);
  caller.pid = -1;
  return exited;
}

// One OST, so that the rate is all its own (under the "fs" scope each OST
// starts with a token of its own) and each call is one request.
MountedFs::Options OneOst() {
  MountedFs::Options options;
  options.osts = 1;
  options.stripe_count = 1;
  return options;
}

// Two OSTs, 64 KiB stripes: a call of 128 KiB is a request on each.
MountedFs::Options TwoStripes() {
  MountedFs::Options options;
  options.osts = 2;
  options.stripe_count = 2;
  options.stripe_size = "64K";
  return options;
}

// A mount where nobody is throttled to one request a second over the
// filesystem, and kCallers callers of nobody in their calls, each on a
// file of its own (writes to one file wait for each other in the kernel,
// and overlapping extents in the daemon): `block_` bytes of kOriginal.
class InterruptTest : public ::testing::Test {
 protected:
  InterruptTest() : InterruptTest(OneOst(), kPage) {}
  InterruptTest(const MountedFs::Options& options, size_t block) : fs_(options), block_(block) {}

  void SetUp() override {
    ASSERT_TRUE(fs_.mounted());
    for (int i = 0; i < kCallers; i++) {
      paths_.push_back(fs_.Path("file" + std::to_string(i)));
      ASSERT_TRUE(WriteFile(paths_.back(), std::string(block_, kOriginal), 0666));
      ASSERT_EQ(chmod(paths_.back().c_str(), 0666), 0);  // whatever the umask
    }
    ASSERT_EQ(SetSetting(fs_, "nrs_policies", "tbf uid"), 0);
    ASSERT_EQ(SetSetting(fs_, "nrs_tbf_rule", "start slow uid={65534} rate=1 depth=1"), 0);
    // Even ones write, odd ones read.
    for (int i = 0; i < kCallers; i++) {
      callers_.push_back(StartCaller(paths_[i], i % 2 == 0, block_, static_cast<char>('A' + i)));
      ASSERT_GT(callers_.back().pid, 0);
    }
    // Each says when it is about to make its call (a signal before it
    // would interrupt nothing).
    for (const Caller& caller : callers_) {
      char ready = 0;
      ASSERT_EQ(read(caller.pipe, &ready, 1), 1);
    }
    // All but two queued (requests: two per call when striped): the
    // bucket's one token lets one through at once, and the rate may have
    // let one more through since.
    EXPECT_TRUE(WaitFor([&] { return SumOfOstCounter(fs_, "queued") >= kCallers - 2; }, 5000))
        << GetSetting(fs_, "ost_status");
    queued_ = SumOfOstCounter(fs_, "queued");
  }

  // Callers a failed test left in their calls go before the mount does.
  void TearDown() override {
    for (Caller& caller : callers_) {
      if (caller.pid > 0) Reap(caller, Clock::now(), nullptr);
    }
  }

  // Sends `signal` to every caller and reaps them; how many exited within
  // half the time the queue takes at the rate (more than an answer to an
  // interrupt needs, even on a loaded machine). Sets `outcomes` if given.
  int SignalAndReap(int signal, std::vector<Outcome>* outcomes, double* seconds) {
    const Clock::time_point sent = Clock::now();
    for (const Caller& caller : callers_) kill(caller.pid, signal);
    const Clock::time_point deadline = sent + std::chrono::milliseconds(500 * queued_);
    if (outcomes != nullptr) outcomes->assign(kCallers, Outcome{});
    int in_time = 0;
    for (int i = 0; i < kCallers; i++) {
      in_time += Reap(callers_[i], deadline, outcomes != nullptr ? &(*outcomes)[i] : nullptr);
    }
    *seconds = std::chrono::duration<double>(Clock::now() - sent).count();
    return in_time;
  }

  // Sends SIGUSR1 to every caller and reaps them (each must end in time,
  // with its call done or EINTR), then lets anything left go so that the
  // data can be checked and the fs unmounted.
  struct Interrupted {
    std::vector<Outcome> outcomes;
    int interrupted = 0;     // calls that got EINTR
    uint64_t cancelled = 0;  // requests taken back (ost_status)
    uint64_t left = 0;       // requests queued once all callers ended
    double waited = 0;       // from the signal to the last exit
  };
  Interrupted InterruptAll() {
    Interrupted r;
    const int ended_in_time = SignalAndReap(SIGUSR1, &r.outcomes, &r.waited);
    r.cancelled = SumOfOstCounter(fs_, "cancelled");
    r.left = SumOfOstCounter(fs_, "queued");
    EXPECT_EQ(SetSetting(fs_, "nrs_tbf_rule", "change slow rate=100000 depth=100"), 0);
    EXPECT_EQ(ended_in_time, kCallers) << "calls still waiting " << r.waited << " s after the signal";
    for (int i = 0; i < kCallers; i++) {
      EXPECT_TRUE(r.outcomes[i].err == 0 || r.outcomes[i].err == EINTR)
          << "caller " << i << ": " << r.outcomes[i].err;
      r.interrupted += r.outcomes[i].err == EINTR;
    }
    return r;
  }

  // A write that got EINTR stored nothing; one that did not, all it
  // carried. Read past the page cache: the writes went around it.
  void CheckWriters(const std::vector<Outcome>& outcomes) {
    for (int i = 0; i < kCallers; i++) {
      // Only writers that said what happened (a failed expectation covers
      // the others).
      if (!callers_[i].writes || (outcomes[i].err != 0 && outcomes[i].err != EINTR)) continue;
      const std::string copy = fs_.root() + "/copy" + std::to_string(i);
      const CommandResult dd =
          Shell("dd if=" + paths_[i] + " of=" + copy + " bs=" + std::to_string(block_) +
                " iflag=direct status=none");
      ASSERT_EQ(dd.exit_code, 0) << dd.output;
      const char want = outcomes[i].err == 0 ? callers_[i].fill : kOriginal;
      const std::optional<std::string> stored = ReadFile(copy);
      size_t wanted = 0;
      if (stored.has_value()) wanted = std::count(stored->begin(), stored->end(), want);
      EXPECT_EQ(wanted, block_) << "writer " << i << " (" << outcomes[i].err
                                << ") expected all '" << want << "'";
    }
  }

  MountedFs fs_;
  const size_t block_;
  std::vector<std::string> paths_;
  std::vector<Caller> callers_;
  uint64_t queued_ = 0;  // in the queue once all callers were in their calls
};

// A signal ends the throttled calls at once with EINTR, and what an
// interrupted write carried is not stored. Without interrupt handling each
// call waits for its turn at the rate: the last one about 6 s after the
// signal, and none fails.
TEST_F(InterruptTest, ASignalEndsThrottledReadsAndWritesWithEintr) {
  const Interrupted r = InterruptAll();
  // Every request queued at the signal was taken out of its queue, less
  // one the rate may have let through meanwhile.
  EXPECT_GE(static_cast<uint64_t>(r.interrupted) + 1, queued_);
  EXPECT_EQ(r.cancelled, static_cast<uint64_t>(r.interrupted)) << GetSetting(fs_, "ost_status");
  EXPECT_EQ(r.left, 0u) << GetSetting(fs_, "ost_status");
  std::printf("%d of %d calls interrupted; %.3f s from the signal to the last exit (%" PRIu64
              " queued at the signal)\n",
              r.interrupted, kCallers, r.waited, queued_);

  CheckWriters(r.outcomes);
  EXPECT_TRUE(fs_.Unmount());
}

// Calls of two requests, one per OST. A call with both still queued ends
// with EINTR; one with a request already served or in service is not
// cancelled and completes. Either way a write is stored whole or not at all.
class StripedInterruptTest : public InterruptTest {
 protected:
  StripedInterruptTest() : InterruptTest(TwoStripes(), 128 << 10) {}
};

TEST_F(StripedInterruptTest, ACallIsEndedWholeOrServedWhole) {
  const Interrupted r = InterruptAll();
  // Most calls were wholly queued: the first took a token on each OST,
  // and the rate lets about one request a second through.
  EXPECT_GE(r.interrupted, kCallers / 2);
  // Two requests taken back per call ended; those of a call that had one
  // in service went back to their queues.
  EXPECT_GE(r.cancelled, 2u * r.interrupted) << GetSetting(fs_, "ost_status");
  EXPECT_EQ(r.left, 0u) << GetSetting(fs_, "ost_status");
  std::printf("%d of %d striped calls interrupted; %.3f s from the signal to the last exit (%" PRIu64
              " requests queued at the signal, %" PRIu64 " taken back)\n",
              r.interrupted, kCallers, r.waited, queued_, r.cancelled);
  CheckWriters(r.outcomes);
  EXPECT_TRUE(fs_.Unmount());
}

// Metadata operations held by the metadata service's TBF end the same
// way: a mkdir whose caller is interrupted returns EINTR and makes
// nothing (each mkdir is a lookup and a mkdir, both held at the rate).
TEST(MetadataInterruptTest, ASignalEndsThrottledMkdirsWithEintr) {
  MountedFs fs(OneOst());
  ASSERT_TRUE(fs.mounted());
  const std::string dir = fs.Path("d");
  ASSERT_EQ(mkdir(dir.c_str(), 0777), 0);
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);  // whatever the umask
  ASSERT_EQ(SetSetting(fs, "mdt.nrs_policies", "tbf uid"), 0);
  ASSERT_EQ(SetSetting(fs, "mdt.nrs_tbf_rule", "start slow uid={65534} rate=1 depth=1"), 0);
  std::vector<Caller> callers;
  std::vector<std::string> paths;
  for (int i = 0; i < kCallers; i++) {
    paths.push_back(dir + "/sub" + std::to_string(i));
    callers.push_back(Fork([&](int pipe) {
      Outcome outcome;
      Ready(pipe);
      const Clock::time_point start = Clock::now();
      if (mkdir(paths.back().c_str(), 0755) != 0) outcome.err = errno;
      outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      return outcome;
    }));
    ASSERT_GT(callers.back().pid, 0);
  }
  for (const Caller& caller : callers) {
    char ready = 0;
    ASSERT_EQ(read(caller.pipe, &ready, 1), 1);
  }
  // Into their calls (the metadata service shows no queue length).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const Clock::time_point signalled = Clock::now();
  for (const Caller& caller : callers) kill(caller.pid, SIGUSR1);
  // Two held requests per call at 1/s: the queue takes over 10 s.
  const Clock::time_point deadline = signalled + std::chrono::seconds(3);
  std::vector<Outcome> outcomes(kCallers);
  int ended_in_time = 0;
  for (int i = 0; i < kCallers; i++) ended_in_time += Reap(callers[i], deadline, &outcomes[i]);
  const double waited = std::chrono::duration<double>(Clock::now() - signalled).count();
  EXPECT_EQ(SetSetting(fs, "mdt.nrs_tbf_rule", "change slow rate=100000 depth=100"), 0);
  EXPECT_EQ(ended_in_time, kCallers) << "calls still waiting " << waited << " s after the signal";
  int interrupted = 0;
  for (int i = 0; i < kCallers; i++) {
    EXPECT_TRUE(outcomes[i].err == 0 || outcomes[i].err == EINTR)
        << "caller " << i << ": " << outcomes[i].err;
    interrupted += outcomes[i].err == EINTR;
    struct stat st;
    // Made if and only if the call said so.
    if (outcomes[i].err == 0 || outcomes[i].err == EINTR) {
      EXPECT_EQ(stat(paths[i].c_str(), &st) == 0, outcomes[i].err == 0) << paths[i];
    }
  }
  EXPECT_GE(interrupted, kCallers / 2);
  std::printf("%d of %d mkdirs interrupted; %.3f s from the signal to the last exit\n",
              interrupted, kCallers, waited);
  EXPECT_TRUE(fs.Unmount());
}

// SIGKILL to callers whose requests wait in TBF: they exit at once, and
// the mount can be unmounted right after. Without interrupt handling a
// killed caller stays until its request is served (the kernel waits for
// the answer of a request the daemon has read), so the mount stays busy.
TEST_F(InterruptTest, KilledCallersExitAndTheMountUnmountsInBoundedTime) {
  double exited = 0;
  EXPECT_EQ(SignalAndReap(SIGKILL, nullptr, &exited), kCallers)
      << "killed callers still there " << exited << " s on";
  const Clock::time_point unmounting = Clock::now();
  const bool unmounted = fs_.Unmount();
  const double unmount = std::chrono::duration<double>(Clock::now() - unmounting).count();
  EXPECT_TRUE(unmounted);
  EXPECT_LT(unmount, 3.0);
  std::printf("killed callers gone in %.3f s, unmounted in %.3f s (%" PRIu64 " queued)\n", exited,
              unmount, queued_);
}

// SIGTERM to the daemon while requests wait in TBF: it stops within a few
// seconds (a stop serves what is queued ignoring the throttle), and every
// waiting call gets an answer, not the rate's.
TEST_F(InterruptTest, DaemonStopsPromptlyWithRequestsWaitingInTbf) {
  const Clock::time_point stopping = Clock::now();
  const int status = fs_.Terminate();
  const double stop = std::chrono::duration<double>(Clock::now() - stopping).count();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const Clock::time_point deadline = stopping + std::chrono::milliseconds(500 * queued_);
  int ended_in_time = 0;
  for (Caller& caller : callers_) ended_in_time += Reap(caller, deadline, nullptr);
  EXPECT_EQ(ended_in_time, kCallers);
  EXPECT_LT(stop, 0.5 * static_cast<double>(queued_));
  std::printf("daemon stopped in %.3f s with %" PRIu64 " queued\n", stop, queued_);
}

}  // namespace
}  // namespace sfs::test
