// Internal to common/: the sink behind `-o log_file=` and META/stripefs.log.
//
// The log names files and shows extended-attribute values, so the file is
// private to its owner (created 0600, and tightened to 0600 if it exists with
// wider permissions). A log line that cannot be written (the disk is full,
// the file's filesystem failed) goes to stderr instead (or to syslog, for a
// daemon without one), so an error is never lost only because the log
// shares a full disk with it; the first such failure also says why the file
// is not being written.
#pragma once

#include <mutex>
#include <string>

#include <spdlog/sinks/base_sink.h>

namespace sfs {

class LogFileSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Opens (creates) `path` for appending. A file that cannot be opened is
  // reported on stderr once and every line goes to stderr.
  LogFileSink(std::string path, bool fallback_syslog);
  ~LogFileSink() override;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}  // every line is one write(2); nothing is buffered

 private:
  // Where a line goes that the file did not take.
  void Fallback(const std::string& text);

  const std::string path_;
  const bool fallback_syslog_;
  int fd_ = -1;
  bool failing_ = false;  // the last write to the file failed; said once on stderr
};

}  // namespace sfs
