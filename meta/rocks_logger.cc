#include "meta/rocks_logger.h"

#include <cstdarg>
#include <cstdio>

#include "common/log.h"

namespace sfs::meta {
namespace {

class RocksLogger final : public rocksdb::Logger {
 public:
  RocksLogger() : log_(sfs::Logger("rocksdb")) {
    SetInfoLogLevel(log_->should_log(spdlog::level::debug) ? rocksdb::InfoLogLevel::DEBUG_LEVEL
                                                           : rocksdb::InfoLogLevel::WARN_LEVEL);
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::INFO_LEVEL, format, ap);
  }
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char line[1024];
    vsnprintf(line, sizeof(line), format, ap);
    switch (level) {
      case rocksdb::InfoLogLevel::DEBUG_LEVEL:
      case rocksdb::InfoLogLevel::INFO_LEVEL:
      case rocksdb::InfoLogLevel::HEADER_LEVEL:
        log_->debug("{}", line);
        break;
      case rocksdb::InfoLogLevel::WARN_LEVEL:
        log_->warn("{}", line);
        break;
      default:
        log_->error("{}", line);
    }
  }

 private:
  const std::shared_ptr<spdlog::logger> log_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewRocksLogger() { return std::make_shared<RocksLogger>(); }

}  // namespace sfs::meta
