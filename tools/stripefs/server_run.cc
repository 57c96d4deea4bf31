#include "tools/stripefs/server_run.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstring>

#include "tools/stripefs/cli_util.h"

namespace sfs::cli {
namespace {

// Serves until SIGTERM or SIGINT. `ready` (the parent's pipe when in the
// background, else -1) hears one byte: 0 once listening, else the errno.
int Serve(const std::string& name, const StartFn& start, int ready) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  // Blocked before gRPC starts its threads, so they inherit the mask and
  // only sigwait below takes the signals.
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto stopper = start();
  if (ready >= 0) {
    const unsigned char status = stopper.ok() ? 0 : static_cast<unsigned char>(stopper.err());
    (void)!write(ready, &status, 1);
    close(ready);
  }
  if (!stopper.ok()) {
    Logger(name)->error("not started: {}", stopper.status().ToString());
    return Fail(name + ": " + stopper.status().ToString());
  }
  int signal = 0;
  sigwait(&stop, &signal);
  Logger(name)->info("{}: stopping", strsignal(signal));
  (*stopper)();
  return 0;
}

}  // namespace

bool ParseCount(const std::string& text, int low, int high, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= low && out <= high;
}

Taken TakeCommonOption(const std::vector<std::string>& args, size_t& i,
                       CommonServerOptions* out, std::string* error) {
  const std::string& arg = args[i];
  auto value = [&](std::string& into) {
    if (i + 1 >= args.size()) {
      *error = arg + " takes a value";
      return Taken::kBad;
    }
    into = args[++i];
    return Taken::kYes;
  };
  std::string text;
  int seconds = 0;
  if (arg == "-f" || arg == "--foreground") {
    out->foreground = true;
    return Taken::kYes;
  }
  if (arg == "--ost-threads") {
    if (value(text) == Taken::kBad || !ParseCount(text, 1, 256, out->ost_threads)) {
      *error = "--ost-threads takes a number from 1 to 256";
      return Taken::kBad;
    }
    return Taken::kYes;
  }
  if (arg == "--ost-timeout") {
    if (value(text) == Taken::kBad || !ParseCount(text, 1, 86400, seconds)) {
      *error = "--ost-timeout takes seconds from 1 to 86400";
      return Taken::kBad;
    }
    out->ost_timeout = std::chrono::seconds(seconds);
    return Taken::kYes;
  }
  if (arg == "--tls-cert") return value(out->tls.cert);
  if (arg == "--tls-key") return value(out->tls.key);
  if (arg == "--tls-ca") return value(out->tls.ca);
  if (arg == "--log-level") return value(out->log.level);
  if (arg == "--log-file") return value(out->log.file);
  return Taken::kNo;
}

int RunServer(const std::string& name, bool foreground, LogOptions log, StartFn start) {
  if (!foreground && log.file.empty()) log.fallback_syslog = true;
  if (!InitLogging(log)) return Fail(name + ": unknown log level " + log.level);
  if (foreground) return Serve(name, start, -1);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Fail(name + ": pipe: " + strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return Fail(name + ": fork: " + strerror(errno));
  if (pid > 0) {
    close(pipe_fds[1]);
    unsigned char status = 1;
    const bool heard = read(pipe_fds[0], &status, 1) == 1;
    return heard && status == 0 ? 0 : 1;  // the child said why on stderr
  }
  close(pipe_fds[0]);
  setsid();
  if (int null = open("/dev/null", O_RDWR); null >= 0) {
    dup2(null, STDIN_FILENO);
    if (!log.file.empty()) dup2(null, STDOUT_FILENO);
    if (null > STDERR_FILENO) close(null);
  }
  return Serve(name, start, pipe_fds[1]);
}

}  // namespace sfs::cli
