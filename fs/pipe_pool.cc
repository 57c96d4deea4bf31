#include "fs/pipe_pool.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace sfs::fs {

Pipe::~Pipe() {
  close(read_fd_);
  close(write_fd_);
}

bool Pipe::Empty() const {
  int bytes = 0;
  return ioctl(read_fd_, FIONREAD, &bytes) == 0 && bytes == 0;
}

std::unique_ptr<Pipe> PipePool::Take() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!idle_.empty()) {
      std::unique_ptr<Pipe> pipe = std::move(idle_.back());
      idle_.pop_back();
      return pipe;
    }
    if (live_ >= max_pipes_) return nullptr;
    live_++;  // counted before it is made, so no burst passes the bound
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    live_--;
    return nullptr;
  }
  // A size above /proc/sys/fs/pipe-max-size is refused without
  // CAP_SYS_RESOURCE, and any past the user's pipe page quota: the pipe is
  // then smaller and the caller splices only reads that fit. Halved until
  // the system takes it.
  for (size_t want = capacity_; want >= 65536; want /= 2) {
    if (fcntl(fds[0], F_SETPIPE_SZ, static_cast<int>(want)) >= 0) break;
  }
  const int size = fcntl(fds[0], F_GETPIPE_SZ);
  const size_t capacity = size > 0 ? static_cast<size_t>(size) : 0;
  made_capacity_.store(capacity, std::memory_order_relaxed);
  return std::make_unique<Pipe>(fds[0], fds[1], capacity);
}

void PipePool::Give(std::unique_ptr<Pipe> pipe) {
  if (pipe == nullptr) return;
  const bool empty = pipe->Empty();
  std::lock_guard<std::mutex> lock(mu_);
  if (empty && idle_.size() < keep_) {
    idle_.push_back(std::move(pipe));
    return;
  }
  live_--;
  pipe.reset();  // closed under the lock: live_ never undercounts what is open
}

}  // namespace sfs::fs
