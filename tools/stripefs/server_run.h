// How `stripefs oss` and `stripefs mds` run: in the foreground (-f) or as
// a daemon whose parent returns once the server listens (or with its
// error), as `stripefs mount` does; either way until SIGTERM or SIGINT.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/status.h"
#include "rpc/tls.h"

namespace sfs::cli {

// Starts the server: how to stop it, or why it did not start.
using StartFn = std::function<Result<std::function<void()>>()>;

// Sets up logging (`log`; syslog when in the background without a log
// file), starts the server with `start` and serves until a signal. `name`
// prefixes messages ("oss", "mds"). Returns the exit code.
int RunServer(const std::string& name, bool foreground, LogOptions log, StartFn start);

// `text` as a whole number from `low` to `high`.
bool ParseCount(const std::string& text, int low, int high, int& out);

// The options both servers take: -f, --ost-threads N, --ost-timeout
// SECONDS, --tls-cert/--tls-key/--tls-ca FILE, --log-level, --log-file.
struct CommonServerOptions {
  bool foreground = false;
  int ost_threads = 2;
  std::chrono::nanoseconds ost_timeout = std::chrono::seconds(30);
  rpc::TlsFiles tls;
  LogOptions log;
};
enum class Taken { kNo, kYes, kBad };
// Whether args[i] is one of them; if so it (and its value) is read into
// `out` and `i` moved past it. kBad: its value is missing or wrong, and
// `error` says why.
Taken TakeCommonOption(const std::vector<std::string>& args, size_t& i,
                       CommonServerOptions* out, std::string* error);

}  // namespace sfs::cli
