// liblockprof.so: a mutex profiler loaded with LD_PRELOAD, in the manner of
// mutrace (which Debian 12 does not ship; `perf lock` here sees only kernel
// locks, and valgrind's drd/helgrind slow the daemon by 50-100x, which
// changes what contends). It wraps pthread_mutex_lock/trylock/unlock and
// pthread_cond_wait/timedwait/clockwait (a wait releases and retakes its
// mutex) and keeps, per mutex: acquisitions, how many found it taken, the
// time callers waited for it, and the time it was held, split by the
// function that took it (the lock's return address plus the next frames,
// once per call site). Cost: two clock reads and a few atomic adds per
// acquisition, shared counters per mutex.
//
// At process exit, or _exit (a FUSE daemon exits after its unmount), it writes to
// $LOCKPROF_OUT.<pid> (default /tmp/lockprof.<pid>) the mutexes held longest: per
// mutex the share of the wall time it was held, waits in total, counts, and
// its call sites as module+offset (tools/bench/scaling_bench.sh resolves
// them with addr2line). The wall time runs from the process's start, or
// from the moment $LOCKPROF_START_FILE (if set) appeared, checked every
// 100 ms; acquisitions before then are not counted.
//
// Only for measurement: it is built beside the benchmarks, never linked in.
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kSlots = 1 << 14;   // mutexes tracked (open addressing)
constexpr int kSites = 6;            // call sites kept per mutex
constexpr int kFrames = 4;           // frames kept per site
constexpr int kHeldDepth = 32;       // mutexes one thread may hold at once

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Site {
  std::atomic<uintptr_t> ret{0};  // the lock's return address; 0: free
  std::atomic<bool> ready{false};
  void* frames[kFrames] = {};  // written once by the thread that claimed it
  std::atomic<uint64_t> hold_ns{0};
  std::atomic<uint64_t> wait_ns{0};
  std::atomic<uint64_t> locks{0};
};

struct Entry {
  std::atomic<uintptr_t> key{0};  // the mutex's address; 0: free
  std::atomic<uint64_t> locks{0};
  std::atomic<uint64_t> contended{0};
  std::atomic<uint64_t> wait_ns{0};
  std::atomic<uint64_t> hold_ns{0};
  Site sites[kSites];
  std::atomic<uint64_t> other_hold_ns{0};  // sites beyond kSites
};

struct Held {
  void* mutex;
  uint64_t since;
  Site* site;
  Entry* entry;
};

Entry* g_table = nullptr;  // made once, never freed
void* g_self_base = nullptr;  // where this library is loaded
std::atomic<uint64_t> g_start_ns{0};
std::atomic<bool> g_active{false};
std::atomic<bool> g_dumped{false};
const char* g_start_file = nullptr;

using LockFn = int (*)(pthread_mutex_t*);
using CondWaitFn = int (*)(pthread_cond_t*, pthread_mutex_t*);
using CondTimedFn = int (*)(pthread_cond_t*, pthread_mutex_t*, const timespec*);
using CondClockFn = int (*)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*);
LockFn real_lock, real_trylock, real_unlock;
CondWaitFn real_cond_wait;
CondTimedFn real_cond_timedwait;
CondClockFn real_cond_clockwait;

thread_local Held t_held[kHeldDepth];
thread_local int t_depth = 0;
thread_local bool t_inside = false;  // our own calls (backtrace) pass straight through

void Resolve() {
  real_lock = reinterpret_cast<LockFn>(dlsym(RTLD_NEXT, "pthread_mutex_lock"));
  real_trylock = reinterpret_cast<LockFn>(dlsym(RTLD_NEXT, "pthread_mutex_trylock"));
  real_unlock = reinterpret_cast<LockFn>(dlsym(RTLD_NEXT, "pthread_mutex_unlock"));
  real_cond_wait =
      reinterpret_cast<CondWaitFn>(dlvsym(RTLD_NEXT, "pthread_cond_wait", "GLIBC_2.3.2"));
  real_cond_timedwait =
      reinterpret_cast<CondTimedFn>(dlvsym(RTLD_NEXT, "pthread_cond_timedwait", "GLIBC_2.3.2"));
  real_cond_clockwait =
      reinterpret_cast<CondClockFn>(dlsym(RTLD_NEXT, "pthread_cond_clockwait"));
}

Entry* Find(void* mutex) {
  const uintptr_t key = reinterpret_cast<uintptr_t>(mutex);
  size_t i = (key >> 4) * 0x9E3779B97F4A7C15ull >> 50;
  for (size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) & (kSlots - 1)) {
    uintptr_t seen = g_table[i].key.load(std::memory_order_acquire);
    if (seen == key) return &g_table[i];
    if (seen == 0 && g_table[i].key.compare_exchange_strong(seen, key)) return &g_table[i];
    if (seen == key) return &g_table[i];
  }
  return nullptr;  // table full: not counted
}

Site* SiteOf(Entry* entry, uintptr_t ret) {
  for (Site& site : entry->sites) {
    uintptr_t seen = site.ret.load(std::memory_order_acquire);
    if (seen == ret) return &site;
    if (seen == 0 && site.ret.compare_exchange_strong(seen, ret)) {
      t_inside = true;
      void* frames[kFrames + 8];
      const int n = backtrace(frames, kFrames + 8);
      // The first frames are the profiler's own.
      int kept = 0;
      for (int f = 0; f < n && kept < kFrames; ++f) {
        Dl_info info;
        if (dladdr(frames[f], &info) != 0 && info.dli_fbase == g_self_base) continue;
        site.frames[kept++] = frames[f];
      }
      t_inside = false;
      site.ready.store(true, std::memory_order_release);
      return &site;
    }
    if (seen == ret) return &site;
  }
  return nullptr;
}

bool Active() {
  if (g_active.load(std::memory_order_relaxed)) return true;
  if (g_start_file == nullptr || g_table == nullptr) return false;
  // Checked at most every 100 ms by whichever thread comes by.
  static std::atomic<uint64_t> next_check{0};
  const uint64_t now = NowNs();
  uint64_t due = next_check.load(std::memory_order_relaxed);
  if (now < due || !next_check.compare_exchange_strong(due, now + 100000000ull)) return false;
  if (access(g_start_file, F_OK) != 0) return false;
  g_start_ns.store(now);
  g_active.store(true);
  return true;
}

void Acquired(pthread_mutex_t* mutex, uintptr_t ret, uint64_t asked, bool contended) {
  if (t_inside || !Active() || t_depth >= kHeldDepth) return;
  Entry* entry = Find(mutex);
  if (entry == nullptr) return;
  const uint64_t now = NowNs();
  entry->locks.fetch_add(1, std::memory_order_relaxed);
  Site* site = SiteOf(entry, ret);
  if (contended) {
    entry->contended.fetch_add(1, std::memory_order_relaxed);
    entry->wait_ns.fetch_add(now - asked, std::memory_order_relaxed);
    if (site != nullptr) site->wait_ns.fetch_add(now - asked, std::memory_order_relaxed);
  }
  if (site != nullptr) site->locks.fetch_add(1, std::memory_order_relaxed);
  t_held[t_depth++] = Held{mutex, now, site, entry};
}

void Released(pthread_mutex_t* mutex) {
  for (int i = t_depth - 1; i >= 0; --i) {
    if (t_held[i].mutex != mutex) continue;
    const uint64_t held = NowNs() - t_held[i].since;
    t_held[i].entry->hold_ns.fetch_add(held, std::memory_order_relaxed);
    if (t_held[i].site != nullptr) {
      t_held[i].site->hold_ns.fetch_add(held, std::memory_order_relaxed);
    } else {
      t_held[i].entry->other_hold_ns.fetch_add(held, std::memory_order_relaxed);
    }
    t_held[i] = t_held[--t_depth];
    return;
  }
}

void PrintFrame(FILE* out, void* address) {
  Dl_info info;
  if (address == nullptr || dladdr(address, &info) == 0 || info.dli_fname == nullptr) return;
  // One byte back: the return address may already be the next line's.
  std::fprintf(out, " %s+0x%lx", info.dli_fname,
               static_cast<unsigned long>(reinterpret_cast<uintptr_t>(address) - 1 -
                                          reinterpret_cast<uintptr_t>(info.dli_fbase)));
}

}  // namespace

__attribute__((destructor)) void Dump() {
  if (g_table == nullptr || g_dumped.exchange(true) || !g_active.load()) return;
  const uint64_t wall = NowNs() - g_start_ns.load();
  // Every process that loaded it writes its own (a mount helper it ran
  // too): PREFIX.<pid>.
  char path[512];
  const char* prefix = getenv("LOCKPROF_OUT");
  std::snprintf(path, sizeof(path), "%s.%d", prefix != nullptr ? prefix : "/tmp/lockprof",
                getpid());
  FILE* out = std::fopen(path, "w");
  if (out == nullptr) return;
  std::vector<Entry*> entries;
  for (size_t i = 0; i < kSlots; ++i) {
    if (g_table[i].key.load() != 0 && g_table[i].locks.load() != 0) entries.push_back(&g_table[i]);
  }
  std::sort(entries.begin(), entries.end(),
            [](Entry* a, Entry* b) { return a->hold_ns.load() > b->hold_ns.load(); });
  std::fprintf(out, "# lockprof: pid %d, %.3f s of wall time, %zu mutexes\n", getpid(),
               wall / 1e9, entries.size());
  std::fprintf(out, "# mutex: held %% of wall, waited ms (all threads), locks, contended\n");
  std::fprintf(out, "#   site: held %% of wall, waited ms, locks, frames\n");
  for (size_t e = 0; e < entries.size() && e < 25; ++e) {
    Entry* entry = entries[e];
    std::fprintf(out, "mutex %#lx: held %.2f %%, waited %.1f ms, locks %lu, contended %lu\n",
                 static_cast<unsigned long>(entry->key.load()), 100.0 * entry->hold_ns / wall,
                 entry->wait_ns / 1e6, static_cast<unsigned long>(entry->locks.load()),
                 static_cast<unsigned long>(entry->contended.load()));
    for (Site& site : entry->sites) {
      if (!site.ready.load() || site.locks.load() == 0) continue;
      std::fprintf(out, "  site: held %.2f %%, waited %.1f ms, locks %lu,",
                   100.0 * site.hold_ns / wall, site.wait_ns / 1e6,
                   static_cast<unsigned long>(site.locks.load()));
      for (void* frame : site.frames) PrintFrame(out, frame);
      std::fprintf(out, "\n");
    }
    if (entry->other_hold_ns.load() != 0) {
      std::fprintf(out, "  other sites: held %.2f %%\n", 100.0 * entry->other_hold_ns / wall);
    }
  }
  std::fclose(out);
}

namespace {

__attribute__((constructor)) void Init() {
  Resolve();
  Dl_info self;
  if (dladdr(reinterpret_cast<void*>(&Init), &self) != 0) g_self_base = self.dli_fbase;
  g_table = new Entry[kSlots];
  g_start_file = getenv("LOCKPROF_START_FILE");
  if (g_start_file == nullptr) {
    g_start_ns.store(NowNs());
    g_active.store(true);
  }
}

}  // namespace

extern "C" {

int pthread_mutex_lock(pthread_mutex_t* mutex) {
  if (real_lock == nullptr) Resolve();
  const uintptr_t ret = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (real_trylock(mutex) == 0) {
    Acquired(mutex, ret, 0, false);
    return 0;
  }
  const uint64_t asked = NowNs();
  const int rc = real_lock(mutex);
  if (rc == 0) Acquired(mutex, ret, asked, true);
  return rc;
}

int pthread_mutex_trylock(pthread_mutex_t* mutex) {
  if (real_trylock == nullptr) Resolve();
  const int rc = real_trylock(mutex);
  if (rc == 0) Acquired(mutex, reinterpret_cast<uintptr_t>(__builtin_return_address(0)), 0, false);
  return rc;
}

int pthread_mutex_unlock(pthread_mutex_t* mutex) {
  if (real_unlock == nullptr) Resolve();
  if (t_depth > 0) Released(mutex);
  return real_unlock(mutex);
}

// A condition wait releases its mutex while it sleeps: not held time.
int pthread_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  if (real_cond_wait == nullptr) Resolve();
  const uintptr_t ret = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (t_depth > 0) Released(mutex);
  const int rc = real_cond_wait(cond, mutex);
  Acquired(mutex, ret, 0, false);
  return rc;
}

int pthread_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex, const timespec* at) {
  if (real_cond_timedwait == nullptr) Resolve();
  const uintptr_t ret = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (t_depth > 0) Released(mutex);
  const int rc = real_cond_timedwait(cond, mutex, at);
  Acquired(mutex, ret, 0, false);
  return rc;
}

int pthread_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                           const timespec* at) {
  if (real_cond_clockwait == nullptr) Resolve();
  const uintptr_t ret = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  if (t_depth > 0) Released(mutex);
  const int rc = real_cond_clockwait(cond, mutex, clock, at);
  Acquired(mutex, ret, 0, false);
  return rc;
}

// A forked daemon leaves by _exit (no destructors): it writes first.
[[noreturn]] void _exit(int status) {
  Dump();
  using ExitFn = void (*)(int);
  reinterpret_cast<ExitFn>(dlsym(RTLD_NEXT, "_exit"))(status);
  __builtin_unreachable();
}

}  // extern "C"
