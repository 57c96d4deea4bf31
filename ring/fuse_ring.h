// FUSE over io_uring (Linux 6.14+, Documentation/filesystems/fuse/
// fuse-io-uring.rst): the kernel hands requests to the daemon through
// per-CPU queues of io_uring commands instead of read(2) on /dev/fuse. Each
// queue has entries, each a header and a payload buffer the daemon
// registers (FUSE_IO_URING_CMD_REGISTER); a request arrives as the
// completion of its entry's command, and one submission
// (FUSE_IO_URING_CMD_COMMIT_AND_FETCH) sends the reply and waits for the
// next request. A request goes to the queue of the CPU its caller runs on.
//
// One thread per queue, pinned to its CPU, owns the queue's io_uring: it
// alone submits. It serves each request it is handed by calling
// Options::serve on its own thread, with the request laid out as /dev/fuse
// would have delivered it (ring/request_frame.h). The reply comes back
// through Reply, from that thread (it is committed at once) or from any
// other (a request that had to wait, finished by an OST thread: the reply
// is stored in its entry and the queue's thread is woken by an eventfd to
// commit it). An entry belongs to its request until the reply, so the
// queue depth bounds the requests of one CPU the daemon can hold at once;
// the kernel keeps the rest queued in order.
//
// The kernel still uses /dev/fuse for INIT, FORGET, INTERRUPT and the
// daemon's notifications, so the /dev/fuse loop keeps running beside the
// ring (fs/fuse_loop.h).
//
// Life: Create (before the INIT reply: if it fails, the reply does not
// offer the ring and the mount serves over /dev/fuse), then Start right
// after the INIT reply carrying FUSE_OVER_IO_URING went out (the kernel
// holds every request until each queue has an entry registered), then Stop
// once no request is in flight (the mount's Quiesce) and before /dev/fuse
// is closed: a command still in the kernel holds the device open.
//
// Thread safety: Reply and CurrentPayload from any thread; Create, Start
// and Stop from one thread, in that order.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "common/status.h"

namespace sfs::ring {

// Whether this kernel lets a daemon use FUSE over io_uring now.
struct Availability {
  bool built = false;    // the kernel has it (CONFIG_FUSE_IO_URING: the parameter exists)
  bool enabled = false;  // the admin turned it on (enable_uring = Y)
  bool usable = false;   // built, enabled, and this process can set up a 128-byte-SQE io_uring
  std::string why_not;   // for the log, when !usable
};
Availability Probe();

// The CPUs the kernel makes a queue for (num_possible_cpus:
// /sys/devices/system/cpu/possible); 0 if that cannot be read.
unsigned PossibleCpus();

struct Options {
  unsigned queues = 0;      // one per possible CPU (PossibleCpus)
  unsigned queue_depth = 0;  // entries per queue
  // Bytes of each payload buffer; the kernel refuses less than
  // max(8 KiB, max_write, max_pages * page size) of the INIT reply.
  size_t payload_size = 0;
  // Serves one request laid out as read(2) from /dev/fuse gives it
  // (`size` bytes at `request`), on the queue's thread; its reply must
  // come back through Reply, on any thread, exactly once. `request` stays
  // valid until then.
  void (*serve)(void* context, char* request, size_t size) = nullptr;
  void* context = nullptr;
  // The queue threads' nice value. A queue thread is the only server of
  // its CPU's requests (the kernel files each request on its caller's
  // CPU's queue), so while it waits for that CPU behind the callers
  // themselves, every caller there waits too, and callers on the other
  // CPUs run ahead: readers that should move together drift apart
  // (docs/design.md, "ORR over the ring"), so the mount lowers it
  // (MountOptions::uring_nice). Lowering it needs CAP_SYS_NICE; without it
  // the threads keep the daemon's (logged once). 0: the daemon's.
  int queue_nice = 0;
};

// Told when a read or write a queue thread started (FuseRing::StartIo) is
// done.
class IoCompletion {
 public:
  // On the queue's thread, as the request whose serve started it (so its
  // reply commits at once). `result`: bytes moved (a read returns short
  // only at the end of the file), or -errno.
  virtual void IoDone(int result) = 0;

 protected:
  ~IoCompletion() = default;
};

struct RingCounters {
  uint64_t served = 0;         // requests handed to serve
  uint64_t io_started = 0;  // reads and writes StartIo started
  uint64_t replied_local = 0;  // replies committed on the queue's own thread
  uint64_t replied_handed = 0;  // replies from other threads, committed by the queue's thread
  uint64_t bad_requests = 0;   // requests answered EIO without serving (ring/request_frame.h)
};

class FuseRing {
 public:
  // Sets up the queues (their io_urings, eventfds, buffers) and their
  // threads, which wait for Start. Nothing is sent to the kernel yet.
  static Result<std::unique_ptr<FuseRing>> Create(const Options& options);
  ~FuseRing();  // Stop, if it was not called
  FuseRing(const FuseRing&) = delete;
  FuseRing& operator=(const FuseRing&) = delete;

  // Registers every entry of every queue on the FUSE connection of
  // `dev_fd` and starts serving. Call once, after the INIT reply that
  // granted FUSE_OVER_IO_URING was written.
  void Start(int dev_fd);

  // If the reply (iov as a fuse_custom_io writev hook gets it) answers a
  // request this ring is serving, stores and commits it and returns the
  // bytes it had (or -1 with errno for a malformed reply); else returns
  // nothing and does nothing (the reply is for /dev/fuse). Any thread.
  std::optional<ssize_t> Reply(const iovec* iov, int count);

  // The payload buffer of the request the calling thread is serving for a
  // queue (inside Options::serve), else empty. A reply whose argument is
  // this buffer (say, a read's bytes, read straight into it) is not
  // copied. The buffer is the request's until its reply.
  static std::span<char> CurrentPayload();

  // Whether the calling thread is a queue's thread. It must never wait on
  // a disk: the kernel copies each new request of its queue in this very
  // thread's context (io_uring task work), so a queue thread stuck in a
  // hung disk's read stops every request of its CPU, where a stuck
  // /dev/fuse worker leaves the others serving.
  static bool OnQueueThread();

  // Inside Options::serve (or IoCompletion::IoDone) on a queue's thread:
  // starts a read of `fd` at `offset` into `iov` (count <= IOV_MAX), or a
  // write of `iov` there, on the queue's own io_uring and returns at once,
  // so the thread never waits on the disk itself (see OnQueueThread; a
  // write the filesystem cannot do without waiting is done by one of the
  // kernel's io_uring workers); `done` is told on this thread, later.
  // False, and nothing started, anywhere else. `fd`, `iov` and the buffers
  // stay valid until then. A full submission queue is submitted first to
  // make room (as for every command); how many are in flight at once is
  // bounded by the caller (an OST starts one at a time: its inline slot,
  // ost::Service::SubmitOrStart), and a completion queue that fills keeps
  // the rest in the kernel (IORING_FEAT_NODROP).
  // On Stop the queue thread waits a while for those still in flight.
  enum class Direction { kRead, kWrite };
  static bool StartIo(Direction direction, int fd, const iovec* iov, int count, uint64_t offset,
                      IoCompletion* done);

  // Serves no new request from now on (one that arrives is left to the
  // kernel, which fails it when the connection ends, as the /dev/fuse loop
  // leaves what it reads once a stop was asked for), and returns once no
  // queue thread is inside Options::serve. Replies still commit. So that
  // the mount's Quiesce, after this, sees every op there will be.
  void StopServing();

  // Ends the queue threads and closes the io_urings, which cancels the
  // commands still waiting in the kernel. REQUIRES: no reply is still to
  // come (a later Reply finds nothing and returns -1).
  void Stop();

  // Whether Start ran and no queue has failed.
  bool serving() const;
  RingCounters counters() const;
  const Options& options() const;

  // Defined in fuse_ring.cc only.
  class Queue;
  struct State;

 private:
  explicit FuseRing(const Options& options);
  std::unique_ptr<State> state_;
};

}  // namespace sfs::ring
