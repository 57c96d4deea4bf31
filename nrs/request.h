// What the request scheduler knows about one data I/O request. nrs never
// looks inside the data: it classifies and orders requests by these fields.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace sfs::nrs {

using Clock = std::chrono::steady_clock;
using TimePoint = Clock::time_point;

enum class Op : uint8_t {
  kRead,
  kWrite,
  kTruncate,  // set the object size
  kPunch,     // deallocate a range, size unchanged
  kAllocate,  // preallocate a range (fallocate mode 0 or KEEP_SIZE)
  kSync,      // fsync / fdatasync of the object
  kDestroy,   // remove the object (after unlink)
  kSeek,      // find data or a hole (lseek SEEK_DATA / SEEK_HOLE)
  // Metadata operations, scheduled by the metadata service's NRS heads
  // (mdt/service.h); never sent to an OST.
  kLookup,
  kGetattr,
  kSetattr,
  kCreate,
  kMknod,
  kOpen,     // open and opendir
  kReaddir,  // readdir and readdirplus
  kMkdir,
  kRmdir,
  kUnlink,
  kRename,
  kLink,
  kSymlink,
  kReadlink,
};
inline constexpr Op kLastOp = Op::kReadlink;
const char* OpName(Op op);
// Whether the op is a metadata operation (served by the metadata service).
constexpr bool IsMetadata(Op op) { return op >= Op::kLookup; }
// Whether the op changes the object (write, truncate, punch, allocate).
constexpr bool Changes(Op op) {
  return op == Op::kWrite || op == Op::kTruncate || op == Op::kPunch || op == Op::kAllocate;
}

struct RequestInfo {
  Op op = Op::kRead;
  uint32_t ost = 0;
  uint64_t object_id = 0;
  uint64_t offset = 0;  // object offset
  uint64_t length = 0;  // bytes moved (0 for sync/destroy/truncate)
  uint32_t uid = 0;
  uint32_t gid = 0;
  uint32_t pid = 0;
  // Shared with the job id cache so a request does not copy the string.
  std::shared_ptr<const std::string> jobid;
  TimePoint arrival{};
};

class Policy;

// Base of every queued request. The scheduler borrows a Request* from Enqueue
// until it hands it back from Dequeue; ownership stays with the caller.
class Request {
 public:
  Request() = default;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  virtual ~Request() = default;

  RequestInfo info;

  // Scheduler bookkeeping; policies must not touch these.
  struct SchedulerState {
    void* stats = nullptr;        // the PolicyStats slot that queued it
    TimePoint dequeued{};         // when service started
    bool high_priority = false;   // queued on the high-priority head
    bool queued = false;          // held by a policy, not yet handed out
  } sched;

  // One pointer-sized slot a policy may use while it holds the request
  // (e.g. an intrusive list position). Reset to nullptr on dequeue.
  void* policy_data = nullptr;
};

}  // namespace sfs::nrs
