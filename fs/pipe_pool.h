// Pipes for zero-copy read replies. A read's bytes are spliced from its
// object files into a pipe per part (ost::IoRequest::pipe), and libfuse
// splices them on into /dev/fuse (fuse_reply_data): the kernel copies each
// byte once, from the object's page cache into the FUSE file's, instead of
// twice through a user-space buffer (pread, then writev).
//
// A pipe is taken per part and given back once the reply went out; one
// that still holds bytes (a reply that failed half-way) is closed instead,
// so a pooled pipe is always empty. Making a pipe costs two descriptors
// and a fcntl, so up to `keep` idle pipes are kept; at most `max_pipes`
// exist at once, taken or idle, so their descriptors have a bound that the
// daemon's descriptor budget reserves (fs/fd_budget.h).
//
// Thread safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace sfs::fs {

class Pipe {
 public:
  Pipe(int read_fd, int write_fd, size_t capacity)
      : read_fd_(read_fd), write_fd_(write_fd), capacity_(capacity) {}
  ~Pipe();
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  int read_fd() const { return read_fd_; }
  int write_fd() const { return write_fd_; }
  // Bytes it holds without a writer waiting (F_GETPIPE_SZ).
  size_t capacity() const { return capacity_; }
  // Holds no bytes (FIONREAD); false also when that cannot be asked.
  bool Empty() const;

 private:
  const int read_fd_;
  const int write_fd_;
  const size_t capacity_;
};

class PipePool {
 public:
  // Pipes are asked for `capacity` bytes (rounded up by the kernel; less
  // where the system's pipe limits refuse it, see Pipe::capacity).
  PipePool(size_t capacity, size_t keep, size_t max_pipes)
      : capacity_(capacity), keep_(keep), max_pipes_(max_pipes) {}
  // An empty pipe, pooled or new; null if max_pipes exist already or none
  // can be made: the caller reads through a buffer instead.
  std::unique_ptr<Pipe> Take();
  // Back to the pool if it is empty and the pool has room, else closed.
  void Give(std::unique_ptr<Pipe> pipe);
  // The capacity the system gave the latest pipe made; 0 before the first.
  // A read that would not fit it can skip taking pipes at all.
  size_t made_capacity() const { return made_capacity_.load(std::memory_order_relaxed); }

 private:
  const size_t capacity_;
  const size_t keep_;
  const size_t max_pipes_;
  std::mutex mu_;                           // guards idle_ and live_
  std::vector<std::unique_ptr<Pipe>> idle_;  // GUARDED_BY(mu_); all empty
  size_t live_ = 0;                         // GUARDED_BY(mu_); taken or idle
  std::atomic<size_t> made_capacity_{0};
};

}  // namespace sfs::fs
