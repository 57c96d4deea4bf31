#include "tools/stripefs/mds_cmd.h"

#include <filesystem>

#include "mds/server.h"
#include "rpc/auth.h"
#include "tools/stripefs/cli_util.h"
#include "tools/stripefs/server_run.h"

namespace sfs::cli {
namespace {

constexpr const char* kMdsUsage =
    "usage: stripefs mds --listen ADDRESS:PORT --key FILE [--admin-uid UID] "
    "[--trusted ADDRESS[/BITS][,...]] "
    "[--callback-timeout SECONDS] [--max-cached N] [--ost-threads N] "
    "[--ost-timeout SECONDS] [--tls-cert FILE --tls-key FILE [--tls-ca FILE]] "
    "[--log-level LEVEL] [--log-file PATH] [-f] META_DIR";

}  // namespace

int Mds(const std::vector<std::string>& args) {
  mds::ServerOptions options;
  CommonServerOptions common;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::string error;
    const Taken taken = TakeCommonOption(args, i, &common, &error);
    if (taken == Taken::kBad) return Fail("mds: " + error);
    if (taken == Taken::kYes) continue;
    auto value = [&](std::string& out) {
      if (i + 1 >= args.size()) return false;
      out = args[++i];
      return true;
    };
    std::string text;
    int number = 0;
    if (arg == "--listen") {
      if (!value(options.listen)) return Fail(kMdsUsage);
    } else if (arg == "--key") {
      if (!value(options.key_file)) return Fail(kMdsUsage);
    } else if (arg == "--admin-uid") {
      if (!value(text) || !ParseCount(text, 0, INT32_MAX, number)) {
        return Fail("mds: --admin-uid takes a uid");
      }
      options.admin_uid = static_cast<uint32_t>(number);
    } else if (arg == "--callback-timeout") {
      if (!value(text) || !ParseCount(text, 1, 3600, number)) {
        return Fail("mds: --callback-timeout takes seconds from 1 to 3600");
      }
      options.callback_timeout = std::chrono::seconds(number);
    } else if (arg == "--trusted") {
      if (!value(text)) return Fail("mds: --trusted takes ADDRESS[/BITS][,...]");
      size_t start = 0;
      while (start <= text.size()) {
        const size_t comma = std::min(text.find(',', start), text.size());
        auto range = mds::ParseAddressRange(std::string_view(text).substr(start, comma - start));
        if (!range.ok()) return Fail("mds: --trusted: " + range.status().message());
        options.trusted.push_back(std::move(range).value());
        start = comma + 1;
      }
    } else if (arg == "--max-cached") {
      if (!value(text) || !ParseCount(text, 10, INT32_MAX, number)) {
        return Fail("mds: --max-cached takes a count of inodes, at least 10");
      }
      options.max_cached_per_client = static_cast<size_t>(number);
    } else if (arg == "--lose-replies") {
      // Fault injection for tests, not in the usage line (docs/design.md).
      if (!value(text) || !ParseCount(text, 0, INT32_MAX, number)) {
        return Fail("mds: --lose-replies takes a count");
      }
      options.lose_reply_every = static_cast<uint32_t>(number);
    } else if (!arg.empty() && arg[0] == '-') {
      return Fail("mds: unknown option " + arg + "\n" + kMdsUsage);
    } else if (options.meta_dir.empty()) {
      std::error_code ec;
      options.meta_dir = std::filesystem::absolute(arg, ec).lexically_normal().string();
    } else {
      return Fail("mds: one metadata directory only\n" + std::string(kMdsUsage));
    }
  }
  options.ost_threads = common.ost_threads;
  options.ost_timeout = common.ost_timeout;
  options.tls = common.tls;
  if (options.listen.empty() || options.key_file.empty() || options.meta_dir.empty()) {
    return Fail(kMdsUsage);
  }
  std::error_code ec;
  options.key_file = std::filesystem::absolute(options.key_file, ec).lexically_normal().string();
  auto key = rpc::ReadKeyFile(options.key_file);
  if (!key.ok()) return Fail("mds: " + key.status().ToString());
  options.key = std::move(key).value();
  return RunServer("mds", common.foreground, common.log, [options = std::move(options)]() mutable
                   -> Result<std::function<void()>> {
    auto server = mds::StartServer(std::move(options));
    if (!server.ok()) return server.status();
    std::shared_ptr<mds::Server> running = std::move(server).value();
    return std::function<void()>([running] { running->Shutdown(); });
  });
}

}  // namespace sfs::cli
