#include "ring/fuse_ring.h"

#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "common/log.h"
#include "ring/request_frame.h"
#include "ring/uapi.h"

namespace sfs::ring {
namespace {

// user_data of a queue's eventfd read; entries use their address, started
// reads and writes their StartedIo's with the low bit set.
constexpr uint64_t kEventTag = ~uint64_t{0};
constexpr uint64_t kIoBit = 1;
// Completions taken from the ring at once.
constexpr unsigned kCqeBatch = 32;

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

// One registered entry: its header and payload buffers in one mapping
// (ring/request_frame.h), and the request it holds while userspace has it.
struct Entry {
  FuseRing::Queue* queue = nullptr;
  char* memory = nullptr;
  size_t memory_size = 0;
  uapi::ReqHeader* header = nullptr;  // at memory
  char* payload = nullptr;            // memory + one page
  iovec iov[2]{};                     // what the registration names
  // The unique of the request being served, 0 while the kernel has the
  // entry. Written by the queue's thread before it serves the request,
  // cleared by whoever stores the reply; read by any thread finding the
  // entry of a reply.
  std::atomic<uint64_t> unique{0};
  // Queue thread only:
  uint64_t commit_id = 0;  // of the request whose reply is to be committed
  uint32_t last_cmd = 0;   // resubmitted as it was after EAGAIN/EINTR
  bool dead = false;       // the kernel ended it (connection gone, cancelled)
};

class FuseRing::Queue {
 public:
  unsigned qid = 0;
  io_uring ring{};
  bool ring_made = false;
  int event_fd = -1;
  uint64_t event_value = 0;  // the eventfd read's target; queue thread only
  std::vector<std::unique_ptr<Entry>> entries;
  size_t dead = 0;  // entries with dead set; queue thread only
  size_t io_in_flight = 0;  // StartIo's not yet done; queue thread only
  std::mutex pending_mu;
  // Entries whose reply another thread stored, to be committed by the
  // queue's thread. GUARDED_BY(pending_mu)
  std::vector<Entry*> pending;
  std::thread thread;
};

struct FuseRing::State {
  Options options;
  std::vector<std::unique_ptr<Queue>> queues;
  int dev_fd = -1;  // written before the threads are released (start_mu), never after
  std::mutex start_mu;           // guards started, stopping
  std::condition_variable start_cv;
  bool started = false;
  bool stopping = false;
  std::atomic<bool> stop_requested{false};
  std::atomic<bool> serving{false};
  std::atomic<bool> routing{false};  // Start ran: replies may be the ring's
  std::atomic<bool> accepting{true};  // new requests are served (StopServing)
  std::atomic<int> in_serve{0};       // queue threads inside Options::serve
  std::atomic<uint64_t> served{0}, replied_local{0}, replied_handed{0}, bad_requests{0};
  std::atomic<uint64_t> io_started{0};
};

namespace {

thread_local Entry* tls_serving = nullptr;            // inside Options::serve
thread_local FuseRing::Queue* tls_queue = nullptr;  // the queue this thread owns
thread_local FuseRing::State* tls_state = nullptr;  // its ring

// A read or write in flight on a queue's io_uring, and whom to tell.
struct StartedIo {
  Entry* entry;  // of the request that started it
  IoCompletion* done;
};
static_assert(alignof(StartedIo) > kIoBit);

io_uring_sqe* TakeSqe(FuseRing::Queue& queue) {
  io_uring_sqe* sqe = io_uring_get_sqe(&queue.ring);
  if (sqe == nullptr) {
    // Cannot happen while the SQ has a slot per entry plus the eventfd's
    // (each entry has at most one command in flight); submit and retry.
    io_uring_submit(&queue.ring);
    sqe = io_uring_get_sqe(&queue.ring);
  }
  return sqe;
}

void PrepCommand(FuseRing::Queue& queue, Entry& entry, int dev_fd, uint32_t cmd) {
  io_uring_sqe* sqe = TakeSqe(queue);
  if (sqe == nullptr) {
    Logger("ring")->error("FUSE ring queue {}: no submission slot; entry lost", queue.qid);
    entry.dead = true;
    ++queue.dead;
    return;
  }
  std::memset(sqe, 0, 2 * sizeof(io_uring_sqe));  // a 128-byte SQE spans two
  sqe->opcode = IORING_OP_URING_CMD;
  sqe->fd = dev_fd;
  sqe->cmd_op = cmd;
  io_uring_sqe_set_data64(sqe, reinterpret_cast<uint64_t>(&entry));
  auto* req = reinterpret_cast<uapi::CmdReq*>(sqe->cmd);
  req->qid = static_cast<uint16_t>(queue.qid);
  if (cmd == uapi::kCmdRegister) {
    sqe->addr = reinterpret_cast<uint64_t>(entry.iov);
    sqe->len = 2;
  } else {
    req->commit_id = entry.commit_id;
  }
  entry.last_cmd = cmd;
}

void ArmEventRead(FuseRing::Queue& queue) {
  io_uring_sqe* sqe = TakeSqe(queue);
  if (sqe == nullptr) return;
  std::memset(sqe, 0, 2 * sizeof(io_uring_sqe));
  io_uring_prep_read(sqe, queue.event_fd, &queue.event_value, sizeof(queue.event_value), 0);
  io_uring_sqe_set_data64(sqe, kEventTag);
}

void FreeEntry(Entry& entry) {
  if (entry.memory != nullptr) munmap(entry.memory, entry.memory_size);
  entry.memory = nullptr;
}

}  // namespace

namespace {

// How long a queue thread waits, once a stop was asked for, for the reads
// and writes it started to end.
constexpr std::chrono::seconds kStopGrace{10};

class QueueRunner {
 public:
  QueueRunner(FuseRing::State& state, FuseRing::Queue& queue) : state_(state), queue_(queue) {}
  void Run();

 private:
  void Handle(io_uring_cqe* cqe);
  void Serve(Entry& entry);
  FuseRing::State& state_;
  FuseRing::Queue& queue_;
  bool stop_ = false;
};

void QueueRunner::Run() {
  const std::string name = "fuse-ring-" + std::to_string(queue_.qid);
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  // The caller of a request runs on this CPU: its queue's thread beside it
  // saves a wake-up on the other CPU (libfuse's queues do the same). A
  // cpuset without this CPU leaves the thread where it is.
  if (queue_.qid < CPU_SETSIZE) {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(queue_.qid, &cpus);
    sched_setaffinity(0, sizeof(cpus), &cpus);
  }
  // This thread only (a Linux thread is a process to setpriority).
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), state_.options.queue_nice) != 0 &&
      queue_.qid == 0) {
    Logger("ring")->info("FUSE ring: queue threads keep the daemon's priority, not nice {} ({})",
                         state_.options.queue_nice, strerror(errno));
  }
  {
    std::unique_lock<std::mutex> lock(state_.start_mu);
    state_.start_cv.wait(lock, [&] { return state_.started || state_.stopping; });
    if (state_.stopping) return;
  }
  tls_queue = &queue_;
  tls_state = &state_;
  const int dev_fd = state_.dev_fd;
  for (auto& entry : queue_.entries) PrepCommand(queue_, *entry, dev_fd, uapi::kCmdRegister);
  ArmEventRead(queue_);
  io_uring_cqe* batch[kCqeBatch];
  // A read or write in flight (StartIo) still ends, so its op finishes and
  // its OST gets its inline slot back, when every entry died or a stop was
  // asked for. After a stop it has kStopGrace: a disk that hangs must not
  // hang the unmount too.
  std::optional<std::chrono::steady_clock::time_point> stop_deadline;
  while ((!stop_ && queue_.dead < queue_.entries.size()) || queue_.io_in_flight > 0) {
    int submitted = 0;
    if (stop_) {
      const auto now = std::chrono::steady_clock::now();
      if (!stop_deadline) stop_deadline = now + kStopGrace;
      if (now >= *stop_deadline) {
        Logger("ring")->error(
            "FUSE ring queue {}: {} reads or writes on OSTs did not end within {} s of the "
            "stop; left unfinished (their OSTs do not answer)",
            queue_.qid, queue_.io_in_flight,
            std::chrono::duration_cast<std::chrono::seconds>(kStopGrace).count());
        break;
      }
      __kernel_timespec wait{0, 100'000'000};
      io_uring_cqe* first = nullptr;
      submitted = io_uring_submit_and_wait_timeout(&queue_.ring, &first, 1, &wait, nullptr);
      if (submitted == -ETIME) continue;
    } else {
      submitted = io_uring_submit_and_wait(&queue_.ring, 1);
    }
    if (submitted < 0 && submitted != -EINTR && submitted != -EAGAIN && submitted != -EBUSY) {
      Logger("ring")->error("FUSE ring queue {}: io_uring_enter failed: {}", queue_.qid,
                            strerror(-submitted));
      break;
    }
    const unsigned n = io_uring_peek_batch_cqe(&queue_.ring, batch, kCqeBatch);
    for (unsigned i = 0; i < n; ++i) {
      Handle(batch[i]);
      // A reply made while serving waits for the next submission: send it
      // now if other requests of the batch are still to be served.
      if (i + 1 < n && io_uring_sq_ready(&queue_.ring) > 0) io_uring_submit(&queue_.ring);
    }
    io_uring_cq_advance(&queue_.ring, n);
  }
  tls_queue = nullptr;
  tls_state = nullptr;
}

void QueueRunner::Handle(io_uring_cqe* cqe) {
  const uint64_t data = io_uring_cqe_get_data64(cqe);
  const int res = cqe->res;
  if (data != kEventTag && (data & kIoBit) != 0) {
    std::unique_ptr<StartedIo> io(reinterpret_cast<StartedIo*>(data & ~kIoBit));
    --queue_.io_in_flight;
    // As the request that started it: its reply finds the entry at once.
    tls_serving = io->entry;
    io->done->IoDone(res);
    tls_serving = nullptr;
    return;
  }
  if (data == kEventTag) {
    std::vector<Entry*> replies;
    {
      std::lock_guard<std::mutex> lock(queue_.pending_mu);
      replies.swap(queue_.pending);
    }
    for (Entry* entry : replies) {
      PrepCommand(queue_, *entry, state_.dev_fd, uapi::kCmdCommitAndFetch);
      state_.replied_handed.fetch_add(1, std::memory_order_relaxed);
    }
    if (state_.stop_requested.load()) {
      stop_ = true;
      return;
    }
    if (res < 0 && res != -EINTR && res != -EAGAIN) {
      Logger("ring")->error("FUSE ring queue {}: eventfd read failed: {}", queue_.qid,
                            strerror(-res));
    }
    ArmEventRead(queue_);
    return;
  }
  Entry& entry = *reinterpret_cast<Entry*>(data);
  if (res == 0) return Serve(entry);
  if (res == -EAGAIN || res == -EINTR) {
    return PrepCommand(queue_, entry, state_.dev_fd, entry.last_cmd);
  }
  // The connection ended (unmount, abort: ENOTCONN, ECONNABORTED) or the
  // ring is closing (ECANCELED): the entry is done. Anything else is a
  // refusal the kernel logs too; it then serves this mount over /dev/fuse.
  entry.dead = true;
  ++queue_.dead;
  if (res != -ENOTCONN && res != -ECONNABORTED && res != -ECANCELED) {
    state_.serving.store(false);
    Logger("ring")->error("FUSE ring queue {}: the kernel refused a {} command: {}", queue_.qid,
                          entry.last_cmd == uapi::kCmdRegister ? "register" : "commit",
                          strerror(-res));
  }
}

void QueueRunner::Serve(Entry& entry) {
  const size_t capacity = state_.options.payload_size;
  auto frame = AssembleRequest(*entry.header, entry.payload, capacity);
  if (!frame.ok()) {
    // Answered here: the kernel ends the request with the error.
    state_.bad_requests.fetch_add(1, std::memory_order_relaxed);
    Logger("ring")->error("{}", frame.status().ToString());
    entry.commit_id = entry.header->ring_ent_in_out.commit_id;
    fuse_out_header out{sizeof(fuse_out_header), -EIO, entry.commit_id};
    std::memcpy(entry.header->in_out, &out, sizeof(out));
    entry.header->ring_ent_in_out.payload_sz = 0;
    return PrepCommand(queue_, entry, state_.dev_fd, uapi::kCmdCommitAndFetch);
  }
  // Counted in before looking at `accepting` (both sequentially
  // consistent): StopServing either stops this request or waits for it.
  state_.in_serve.fetch_add(1);
  if (!state_.accepting.load()) {
    state_.in_serve.fetch_sub(1);
    return;  // left to the kernel, as StopServing says
  }
  entry.commit_id = frame->unique;
  entry.unique.store(frame->unique, std::memory_order_release);
  state_.served.fetch_add(1, std::memory_order_relaxed);
  tls_serving = &entry;
  state_.options.serve(state_.options.context, frame->data, frame->size);
  tls_serving = nullptr;
  state_.in_serve.fetch_sub(1);
}

}  // namespace

FuseRing::FuseRing(const Options& options) : state_(std::make_unique<State>()) {
  state_->options = options;
}

Result<std::unique_ptr<FuseRing>> FuseRing::Create(const Options& options) {
  if (options.queues == 0 || options.queue_depth == 0 || options.serve == nullptr ||
      options.payload_size < 8192) {
    return Status::Error(EINVAL, "FUSE ring: no queues, no depth, no payload or no server");
  }
  std::unique_ptr<FuseRing> ring(new FuseRing(options));
  State& state = *ring->state_;
  const size_t page = PageSize();
  const size_t payload = (options.payload_size + page - 1) / page * page;
  for (unsigned qid = 0; qid < options.queues; ++qid) {
    auto queue = std::make_unique<Queue>();
    queue->qid = qid;
    Queue& q = *queue;
    state.queues.push_back(std::move(queue));
    io_uring_params params{};
    params.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQSIZE;
    params.cq_entries = 2 * (options.queue_depth + 1);
    if (int err = io_uring_queue_init_params(options.queue_depth + 1, &q.ring, &params); err < 0) {
      return Status::Error(-err, std::string("FUSE ring: io_uring setup: ") + strerror(-err));
    }
    q.ring_made = true;
    q.event_fd = eventfd(0, EFD_CLOEXEC);
    if (q.event_fd < 0) return ErrnoStatus(errno, "FUSE ring: eventfd");
    for (unsigned i = 0; i < options.queue_depth; ++i) {
      auto entry = std::make_unique<Entry>();
      entry->queue = &q;
      entry->memory_size = page + payload;
      // Untouched pages cost nothing: an entry's payload becomes memory as
      // requests that large use it (the kernel hands out the entry freed
      // last first, so a few stay warm).
      void* memory = mmap(nullptr, entry->memory_size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (memory == MAP_FAILED) return ErrnoStatus(errno, "FUSE ring: buffers");
      entry->memory = static_cast<char*>(memory);
      entry->header = new (entry->memory) uapi::ReqHeader{};
      entry->payload = entry->memory + page;
      static_assert(sizeof(uapi::ReqHeader) + kFrameRoom <= 4096);
      entry->iov[0] = {entry->header, sizeof(uapi::ReqHeader)};
      entry->iov[1] = {entry->payload, payload};
      q.entries.push_back(std::move(entry));
    }
  }
  state.options.payload_size = payload;
  // Threads last: each waits for Start, so a failure above leaves none.
  for (auto& queue : state.queues) {
    sigset_t blocked, old;
    sigemptyset(&blocked);
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) sigaddset(&blocked, sig);
    pthread_sigmask(SIG_BLOCK, &blocked, &old);
    Queue* q = queue.get();
    try {
      q->thread = std::thread([&state, q] { QueueRunner(state, *q).Run(); });
    } catch (const std::system_error& e) {
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
      return Status::Error(EAGAIN, std::string("FUSE ring: thread: ") + e.what());
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  return ring;
}

void FuseRing::Start(int dev_fd) {
  {
    std::lock_guard<std::mutex> lock(state_->start_mu);
    if (state_->started || state_->stopping) return;
    state_->dev_fd = dev_fd;
    state_->started = true;
  }
  state_->routing.store(true);
  state_->serving.store(true);
  state_->start_cv.notify_all();
}

std::optional<ssize_t> FuseRing::Reply(const iovec* iov, int count) {
  if (!state_->routing.load(std::memory_order_acquire)) return std::nullopt;
  const uint64_t unique = ReplyUnique(iov, count);
  if (unique == 0) return std::nullopt;
  Entry* entry = nullptr;
  if (tls_serving != nullptr && tls_serving->unique.load(std::memory_order_acquire) == unique) {
    entry = tls_serving;
  } else {
    // A reply from another thread (or for another request than the one
    // this thread serves): the entries are few (queues x depth), a scan
    // costs less than a shared table every request would update.
    for (auto& queue : state_->queues) {
      for (auto& candidate : queue->entries) {
        if (candidate->unique.load(std::memory_order_acquire) == unique) {
          entry = candidate.get();
          break;
        }
      }
      if (entry != nullptr) break;
    }
  }
  if (entry == nullptr) return std::nullopt;
  auto stored = StoreReply(iov, count, *entry->header, entry->payload,
                           state_->options.payload_size);
  if (!stored.ok()) {
    errno = stored.err();
    return -1;  // the entry stays the request's; libfuse logs the failed reply
  }
  entry->unique.store(0, std::memory_order_release);
  Queue& queue = *entry->queue;
  if (tls_queue == &queue) {
    PrepCommand(queue, *entry, state_->dev_fd, uapi::kCmdCommitAndFetch);
    state_->replied_local.fetch_add(1, std::memory_order_relaxed);
  } else {
    bool wake;
    {
      std::lock_guard<std::mutex> lock(queue.pending_mu);
      wake = queue.pending.empty();  // else a wake-up is already on its way
      queue.pending.push_back(entry);
    }
    if (wake) {
      const uint64_t one = 1;
      (void)!write(queue.event_fd, &one, sizeof(one));
    }
  }
  return static_cast<ssize_t>(*stored);
}

std::span<char> FuseRing::CurrentPayload() {
  if (tls_serving == nullptr || tls_queue == nullptr) return {};
  return {tls_serving->payload, tls_serving->iov[1].iov_len};
}

bool FuseRing::OnQueueThread() { return tls_queue != nullptr; }

bool FuseRing::StartIo(Direction direction, int fd, const iovec* iov, int count,
                       uint64_t offset, IoCompletion* done) {
  if (tls_queue == nullptr || tls_serving == nullptr || count <= 0 || count > IOV_MAX) {
    return false;
  }
  io_uring_sqe* sqe = TakeSqe(*tls_queue);
  if (sqe == nullptr) return false;
  std::memset(sqe, 0, 2 * sizeof(io_uring_sqe));
  if (direction == Direction::kRead) {
    io_uring_prep_readv(sqe, fd, iov, static_cast<unsigned>(count), offset);
  } else {
    io_uring_prep_writev(sqe, fd, iov, static_cast<unsigned>(count), offset);
  }
  auto* io = new StartedIo{tls_serving, done};
  io_uring_sqe_set_data64(sqe, reinterpret_cast<uint64_t>(io) | kIoBit);
  ++tls_queue->io_in_flight;
  tls_state->io_started.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void FuseRing::StopServing() {
  state_->accepting.store(false);
  while (state_->in_serve.load() != 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void FuseRing::Stop() {
  {
    std::lock_guard<std::mutex> lock(state_->start_mu);
    if (state_->stopping) return;
    state_->stopping = true;
  }
  // From here a reply is not the ring's: one that comes after all (none
  // should, REQUIRES above) goes to /dev/fuse, which refuses it.
  state_->routing.store(false);
  state_->stop_requested.store(true);
  state_->serving.store(false);
  state_->start_cv.notify_all();
  for (auto& queue : state_->queues) {
    if (queue->event_fd >= 0) {
      const uint64_t one = 1;
      (void)!write(queue->event_fd, &one, sizeof(one));
    }
  }
  for (auto& queue : state_->queues) {
    if (queue->thread.joinable()) queue->thread.join();
  }
  // Closing an io_uring cancels the commands it still has in the kernel;
  // the kernel keeps no use of the buffers after that.
  for (auto& queue : state_->queues) {
    if (queue->ring_made) io_uring_queue_exit(&queue->ring);
    queue->ring_made = false;
    if (queue->event_fd >= 0) close(queue->event_fd);
    queue->event_fd = -1;
  }
}

FuseRing::~FuseRing() {
  Stop();
  // Only now: a Reply that looked before Stop may still be storing into
  // its entry.
  for (auto& queue : state_->queues) {
    for (auto& entry : queue->entries) FreeEntry(*entry);
  }
}

bool FuseRing::serving() const { return state_->serving.load(); }

RingCounters FuseRing::counters() const {
  RingCounters c;
  c.served = state_->served.load();
  c.replied_local = state_->replied_local.load();
  c.io_started = state_->io_started.load();
  c.replied_handed = state_->replied_handed.load();
  c.bad_requests = state_->bad_requests.load();
  return c;
}

const Options& FuseRing::options() const { return state_->options; }

unsigned PossibleCpus() {
  // "0-1", "0-3,8-11": the kernel makes a queue for each, numbered as
  // the CPUs (num_possible_cpus counts them; ids are dense in practice).
  std::ifstream in("/sys/devices/system/cpu/possible");
  std::string text;
  if (!std::getline(in, text) || text.empty()) return 0;
  unsigned count = 0;
  size_t at = 0;
  while (at < text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    const std::string range = text.substr(at, comma - at);
    const size_t dash = range.find('-');
    try {
      const unsigned first = static_cast<unsigned>(std::stoul(range.substr(0, dash)));
      const unsigned last =
          dash == std::string::npos ? first : static_cast<unsigned>(std::stoul(range.substr(dash + 1)));
      if (last < first) return 0;
      count += last - first + 1;
    } catch (const std::exception&) {
      return 0;
    }
    at = comma + 1;
  }
  return count;
}

Availability Probe() {
  Availability a;
  std::ifstream param(uapi::kEnableParam);
  if (!param) {
    a.why_not = "this kernel has no FUSE over io_uring (Linux 6.14+ built with "
                "CONFIG_FUSE_IO_URING; no " + std::string(uapi::kEnableParam) + ")";
    return a;
  }
  a.built = true;
  std::string value;
  param >> value;
  a.enabled = value == "Y" || value == "1";
  if (!a.enabled) {
    a.why_not = std::string(uapi::kEnableParam) +
                " is off (root: echo 1 > it, or fuse.enable_uring=1 at boot)";
    return a;
  }
  io_uring ring;
  io_uring_params params{};
  params.flags = IORING_SETUP_SQE128;
  if (int err = io_uring_queue_init_params(2, &ring, &params); err < 0) {
    a.why_not = std::string("io_uring with 128-byte SQEs cannot be set up: ") + strerror(-err) +
                " (see /proc/sys/kernel/io_uring_disabled)";
    return a;
  }
  io_uring_queue_exit(&ring);
  a.usable = true;
  return a;
}

}  // namespace sfs::ring
