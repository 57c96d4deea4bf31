// The table through which FUSE_INTERRUPT reaches an op (fs/interrupts.h):
// who is told, when, and that an op answering first is never reached.
// Requests are stand-in pointers: the table only compares them, and the
// libfuse call is replaced by an Arm of the test's own.
#include "fs/interrupts.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

namespace sfs::fs {
namespace {

fuse_req_t FakeRequest(uintptr_t n) { return reinterpret_cast<fuse_req_t>(n * 64); }

// An op with `queued` pieces of work not started, or 0 when some started.
class FakeOp : public Interruptible {
 public:
  FakeOp(InterruptTable& table, fuse_req_t req, size_t queued)
      : table_(table), req_(req), queued_(queued) {}
  size_t TakeBack() override {
    take_backs++;
    return std::exchange(queued_, 0);
  }
  void EndTakenBack(size_t taken) override {
    // As MultiPartOp's last Drop: it forgets its request before answering.
    table_.Forget(req_);
    ended_with += taken;
  }
  int take_backs = 0;
  size_t ended_with = 0;

 private:
  InterruptTable& table_;
  const fuse_req_t req_;
  size_t queued_;
};

// Arms nothing: interrupts come only when the test calls Interrupt.
InterruptTable::Arm NoArm() {
  return [](fuse_req_t, InterruptTable*) {};
}

TEST(InterruptTableTest, AnInterruptEndsAWatchedOpWhoseWorkIsAllQueued) {
  InterruptTable table(NoArm());
  FakeOp op(table, FakeRequest(1), 3);
  table.Watch(FakeRequest(1), &op);
  EXPECT_EQ(table.watched(), 1u);
  table.Interrupt(FakeRequest(2));  // another request: nobody watches it
  EXPECT_EQ(op.take_backs, 0);
  table.Interrupt(FakeRequest(1));
  EXPECT_EQ(op.take_backs, 1);
  EXPECT_EQ(op.ended_with, 3u);
  EXPECT_EQ(table.watched(), 0u);
  EXPECT_EQ(table.ended(), 1u);
  table.Interrupt(FakeRequest(1));  // a second one finds nothing
  EXPECT_EQ(op.take_backs, 1);
}

TEST(InterruptTableTest, AnOpWithWorkStartedGoesOnAndIsForgottenWhenItAnswers) {
  InterruptTable table(NoArm());
  FakeOp op(table, FakeRequest(1), 0);
  table.Watch(FakeRequest(1), &op);
  table.Interrupt(FakeRequest(1));
  EXPECT_EQ(op.take_backs, 1);
  EXPECT_EQ(op.ended_with, 0u);
  EXPECT_EQ(table.watched(), 1u);  // still answers by itself
  EXPECT_EQ(table.ended(), 0u);
  table.Forget(FakeRequest(1));
  EXPECT_EQ(table.watched(), 0u);
}

TEST(InterruptTableTest, AnInterruptAfterTheOpForgotItsRequestReachesNothing) {
  InterruptTable table(NoArm());
  FakeOp op(table, FakeRequest(1), 2);
  table.Watch(FakeRequest(1), &op);
  table.Forget(FakeRequest(1));
  table.Interrupt(FakeRequest(1));
  EXPECT_EQ(op.take_backs, 0);
  EXPECT_EQ(table.ended(), 0u);
}

// libfuse calls back inside fuse_req_interrupt_func when the interrupt
// came before the op was watched: Watch must not hold its lock then.
TEST(InterruptTableTest, AnInterruptThatCameFirstEndsTheOpInsideWatch) {
  InterruptTable table([](fuse_req_t req, InterruptTable* self) { self->Interrupt(req); });
  FakeOp op(table, FakeRequest(1), 1);
  table.Watch(FakeRequest(1), &op);
  EXPECT_EQ(op.ended_with, 1u);
  EXPECT_EQ(table.watched(), 0u);
  EXPECT_EQ(table.ended(), 1u);
}

// An op forgetting its request while an interrupt for it comes: the
// interrupt reaches it before Forget returns or not at all (the op may be
// gone after), and ends it at most once. Forget here stands for an op
// whose work all ran and which answers now.
class RacingOp : public Interruptible {
 public:
  size_t TakeBack() override {
    if (forgotten.load()) reached_after_forget++;
    take_backs++;
    return 1;
  }
  void EndTakenBack(size_t) override { ended++; }
  std::atomic<bool> forgotten{false};
  std::atomic<int> take_backs{0}, ended{0}, reached_after_forget{0};
};

TEST(InterruptTableTest, AnInterruptRacingForgetReachesTheOpBeforeForgetReturnsOrNever) {
  InterruptTable table(NoArm());
  constexpr int kRounds = 2000;
  int interrupted = 0, wrong = 0;
  for (int i = 0; i < kRounds; i++) {
    const fuse_req_t req = FakeRequest(1 + i % 7);  // addresses are reused
    RacingOp op;
    table.Watch(req, &op);
    std::thread interrupter([&] { table.Interrupt(req); });
    table.Forget(req);
    op.forgotten = true;
    interrupter.join();
    wrong += op.reached_after_forget.load() + (op.take_backs.load() > 1) +
             (op.ended.load() != op.take_backs.load());
    interrupted += op.ended.load();
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(table.watched(), 0u);
  EXPECT_EQ(table.ended(), uint64_t(interrupted));
}


// The io_uring sweep's half in the table: requests watched long enough
// whose caller has a signal pending are found, and interrupted only if
// still the same request.
TEST(InterruptTableTest, SignalledFindsOldRequestsOfSignalledCallersOnly) {
  InterruptTable table(NoArm(), [](fuse_req_t req) {
    return static_cast<pid_t>(reinterpret_cast<uintptr_t>(req) / 64);  // caller = n
  });
  FakeOp signalled_op(table, FakeRequest(1), 2);
  FakeOp quiet_op(table, FakeRequest(2), 2);
  table.Watch(FakeRequest(1), &signalled_op);
  table.Watch(FakeRequest(2), &quiet_op);
  auto only_one = [](pid_t caller) { return caller == 1; };
  const auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  EXPECT_TRUE(table.Signalled(past, only_one).empty());  // too young
  const auto later = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  auto found = table.Signalled(later, only_one);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].req, FakeRequest(1));
  // Answered, and the address reused by a new request: left alone.
  table.Forget(FakeRequest(1));
  FakeOp reused(table, FakeRequest(1), 2);
  table.Watch(FakeRequest(1), &reused);
  table.InterruptIfStill(found[0]);
  EXPECT_EQ(reused.take_backs, 0);
  // The same request still waiting: interrupted.
  found = table.Signalled(std::chrono::steady_clock::now() + std::chrono::seconds(1), only_one);
  ASSERT_EQ(found.size(), 1u);
  table.InterruptIfStill(found[0]);
  EXPECT_EQ(reused.ended_with, 2u);
  EXPECT_EQ(quiet_op.take_backs, 0);
}

TEST(SignalPendingTest, SeesAPendingSignalThatIsNotBlocked) {
  // A stopped child keeps a signal sent to it pending.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGUSR1, [](int) {});
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR2);
    sigprocmask(SIG_BLOCK, &blocked, nullptr);
    for (;;) pause();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // its handler and mask set
  ASSERT_EQ(kill(child, SIGSTOP), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(SignalPending(child));
  ASSERT_EQ(kill(child, SIGUSR2), 0);  // blocked: would not end a wait
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(SignalPending(child));
  ASSERT_EQ(kill(child, SIGUSR1), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_TRUE(SignalPending(child));
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(SignalPending(child));  // gone: cannot be read
}

}  // namespace
}  // namespace sfs::fs
