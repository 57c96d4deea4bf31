#include "fs/fuse_loop.h"

#include <linux/fuse.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "common/log.h"
#include "fs/fuse_api.h"

namespace sfs::fs {
namespace {

// How often the calling thread looks at fuse_session_exited when nothing
// woke it: a stop signal delivered to another thread (one that does not
// block it) still ends the loop this soon.
constexpr long kExitPollNs = 100'000'000;

class ReceiveLoop {
 public:
  ReceiveLoop(fuse_session* session, const ReceiveLoopOptions& options)
      : session_(session), options_(options), fd_(fuse_session_fd(session)) {
    sem_init(&finish_, 0, 0);
    workers_.resize(options.workers);
    for (Worker& worker : workers_) worker.loop = this;
  }
  ~ReceiveLoop() { sem_destroy(&finish_); }
  ReceiveLoop(const ReceiveLoop&) = delete;
  ReceiveLoop& operator=(const ReceiveLoop&) = delete;

  Result<LoopEnd> Run();

 private:
  struct Worker {
    ReceiveLoop* loop = nullptr;
    std::unique_ptr<char[]> buffer;  // made by its thread; pages are touched as used
    pthread_t thread{};
  };

  // Plain pthreads, as libfuse's loop has: they are ended by
  // pthread_cancel in their read, and hold nothing of their own there (the
  // buffer is the loop's).
  static void* WorkerMain(void* arg);
  // Starts the next worker unless all are running or the loop is ending;
  // 0, or pthread_create's errno.
  int StartWorker();
  void Serve(char* buffer);
  void Fail(int err);

  fuse_session* const session_;
  const ReceiveLoopOptions options_;
  const int fd_;
  sem_t finish_;  // posted by each worker as it ends
  std::atomic<bool> unmounted_{false};
  std::atomic<int> error_{0};    // the first errno that ended the loop
  std::atomic<int> idle_{0};     // workers in (or about to be in) their read
  std::vector<Worker> workers_;  // sized before any thread starts, never after
  std::mutex start_mu_;          // guards started_, ending_ and workers_[i].thread
  size_t started_ = 0;           // the first started_ workers run (or ran)
  bool ending_ = false;          // no worker is started any more
};

void* ReceiveLoop::WorkerMain(void* arg) {
  auto* worker = static_cast<Worker*>(arg);
  ReceiveLoop& loop = *worker->loop;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
  worker->buffer.reset(new (std::nothrow) char[loop.options_.buffer_size]);
  if (worker->buffer == nullptr) {
    loop.Fail(ENOMEM);
    sem_post(&loop.finish_);
    return nullptr;
  }
  loop.Serve(worker->buffer.get());
  return nullptr;
}

int ReceiveLoop::StartWorker() {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (ending_ || started_ == workers_.size()) return 0;
  // libfuse's workers block these too: a stop signal interrupts the
  // caller's wait (Run) instead of a read that would only be retried.
  sigset_t blocked, old;
  sigemptyset(&blocked);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&blocked, sig);
  pthread_sigmask(SIG_BLOCK, &blocked, &old);
  const int err =
      pthread_create(&workers_[started_].thread, nullptr, WorkerMain, &workers_[started_]);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (err != 0) return err;
  idle_.fetch_add(1);
  ++started_;
  return 0;
}

void ReceiveLoop::Serve(char* buffer) {
  while (!fuse_session_exited(session_)) {
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, nullptr);
    const ssize_t n = options_.read != nullptr
                          ? options_.read(fd_, buffer, options_.buffer_size, options_.context)
                          : read(fd_, buffer, options_.buffer_size);
    const int err = errno;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, nullptr);
    // As in libfuse's loop: a request read once a stop was asked for is
    // left to the kernel, which fails it when the connection ends.
    if (fuse_session_exited(session_)) break;
    if (n < 0) {
      // ENOENT: the request was interrupted before it could be read.
      if (err == EINTR || err == EAGAIN || err == ENOENT) continue;
      if (err == ENODEV) {
        unmounted_.store(true);
        fuse_session_exit(session_);
      } else {
        Fail(err);
      }
      break;
    }
    if (static_cast<size_t>(n) < sizeof(fuse_in_header)) {
      Fail(EIO);
      break;
    }
    // Workers are started as libfuse's loop starts them: one more when
    // the last idle one takes a request (a forget, answered at once and
    // without a reply, does not count). The kernel wakes the longest-idle
    // reader for each request, so a worker that is never needed would only
    // make every request wake a colder thread (fs/fuse_workers.h).
    const auto* header = reinterpret_cast<const fuse_in_header*>(buffer);
    const bool forget = header->opcode == FUSE_FORGET || header->opcode == FUSE_BATCH_FORGET;
    if (!forget) {
      if (idle_.fetch_sub(1) == 1) {
        if (const int failed = StartWorker(); failed != 0) {  // fewer workers, still served
          Logger("fs")->warn("cannot start another FUSE worker: {}", strerror(failed));
        }
      }
    }
    fuse_buf buf{};
    buf.mem = buffer;
    buf.size = static_cast<size_t>(n);
    fuse_session_process_buf(session_, &buf);
    if (!forget) idle_.fetch_add(1);
  }
  sem_post(&finish_);
}

void ReceiveLoop::Fail(int err) {
  int none = 0;
  error_.compare_exchange_strong(none, err);
  fuse_session_exit(session_);
}

Result<LoopEnd> ReceiveLoop::Run() {
  if (const int err = StartWorker(); err != 0) Fail(err);
  while (!fuse_session_exited(session_)) {
    timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_nsec += kExitPollNs;
    if (deadline.tv_nsec >= 1'000'000'000) {
      deadline.tv_sec += 1;
      deadline.tv_nsec -= 1'000'000'000;
    }
    sem_clockwait(&finish_, CLOCK_MONOTONIC, &deadline);  // EINTR, ETIMEDOUT: look again
  }
  size_t started;
  {
    std::lock_guard<std::mutex> lock(start_mu_);
    ending_ = true;
    started = started_;
    for (size_t i = 0; i < started; ++i) pthread_cancel(workers_[i].thread);
  }
  for (size_t i = 0; i < started; ++i) pthread_join(workers_[i].thread, nullptr);
  if (const int err = error_.load(); err != 0) return ErrnoStatus(err, "FUSE receive loop");
  return unmounted_.load() ? LoopEnd::kUnmounted : LoopEnd::kExitRequested;
}

}  // namespace

Result<LoopEnd> RunReceiveLoop(fuse_session* session, const ReceiveLoopOptions& options) {
  if (options.workers == 0 || options.buffer_size < sizeof(fuse_in_header)) {
    return Status::Error(EINVAL, "FUSE receive loop: no workers or no buffer");
  }
  ReceiveLoop loop(session, options);
  return loop.Run();
}

}  // namespace sfs::fs
