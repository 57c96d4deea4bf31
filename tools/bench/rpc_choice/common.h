// What both frameworks' benchmarks share: options, the payload buffer, CPU
// accounting of both processes and the one result line run.sh aggregates.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rpc_choice {

using Clock = std::chrono::steady_clock;

inline constexpr size_t kMaxPayload = 1 << 20;
// Both sides accept a message of 8 MiB plus headroom for the envelope.
inline constexpr int kMaxMessage = 8 * 1024 * 1024 + 64 * 1024;

struct Options {
  std::string variant;     // label printed in the result line
  std::string addr;        // 127.0.0.1:port
  int server_pid = 0;      // for the server's CPU time
  double secs = 1.0;       // a case ends after this long ...
  long max_calls = 20000;  // ... or after this many calls, whichever first
  double warmup_secs = 0.2;
  std::string mode;  // framework-specific (grpc: proto|bb, capnp: copy|ref)
};

inline Options ParseOptions(int argc, char** argv, int first) {
  Options o;
  for (int i = first; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--variant")
      o.variant = v;
    else if (k == "--addr")
      o.addr = v;
    else if (k == "--server-pid")
      o.server_pid = std::atoi(v.c_str());
    else if (k == "--secs")
      o.secs = std::atof(v.c_str());
    else if (k == "--max-calls")
      o.max_calls = std::atol(v.c_str());
    else if (k == "--warmup")
      o.warmup_secs = std::atof(v.c_str());
    else if (k == "--mode")
      o.mode = v;
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  // Loopback only: the benchmark must never listen on or reach another address.
  if (o.addr.rfind("127.0.0.1:", 0) != 0) {
    std::fprintf(stderr, "--addr must be 127.0.0.1:PORT\n");
    std::exit(2);
  }
  return o;
}

// Word-aligned (Cap'n Proto's referenceExternalData needs it) and filled so
// that a page the kernel never touched does not flatter the first calls.
inline const uint8_t* Payload() {
  static uint8_t* p = [] {
    auto* b = static_cast<uint8_t*>(std::aligned_alloc(4096, kMaxPayload));
    for (size_t i = 0; i < kMaxPayload; ++i) b[i] = static_cast<uint8_t>(i * 131 + 7);
    return b;
  }();
  return p;
}

// Receivers read the first and last byte of every payload into this, so
// that neither the compiler nor a lazy framework can skip the data.
inline volatile uint64_t g_sink = 0;
inline void Touch(uint8_t first, uint8_t last) { g_sink = g_sink + first + last; }

// CPU time (user+system, all threads) and minor page faults of a process.
// Faults are counted because a fresh 1 MiB buffer per message costs 256 of
// them, which can outweigh the copy into it.
struct Usage {
  double cpu_us = 0;
  double minflt = 0;
  Usage operator-(const Usage& o) const { return {cpu_us - o.cpu_us, minflt - o.minflt}; }
};

inline Usage SelfUsage() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return {
      (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec,
      static_cast<double>(ru.ru_minflt)};
}

// From /proc/<pid>/stat: dead threads included; CPU in clock ticks (10 ms),
// fine over a window of a second.
inline Usage ProcUsage(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(f)), {});
  auto pos = s.rfind(')');  // comm may contain spaces
  if (pos == std::string::npos) return {};
  std::istringstream in(s.substr(pos + 2));
  std::string tok;
  unsigned long long minflt = 0, utime = 0, stime = 0;
  // Fields after comm start at 3 (state): minflt is 10, utime and stime 14 and 15.
  for (int field = 3; field <= 15 && in >> tok; ++field) {
    if (field == 10) minflt = std::stoull(tok);
    if (field == 14) utime = std::stoull(tok);
    if (field == 15) stime = std::stoull(tok);
  }
  return {(utime + stime) * 1e6 / sysconf(_SC_CLK_TCK), static_cast<double>(minflt)};
}

// Busy time of the whole machine (all CPUs, /proc/stat), to tell how much
// of it went to processes other than the two measured ones.
inline double MachineBusyUs() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  unsigned long long v[8] = {};  // user nice system idle iowait irq softirq steal
  f >> cpu;
  for (auto& x : v) f >> x;
  return (v[0] + v[1] + v[2] + v[5] + v[6]) * 1e6 / sysconf(_SC_CLK_TCK);
}

inline int ProcThreads(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return 0;
}

struct Case {
  bool write;
  size_t size;
  int conc;
};

inline std::vector<Case> Cases() {
  std::vector<Case> v;
  for (bool w : {true, false})
    for (size_t s : {size_t{4096}, kMaxPayload})
      for (int c : {1, 8}) v.push_back({w, s, c});
  return v;
}

// One measured window: the driver counts calls and their latencies; CPU and
// wall time are taken around it by Measure().
struct Tally {
  long calls = 0;
  double lat_sum_us = 0;
};

// Runs a warm-up window, then the measured one, and prints a result line.
// drive(case, deadline, max_calls) must return only when every call it
// started has completed.
inline Clock::duration Secs(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

template <class Drive>
void Measure(const Options& o, const Case& c, Drive&& drive) {
  drive(c, Clock::now() + Secs(o.warmup_secs), o.max_calls);
  const Usage cli0 = SelfUsage(), srv0 = ProcUsage(o.server_pid);
  const double busy0 = MachineBusyUs();
  auto t0 = Clock::now();
  Tally t = drive(c, t0 + Secs(o.secs), o.max_calls);
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const Usage cli = SelfUsage() - cli0, srv = ProcUsage(o.server_pid) - srv0;
  const double other = MachineBusyUs() - busy0 - cli.cpu_us - srv.cpu_us;
  const double other_pct =
      std::max(0.0, other) / (wall * 1e6 * sysconf(_SC_NPROCESSORS_ONLN)) * 100;
  double n = static_cast<double>(t.calls);
  // variant op size conc calls secs calls/s MiB/s lat_us cli_cpu_us srv_cpu_us
  // cli_flt srv_flt srv_threads other% (CPU and faults per call; other% =
  // the share of the machine's CPUs busy with anything else meanwhile)
  std::printf("%s\t%s\t%zu\t%d\t%ld\t%.3f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.0f\n",
              o.variant.c_str(), c.write ? "write" : "read", c.size, c.conc, t.calls, wall,
              n / wall, n * c.size / wall / (1 << 20), t.lat_sum_us / n, cli.cpu_us / n,
              srv.cpu_us / n, cli.minflt / n, srv.minflt / n, ProcThreads(o.server_pid), other_pct);
  std::fflush(stdout);
}

inline double UsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

}  // namespace rpc_choice
