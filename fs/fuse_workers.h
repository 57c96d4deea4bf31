// How many threads serve FUSE requests: a rule of the machine's CPUs, not a
// constant (issue 33). Header-only so the integration tests bound the
// daemon's threads by the same rule.
#pragma once

#include <sched.h>

#include <algorithm>

namespace sfs::fs {

// CPUs this process may run on (its affinity mask: taskset, a cgroup
// cpuset), at least 1. The daemon and a test started beside it agree.
inline unsigned UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

// The receive loop's worker limit (fs/fuse_loop.h), which is also the
// metadata requests in service at once (mdt::ServiceOptions::max_active):
// two per CPU, at least 4. On the 2-CPU machine it was tuned on that is the
// 4 measured best (16 made every request wake a cold thread, 2 was no
// faster: docs/design.md, "Fewer FUSE workers"); a worker blocked in a
// store read or an inline OST request then leaves its CPU to the other. It
// grows with the CPUs so that N processes on N CPUs find a worker each.
// Workers are started only when every started one is busy, so a large
// limit costs an idle mount nothing.
constexpr unsigned FuseWorkersFor(unsigned cpus) { return std::max(4u, 2 * cpus); }

}  // namespace sfs::fs
