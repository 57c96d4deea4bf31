#include "tools/stripefs/oss_cmd.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstring>
#include <filesystem>

#include "common/log.h"
#include "oss/server.h"
#include "rpc/auth.h"
#include "tools/stripefs/cli_util.h"

namespace sfs::cli {
namespace {

constexpr const char* kOssUsage =
    "usage: stripefs oss --listen ADDRESS:PORT --key FILE [--ost-threads N] "
    "[--ost-timeout SECONDS] [--tls-cert FILE --tls-key FILE [--tls-ca FILE]] "
    "[--log-level LEVEL] [--log-file PATH] [-f] DIR [DIR ...]";

bool ParseCount(const std::string& text, int low, int high, int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out >= low && out <= high;
}

// Serves until SIGTERM or SIGINT. `ready` (the parent's pipe when in the
// background, else -1) hears one byte: 0 once listening, else the errno.
int Serve(oss::ServerOptions options, int ready) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  // Blocked before gRPC starts its threads, so they inherit the mask and
  // only sigwait below takes the signals.
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto server = oss::StartServer(std::move(options));
  if (ready >= 0) {
    const unsigned char status = server.ok() ? 0 : static_cast<unsigned char>(server.err());
    (void)!write(ready, &status, 1);
    close(ready);
  }
  if (!server.ok()) {
    Logger("oss")->error("not started: {}", server.status().ToString());
    return Fail("oss: " + server.status().ToString());
  }
  int signal = 0;
  sigwait(&stop, &signal);
  Logger("oss")->info("{}: stopping", strsignal(signal));
  (*server)->Shutdown();
  return 0;
}

}  // namespace

int Oss(const std::vector<std::string>& args) {
  oss::ServerOptions options;
  std::string key_file;
  LogOptions log;
  bool foreground = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string text;
    int seconds = 0;
    if (arg == "-f" || arg == "--foreground") {
      foreground = true;
    } else if (arg == "--listen") {
      if (!value(options.listen)) return Fail(kOssUsage);
    } else if (arg == "--key") {
      if (!value(key_file)) return Fail(kOssUsage);
    } else if (arg == "--ost-threads") {
      if (!value(text) || !ParseCount(text, 1, 256, options.ost_threads)) {
        return Fail("oss: --ost-threads takes a number from 1 to 256");
      }
    } else if (arg == "--ost-timeout") {
      if (!value(text) || !ParseCount(text, 1, 86400, seconds)) {
        return Fail("oss: --ost-timeout takes seconds from 1 to 86400");
      }
      options.ost_timeout = std::chrono::seconds(seconds);
    } else if (arg == "--tls-cert") {
      if (!value(options.tls.cert)) return Fail(kOssUsage);
    } else if (arg == "--tls-key") {
      if (!value(options.tls.key)) return Fail(kOssUsage);
    } else if (arg == "--tls-ca") {
      if (!value(options.tls.ca)) return Fail(kOssUsage);
    } else if (arg == "--log-level") {
      if (!value(log.level)) return Fail(kOssUsage);
    } else if (arg == "--log-file") {
      if (!value(log.file)) return Fail(kOssUsage);
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("oss: unknown option " + arg + "\n" + kOssUsage);
    } else {
      std::error_code ec;
      auto path = std::filesystem::absolute(arg, ec).lexically_normal().string();
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      options.dirs.push_back(path);
    }
  }
  if (options.listen.empty() || key_file.empty() || options.dirs.empty()) return Fail(kOssUsage);
  auto key = rpc::ReadKeyFile(key_file);
  if (!key.ok()) return Fail("oss: " + key.status().ToString());
  options.key = std::move(key).value();
  if (!foreground && log.file.empty()) log.fallback_syslog = true;
  if (!InitLogging(log)) return Fail("oss: unknown log level " + log.level);
  if (foreground) return Serve(std::move(options), -1);

  // In the background: the parent returns once the server listens (or with
  // its error), as `stripefs mount` does.
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Fail(std::string("oss: pipe: ") + strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) return Fail(std::string("oss: fork: ") + strerror(errno));
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
    if (!log.file.empty()) {
      dup2(null, STDOUT_FILENO);
    }
    if (null > STDERR_FILENO) close(null);
  }
  return Serve(std::move(options), pipe_fds[1]);
}

int Key(const std::vector<std::string>& args) {
  if (args.size() != 2 || args[0] != "new") return Fail("usage: stripefs key new FILE");
  Status written = rpc::WriteNewKeyFile(args[1]);
  if (!written.ok()) return Fail("key: " + written.ToString());
  return 0;
}

}  // namespace sfs::cli
