// The -o words of `stripefs mount`. Kept apart from fs/mount.cc so that it
// links without libfuse (fuzz/mount_options_fuzzer.cc). Every value is parsed
// whole and range-checked: a wrapped uid or a NaN timeout would otherwise
// become a working but wrong daemon.
#include <arpa/inet.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "fs/stripefs.h"
#include "layout/layout.h"

namespace sfs::fs {
namespace {

// (uid_t)-1 means "no uid" to chown and setreuid, so it is not a uid.
constexpr uint64_t kMaxUid = 4294967294u;
constexpr uint64_t kMaxOstThreads = 64;
constexpr double kMaxAttrTimeout = 86400;  // a day; longer is surely a typo
constexpr double kMaxOstTimeout = 3600;
// max_request: from FUSE's own 1 MiB (fs/ops.h, kMaxTransfer) to 16 MiB.
// Each receive worker keeps a buffer of that size (fs/fuse_loop.h), and a
// read of that size is copied through one (only reads up to the splice
// pipes' 1 MiB are spliced, fs/ops_file.cc).
constexpr uint64_t kMinRequest = 1 << 20;
constexpr uint64_t kMaxRequest = 16 << 20;

// The log levels common/log.cc understands, spdlog's names.
constexpr std::string_view kLogLevels[] = {"trace",   "debug", "info",     "warn",
                                           "warning", "error", "critical", "off"};

Status Bad(std::string_view item, std::string_view why) {
  return Status::Error(EINVAL, "bad mount option " + std::string(item) + ": " + std::string(why));
}

// A decimal integer in [min, max], the whole of `text`.
bool ParseInteger(std::string_view text, uint64_t min, uint64_t max, uint64_t* out) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return false;
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

// A finite decimal number of seconds, the whole of `text`, in [0, max]
// (and above 0 unless `zero_ok`).
bool ParseSeconds(std::string_view text, double max, bool zero_ok, double* out) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return false;
  if (!std::isfinite(value) || value < 0 || value > max || (!zero_ok && value == 0)) return false;
  *out = value == 0 ? 0.0 : value;  // -0 is 0
  return true;
}

// "ADDRESS:PORT" with an IPv4 literal or a bracketed IPv6 one and a port
// from 0 (any free port) to 65535.
bool ParseListenAddress(std::string_view text, std::string* address, uint16_t* port) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string host(text.substr(0, colon));
  uint64_t number = 0;
  if (!ParseInteger(text.substr(colon + 1), 0, 65535, &number)) return false;
  unsigned char binary[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (inet_pton(AF_INET6, host.c_str(), binary) != 1) return false;
  } else if (inet_pton(AF_INET, host.c_str(), binary) != 1) {
    return false;
  }
  *address = host;
  *port = static_cast<uint16_t>(number);
  return true;
}

// Applies one of our own "key=value" items to `options`. False: not ours.
Result<bool> ApplyOwn(std::string_view item, std::string_view key, std::string_view value,
                      bool has_value, MountOptions* options) {
  const bool ours = key == "log_level" || key == "log_file" || key == "admin_uid" ||
                    key == "ost_threads" || key == "attr_timeout" || key == "ost_timeout" ||
                    key == "cache" || key == "max_read" || key == "metrics" || key == "mdt_nrs" ||
                    key == "extent_credits" || key == "max_request" || key == "io_uring" ||
                    key == "uring_depth" || key == "uring_nice" || key == "key" ||
                    key == "tls_ca" || key == "tls_cert" || key == "tls_key";
  if (!ours) return false;
  if (!has_value || value.empty()) return Bad(item, "needs a value (" + std::string(key) + "=...)");
  uint64_t number = 0;
  if (key == "log_level") {
    bool known = false;
    for (std::string_view level : kLogLevels) known |= value == level;
    if (!known) return Bad(item, "log levels are trace, debug, info, warn, error, critical, off");
    options->log_level = std::string(value);
  } else if (key == "log_file") {
    options->log_file = std::string(value);
  } else if (key == "key") {
    options->key_file = std::string(value);
  } else if (key == "tls_ca") {
    options->tls_ca = std::string(value);
  } else if (key == "tls_cert") {
    options->tls_cert = std::string(value);
  } else if (key == "tls_key") {
    options->tls_key = std::string(value);
  } else if (key == "admin_uid") {
    if (!ParseInteger(value, 0, kMaxUid, &number)) {
      return Bad(item, "a uid is a whole number from 0 to 4294967294");
    }
    options->admin_uid = static_cast<uint32_t>(number);
  } else if (key == "ost_threads") {
    if (!ParseInteger(value, 1, kMaxOstThreads, &number)) {
      return Bad(item, "ost_threads is a whole number from 1 to 64");
    }
    options->ost_threads = static_cast<int>(number);
  } else if (key == "attr_timeout") {
    if (!ParseSeconds(value, kMaxAttrTimeout, /*zero_ok=*/true, &options->attr_timeout)) {
      return Bad(item, "attr_timeout is a number of seconds from 0 to 86400");
    }
  } else if (key == "max_read") {
    // Passed on to FUSE (fs/mount.cc) once checked: libfuse would take any
    // number, and the kernel caps it at 1 MiB (max_pages) anyway.
    if (!ParseInteger(value, 4096, 1 << 20, &number)) {
      return Bad(item, "max_read is a number of bytes from 4096 to 1048576");
    }
    options->max_read = static_cast<uint32_t>(number);
  } else if (key == "max_request") {
    // A whole number of pages: the INIT reply gives it as max_pages.
    auto size = layout::ParseSize(value);
    if (!size.ok() || *size < kMinRequest || *size > kMaxRequest || *size % 4096 != 0) {
      return Bad(item, "max_request is a size from 1M to 16M (bytes, or K or M binary units), "
                       "a multiple of 4K");
    }
    options->max_request = static_cast<uint32_t>(*size);
  } else if (key == "metrics") {
    if (!ParseListenAddress(value, &options->metrics_address, &options->metrics_port)) {
      return Bad(item, "metrics is ADDRESS:PORT with an IP address (e.g. 127.0.0.1:9100 or "
                       "[::1]:9100) and a port from 0 (any free one) to 65535");
    }
  } else if (key == "mdt_nrs") {
    if (value != "on" && value != "off") return Bad(item, "mdt_nrs is on or off");
    options->mdt_nrs = value == "on";
  } else if (key == "extent_credits") {
    if (value != "on" && value != "off") return Bad(item, "extent_credits is on or off");
    options->extent_credits = value == "on";
  } else if (key == "io_uring") {
    if (value != "auto" && value != "on" && value != "off") {
      return Bad(item, "io_uring is auto, on or off");
    }
    options->io_uring = value == "on"    ? MountOptions::Uring::kOn
                        : value == "off" ? MountOptions::Uring::kOff
                                         : MountOptions::Uring::kAuto;
  } else if (key == "uring_depth") {
    if (!ParseInteger(value, 8, 1024, &number)) {
      return Bad(item, "uring_depth is a whole number from 8 to 1024");
    }
    options->uring_depth = static_cast<uint32_t>(number);
  } else if (key == "uring_nice") {
    const bool below_zero = value.front() == '-';
    if (!ParseInteger(value.substr(below_zero ? 1 : 0), 0, below_zero ? 20 : 19, &number)) {
      return Bad(item, "uring_nice is a nice value, a whole number from -20 to 19");
    }
    options->uring_nice = below_zero ? -static_cast<int>(number) : static_cast<int>(number);
  } else if (key == "cache") {
    if (value != "writearound" && value != "writethrough" && value != "writeback") {
      return Bad(item, "cache is writearound, writethrough or writeback");
    }
    options->writeback = value == "writeback";
    options->direct_writes = value == "writearound";
  } else {  // ost_timeout
    if (!ParseSeconds(value, kMaxOstTimeout, /*zero_ok=*/false, &options->ost_timeout)) {
      return Bad(item, "ost_timeout is a number of seconds above 0, at most 3600");
    }
  }
  return true;
}

}  // namespace

Status ParseMountOption(const std::string& word, MountOptions* options) {
  // Into a copy: a refused word changes nothing, not even its good items.
  MountOptions next = *options;
  std::string_view rest = word;
  while (!rest.empty()) {
    const size_t comma = std::min(rest.find(','), rest.size());
    const std::string_view item = rest.substr(0, comma);
    rest.remove_prefix(std::min(comma + 1, rest.size()));
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    // Client mounts (mds://): whether root callers are squashed (the MDS
    // decides too, mds/squash.h).
    if (item == "root_squash" || item == "no_root_squash") {
      next.root_squash = item == "root_squash";
      continue;
    }
    auto own = ApplyOwn(item, key, value, eq != std::string_view::npos, &next);
    if (!own.ok()) return own.status();
    if (!*own) next.fuse_options.emplace_back(item);
  }
  *options = std::move(next);
  return Status::Ok();
}

}  // namespace sfs::fs
