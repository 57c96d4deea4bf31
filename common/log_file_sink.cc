#include "common/log_file_sink.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sfs {
namespace {

// Writes all of `text` to `fd`; false (errno set) if the file took less.
bool WriteAll(int fd, const char* text, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, text, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    text += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

LogFileSink::LogFileSink(std::string path, bool fallback_syslog)
    : path_(std::move(path)), fallback_syslog_(fallback_syslog) {
  fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    failing_ = true;
    Fallback("stripefs: cannot open log file " + path_ + ": " + strerror(errno) +
             "; logging elsewhere\n");
    return;
  }
  struct stat st;
  if (fstat(fd_, &st) == 0 && (st.st_mode & 077) != 0) (void)fchmod(fd_, 0600);
}

LogFileSink::~LogFileSink() {
  if (fd_ >= 0) close(fd_);
}

void LogFileSink::sink_it_(const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t formatted;
  formatter_->format(msg, formatted);
  if (fd_ >= 0 && WriteAll(fd_, formatted.data(), formatted.size())) {
    failing_ = false;
    return;
  }
  if (!failing_ && fd_ >= 0) {
    Fallback("stripefs: cannot write log file " + path_ + " (" + strerror(errno) +
             "); lines go here until it can be written again\n");
  }
  failing_ = true;
  Fallback(std::string(formatted.data(), formatted.size()));
}

void LogFileSink::Fallback(const std::string& text) {
  if (fallback_syslog_) {
    syslog(LOG_DAEMON | LOG_ERR, "%.*s", static_cast<int>(text.size()), text.data());
  } else {
    (void)WriteAll(STDERR_FILENO, text.data(), text.size());
  }
}

}  // namespace sfs
