#include "common/log.h"

#include "common/log_file_sink.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>
#include <vector>

namespace sfs {
namespace {

// Guards the sink list and level used for loggers created after InitLogging.
// This is process-wide logging configuration, set once in main before threads
// start; spdlog's own registry is the only other global involved.
std::mutex log_mu;
std::vector<spdlog::sink_ptr> sinks;                 // GUARDED_BY(log_mu)
spdlog::level::level_enum level = spdlog::level::info;  // GUARDED_BY(log_mu)

}  // namespace

bool InitLogging(const LogOptions& options) {
  std::lock_guard<std::mutex> lock(log_mu);
  auto parsed = spdlog::level::from_str(options.level);
  bool known = parsed != spdlog::level::off || options.level == "off";
  if (known) level = parsed;
  sinks.clear();
  if (options.file.empty()) {
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  } else {
    sinks.push_back(std::make_shared<LogFileSink>(options.file, options.fallback_syslog));
  }
  spdlog::drop_all();
  if (!known) {
    fprintf(stderr, "stripefs: unknown log level '%s', using info\n",
            options.level.c_str());
  }
  return known;
}

std::shared_ptr<spdlog::logger> Logger(const std::string& module) {
  std::lock_guard<std::mutex> lock(log_mu);
  if (auto existing = spdlog::get(module)) return existing;
  if (sinks.empty()) {
    sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  }
  auto logger = std::make_shared<spdlog::logger>(module, sinks.begin(), sinks.end());
  logger->set_level(level);
  // Log volume at info is low; flushing each line keeps the log whole when
  // the daemon is killed.
  logger->flush_on(spdlog::level::info);
  spdlog::register_logger(logger);
  return logger;
}

}  // namespace sfs
