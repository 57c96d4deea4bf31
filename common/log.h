// Per-module spdlog loggers that share one set of sinks. main() calls
// InitLogging once before any thread starts; modules call Logger("nrs") and
// keep the pointer. Log lines for errors carry their context on one line.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace sfs {

struct LogOptions {
  std::string level = "info";  // trace|debug|info|warn|error|critical|off
  std::string file;            // empty: stderr
  // Where a line goes that the file cannot take (a full disk): stderr, or
  // syslog for a daemon whose stderr is /dev/null.
  bool fallback_syslog = false;
};

// Returns false (and logs to stderr) when the level name is unknown.
bool InitLogging(const LogOptions& options);

// The logger named `module`, created on first use with the shared sinks.
std::shared_ptr<spdlog::logger> Logger(const std::string& module);

}  // namespace sfs
