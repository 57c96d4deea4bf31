#include "fs/fd_budget.h"

#include <sys/resource.h>

#include <algorithm>

#include "metrics/http_server.h"

namespace sfs::fs {
namespace {

constexpr uint64_t kFixed = 64;      // libraries, FUSE, log, lock, stdio
constexpr uint64_t kPerOst = 8;      // directory, Asio reactor, timers
constexpr uint64_t kTransient = 64;  // /proc reads, WAL, manifest, temp files
constexpr uint64_t kPipes = 2 * kMaxReadPipes;
// The metrics server's listener and its connections (-o metrics=); kept
// whether or not it runs, so the split does not depend on it.
constexpr uint64_t kMetricsSockets = metrics::HttpServer::kMaxConnections + 1;
constexpr uint64_t kMaxObjectsTotal = 1 << 16;

}  // namespace

FdBudget SplitDescriptors(uint64_t limit, size_t osts, int threads_per_ost) {
  FdBudget budget;
  budget.limit = limit;
  const uint64_t n = std::max<size_t>(osts, 1);
  budget.rocksdb_files = static_cast<int>(std::clamp<uint64_t>(limit / 8, 20, 1000));
  const uint64_t reserved = kFixed + kTransient + kPipes + kMetricsSockets +
                            n * (kPerOst + std::max(threads_per_ost, 1)) +
                            static_cast<uint64_t>(budget.rocksdb_files);
  const uint64_t objects = limit > reserved ? std::min(limit - reserved, kMaxObjectsTotal) : 0;
  budget.objects_per_ost = static_cast<size_t>(std::max<uint64_t>(objects / n, 4));
  return budget;
}

uint64_t RaiseDescriptorLimit() {
  rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? kMaxObjectsTotal * 2 : limit.rlim_cur;
}

}  // namespace sfs::fs
