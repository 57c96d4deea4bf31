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
#include "tools/stripefs/server_run.h"

namespace sfs::cli {
namespace {

constexpr const char* kOssUsage =
    "usage: stripefs oss --listen ADDRESS:PORT --key FILE [--ost-threads N] "
    "[--ost-timeout SECONDS] [--tls-cert FILE --tls-key FILE [--tls-ca FILE]] "
    "[--log-level LEVEL] [--log-file PATH] [-f] DIR [DIR ...]";

}  // namespace

int Oss(const std::vector<std::string>& args) {
  oss::ServerOptions options;
  std::string key_file;
  CommonServerOptions common;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string error;
    const Taken taken = TakeCommonOption(args, i, &common, &error);
    if (taken == Taken::kBad) return Fail("oss: " + error);
    if (taken == Taken::kYes) continue;
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    if (arg == "--listen") {
      if (!value(options.listen)) return Fail(kOssUsage);
    } else if (arg == "--key") {
      if (!value(key_file)) return Fail(kOssUsage);
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("oss: unknown option " + arg + "\n" + kOssUsage);
    } else {
      std::error_code ec;
      auto path = std::filesystem::absolute(arg, ec).lexically_normal().string();
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      options.dirs.push_back(path);
    }
  }
  options.ost_threads = common.ost_threads;
  options.ost_timeout = common.ost_timeout;
  options.tls = common.tls;
  if (options.listen.empty() || key_file.empty() || options.dirs.empty()) return Fail(kOssUsage);
  auto key = rpc::ReadKeyFile(key_file);
  if (!key.ok()) return Fail("oss: " + key.status().ToString());
  options.key = std::move(key).value();
  return RunServer("oss", common.foreground, common.log, [options = std::move(options)]() mutable
                   -> Result<std::function<void()>> {
    auto server = oss::StartServer(std::move(options));
    if (!server.ok()) return server.status();
    std::shared_ptr<oss::Server> running = std::move(server).value();
    return std::function<void()>([running] { running->Shutdown(); });
  });
}

int Key(const std::vector<std::string>& args) {
  if (args.size() != 2 || args[0] != "new") return Fail("usage: stripefs key new FILE");
  Status written = rpc::WriteNewKeyFile(args[1]);
  if (!written.ok()) return Fail("key: " + written.ToString());
  return 0;
}

}  // namespace sfs::cli
