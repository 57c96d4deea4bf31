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
};

// Returns false (and logs to stderr) when the level name is unknown.
bool InitLogging(const LogOptions& options);

// The logger named `module`, created on first use with the shared sinks.
std::shared_ptr<spdlog::logger> Logger(const std::string& module);

}  // namespace sfs
