#include <fcntl.h>
#include <linux/fuse.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/log.h"
#include "fs/filesystem.h"
#include "fs/fuse_api.h"
#include "fs/fuse_channel.h"
#include "fs/fuse_loop.h"
#include "fs/fuse_workers.h"
#include "fs/interrupts.h"
#include "fs/metrics_report.h"
#include "fs/ops.h"
#include "fs/ost_dirs.h"
#include "fs/settings_keys.h"
#include "fs/stripefs.h"
#include "metrics/http_server.h"
#include "ring/fuse_ring.h"
#include "ring/uapi.h"

namespace sfs::fs {
namespace {

// The receive loop's worker threads (fs/fuse_loop.h). They wait on an OST
// only for a request served on their own thread when its OST was idle, at
// most Filesystem::Config::inline_ios of them at once
// (ost::Service::SubmitOrRun); everything else is handed to the OST service
// threads, so a few per CPU suffice. Not more: the kernel wakes the
// longest-idle worker for each request, so with 16 on 2 CPUs every request
// woke a cold thread (mdtest open+close: 10.5k/s with 16, 13.4-15k/s with
// 4; docs/design.md). Two per CPU, at least 4 (fs/fuse_workers.h).
unsigned FuseWorkers() { return FuseWorkersFor(UsableCpus()); }
// How often a mount served over io_uring looks for waiting requests whose
// caller was signalled before the kernel sent them (fs/interrupts.h,
// SignalSweep): the longest such a caller waits for its EINTR.
constexpr std::chrono::milliseconds kSignalSweepInterval{100};
// Room beside a request's data in a receive buffer: its headers (80 bytes
// for a write), rounded up to a page as libfuse's FUSE_BUFFER_HEADER_SIZE.
constexpr size_t kRequestHeaderRoom = 4096;

namespace stdfs = std::filesystem;

// /proc/self/mountinfo escapes blanks and backslashes as octal.
std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      out.push_back(static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

// The "major:minor" of the filesystem mounted last on `path`, or "" if none.
std::string MountedDevice(const std::string& path) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line, found;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    fields >> id >> parent >> devno >> root >> mount_point;
    if (Unescape(mount_point) == path) found = devno;
  }
  return found;
}

bool IsMountPoint(const std::string& path) { return !MountedDevice(path).empty(); }

// The kernel gives every FUSE mount a "strict" dirty-page limit: its share
// of the system's dirty pages (max_ratio, 1 %) is enforced from the first
// page, so a writer is throttled almost at once, long before the system's
// own limits, and 4 KiB writes ran at a third of the speed (docs/design.md,
// "Write caching"). This daemon writes its pages back promptly, so the
// mount is treated like a disk's: strict_limit off, max_ratio left as it is.
// Root only (sysfs); without it the mount works, only slower.
void LoosenDirtyLimit(const std::string& mountpoint, spdlog::logger& log) {
  const std::string device = MountedDevice(mountpoint);
  const std::string knob = "/sys/class/bdi/" + device + "/strict_limit";
  std::ofstream out(knob);
  if (!device.empty() && out) out << "0\n" << std::flush;  // sysfs refuses at the write
  if (device.empty() || !out.good()) {
    log.info("cannot turn off the strict dirty limit of {} ({}): buffered writes are "
             "throttled early", mountpoint, device.empty() ? "device not found" : knob);
  }
}

// The kernel reads ahead on a FUSE mount at most its bdi's read_ahead_kb,
// 128 KiB unless someone raises it, whatever max_readahead the INIT reply
// asks for (it keeps the smaller): a cold sequential read then arrives as
// 128 KiB requests, each a round trip through /dev/fuse, an OST queue and a
// service thread. Raised to kReadahead (fs/ops.h), and with replies
// spliced, cold reads of 1 MiB transfers ran about 2x faster
// (docs/design.md, "Fifth round"). The INIT
// reply may be processed before or after this write; either way the kernel
// keeps min(this, max_readahead), and the reply asks for as much. Root only
// (sysfs); without it the mount works, cold reads are slower.
void WidenReadahead(const std::string& mountpoint, spdlog::logger& log) {
  const std::string device = MountedDevice(mountpoint);
  const std::string knob = "/sys/class/bdi/" + device + "/read_ahead_kb";
  std::ofstream out(knob);
  if (!device.empty() && out) out << (kReadahead / 1024) << "\n" << std::flush;
  if (device.empty() || !out.good()) {
    log.info("cannot raise the readahead of {} ({}): cold reads arrive in 128 KiB requests",
             mountpoint, device.empty() ? "device not found" : knob);
  }
}

// What the kernel will make of max_request: it keeps at most
// /proc/sys/fs/fuse/max_pages_limit pages a request and says nothing, so
// the log says it (the limit is the kernel's when the mount was made).
void LogRequestLimit(uint32_t max_request, spdlog::logger& log) {
  const size_t page = static_cast<size_t>(getpagesize());
  std::ifstream sysctl("/proc/sys/fs/fuse/max_pages_limit");
  size_t limit = 0;
  if (!(sysctl >> limit)) {
    log.warn("max_request={}: this kernel has no /proc/sys/fs/fuse/max_pages_limit and sends "
             "at most 256 pages ({} bytes) a request",
             max_request, 256 * page);
  } else if (limit * page < max_request) {
    log.warn("max_request={}: the kernel sends at most {} bytes a request "
             "(/proc/sys/fs/fuse/max_pages_limit is {}; as root, write {} to it before "
             "mounting)",
             max_request, limit * page, limit, (max_request + page - 1) / page);
  } else {
    log.info("max_request={}: requests up to that size (max_pages_limit {})", max_request, limit);
  }
}

Result<std::string> CheckMountpoint(const std::string& mountpoint) {
  std::error_code ec;
  auto canonical = stdfs::canonical(mountpoint, ec);
  if (ec) return Status::Error(ENOENT, "mount point " + mountpoint + ": " + ec.message());
  if (!stdfs::is_directory(canonical, ec)) {
    return Status::Error(ENOTDIR, "mount point " + mountpoint + " is not a directory");
  }
  if (IsMountPoint(canonical.string())) {
    return Status::Error(EBUSY, "mount point " + canonical.string() +
                                    " is busy: something is already mounted there");
  }
  return canonical.string();
}

// Reports the outcome to the parent waiting in RunMount ("" means mounted).
void Notify(int fd, const std::string& error) {
  if (fd < 0) return;
  const std::string message = error.empty() ? "OK" : error;
  (void)!write(fd, message.data(), message.size());
  close(fd);
}

// The FUSE options: the user's, then what the daemon always sets.
std::string JoinFuseOptions(const MountOptions& options, uint32_t max_read) {
  std::string joined = "default_permissions,allow_other,fsname=stripefs,subtype=stripefs";
  for (const std::string& option : options.fuse_options) {
    if (option == "allow_other" || option == "default_permissions") continue;
    joined += "," + option;
  }
  return joined + ",max_read=" + std::to_string(max_read);
}

// Calls stuck on an OST that stopped answering may return at any time and
// reply into the session: neither it nor the filesystem may be destroyed,
// and /dev/fuse stays open (a reply must not reach a file that reused its
// descriptor). What is stored is synced; the process ends here, and with it
// the connection.
[[noreturn]] void LeaveStuck(fuse_session* session, const std::string& mountpoint,
                             Filesystem& fs, spdlog::logger& log) {
  if (umount2(mountpoint.c_str(), MNT_DETACH) != 0 && errno != EINVAL) {
    fuse_session_unmount(session);  // not root: through fusermount
  }
  fs.Abandon();
  log.warn("unmounted {} leaving calls stuck on unresponsive OSTs", mountpoint);
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { l->flush(); });
  _exit(0);
}

int Serve(const MountOptions& options, const std::string& mountpoint, int notify_fd) {
  // Whatever the daemon creates in the backing store (RocksDB files, the log,
  // objects) is private to root, whatever umask it was started with.
  umask(077);
  LogOptions log;
  log.level = options.log_level;
  if (log.level.empty()) {
    const char* env = std::getenv("STRIPEFS_LOG_LEVEL");
    log.level = env != nullptr ? env : "info";
  }
  log.file = options.log_file;
  const bool client_mount = client::IsMdsPath(options.meta_dir);
  if (log.file.empty() && notify_fd >= 0 && !client_mount) {
    log.file = options.meta_dir + "/stripefs.log";
  }
  log.fallback_syslog = notify_fd >= 0;  // in the background stderr goes to /dev/null
  InitLogging(log);
  auto logger = Logger("mount");
  auto fail = [&](const Status& status) {
    logger->error("mount of {} on {} failed: {}", options.meta_dir, mountpoint, status.ToString());
    if (notify_fd < 0) fprintf(stderr, "stripefs: %s\n", status.ToString().c_str());
    Notify(notify_fd, status.ToString());
    return 1;
  };

  Filesystem::Config config;
  // With max_request, reads up to it are one request too (that is what it is for).
  config.max_read = options.max_read != 0      ? options.max_read
                    : options.max_request != 0 ? options.max_request
                                               : kMaxRead;
  const uint32_t max_request = options.max_request != 0 ? options.max_request : kMaxTransfer;
  if (client_mount) {
    if (options.writeback) {
      return fail(Status::Error(EINVAL, "cache=writeback is not available on a client mount "
                                        "(other clients write too: reads and writes bypass "
                                        "the page cache)"));
    }
    config.mds = *client::ParseMdsPath(options.meta_dir);
  } else {
    config.meta_dir = options.meta_dir;
  }
  config.oss_credentials = {options.key_file,
                            {options.tls_ca, options.tls_cert, options.tls_key}};
  config.mountpoint = mountpoint;
  config.admin_uid = options.admin_uid;
  config.ost_threads = options.ost_threads;
  config.attr_timeout = options.attr_timeout;
  config.writeback = options.writeback;
  config.mdt_nrs = options.mdt_nrs;
  config.extent_credits = options.extent_credits;
  config.mdt_active = FuseWorkers();
  config.direct_writes = options.direct_writes;
  config.root_squash = options.root_squash;
  config.ost_timeout = std::max(std::chrono::nanoseconds(std::chrono::milliseconds(1)),
                                std::chrono::nanoseconds(static_cast<int64_t>(
                                    options.ost_timeout * 1e9)));
  auto opened = Filesystem::Open(config, nrs::BuiltinPolicies());
  if (!opened.ok()) return fail(opened.status());
  std::unique_ptr<Filesystem> fs = std::move(opened).value();
  for (uint32_t i = 0; i < fs->ost_count(); ++i) {
    auto path = fs->meta().GetSetting(OstPathKey(i));
    if (path.ok() && PathsOverlap(*path, mountpoint)) {
      return fail(Status::Error(EINVAL, "OST " + std::to_string(i) + " at " + *path +
                                            " overlaps the mount point"));
    }
  }

  // After the fork (its thread would not survive one), before the mount:
  // a port in use fails the mount with the reason.
  std::unique_ptr<metrics::HttpServer> metrics_server;  // dies before fs
  if (!options.metrics_address.empty()) {
    Filesystem* served = fs.get();
    auto started = metrics::HttpServer::Start(options.metrics_address, options.metrics_port,
                                              [served] { return RenderMetrics(*served); });
    if (!started.ok()) return fail(started.status());
    metrics_server = std::move(started).value();
    fs->set_metrics_address(metrics_server->address());
    logger->info("serving metrics on http://{}/metrics", metrics_server->address());
  }

  // Before the mount: io_uring=on fails here, with the reason, if the
  // kernel cannot give the mount its queues (fs/fuse_channel.h).
  auto made_ring =
      MakeRing(options.io_uring, options.uring_depth, options.uring_nice, max_request, fs.get());
  if (!made_ring.ok()) return fail(made_ring.status());
  std::unique_ptr<ring::FuseRing> ring = std::move(made_ring).value();  // stops before fs dies

  const std::string fuse_options = JoinFuseOptions(options, config.max_read);
  const char* argv[] = {"stripefs", "-o", fuse_options.c_str()};
  fuse_args args = FUSE_ARGS_INIT(3, const_cast<char**>(argv));
  fuse_session* session = fuse_session_new(&args, LowLevelOps(), sizeof(fuse_lowlevel_ops), fs.get());
  if (session == nullptr) return fail(Status::Error(EINVAL, "bad FUSE options: " + fuse_options));
  if (fuse_set_signal_handlers(session) != 0) {
    fuse_session_destroy(session);
    return fail(Status::Error(EIO, "cannot install signal handlers"));
  }
  if (fuse_session_mount(session, mountpoint.c_str()) != 0) {
    fuse_remove_signal_handlers(session);
    fuse_session_destroy(session);
    return fail(Status::Error(EIO, "FUSE mount on " + mountpoint + " failed (is /dev/fuse usable?)"));
  }
  if (config.writeback) LoosenDirtyLimit(mountpoint, *logger);
  WidenReadahead(mountpoint, *logger);
  fs->init_amendment().wishes.flags = FUSE_HANDLE_KILLPRIV_V2 | kFuseDirectIoAllowMmap;
  std::unique_ptr<SignalSweep> signal_sweep;  // stops before the ring
  if (ring != nullptr) {
    fs->init_amendment().wishes.flags |= ring::uapi::kFuseOverIoUring;
    fs->init_amendment().ring = ring.get();
    signal_sweep = std::make_unique<SignalSweep>(fs->interrupts(), kSignalSweepInterval);
  }
  fs->init_amendment().wishes.max_write = options.max_request;  // 0: libfuse's 1 MiB
  if (options.max_request > kMaxTransfer) LogRequestLimit(options.max_request, *logger);
  if (int err = AttachChannel(session); err != 0) {
    // Not fatal: without it every buffered write costs one more round trip.
    logger->warn("cannot hook the FUSE channel ({}); writes keep a security.capability "
                 "lookup each, O_RDWR handles are write-through, and requests stay within "
                 "1 MiB whatever max_request says", strerror(-err));
  }
  fs->set_session(session);
  logger->info("mounted {} on {} with {} OSTs", options.meta_dir, mountpoint, fs->ost_count());
  Notify(notify_fd, "");
  if (notify_fd >= 0) {
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      dup2(null_fd, 0);
      dup2(null_fd, 1);
      // The daemon lets go of the caller's terminal or pipe (a caller
      // reading our output until EOF would wait for the daemon's exit). Log
      // lines the log file cannot take go to syslog instead (LogOptions).
      dup2(null_fd, 2);
      if (null_fd > 2) close(null_fd);
    }
    (void)!chdir("/");
  }

  // The daemon's own receive loop, not libfuse's (fs/fuse_loop.h): its
  // buffers hold max_request. One loop for every mount, whatever its
  // max_request: at 1 MiB it reads as libfuse's does (same buffer size,
  // workers started the same way), and no difference was measured
  // (docs/design.md, "Resources and credits"). Idle workers are never
  // destroyed, as libfuse's were not here: a thread made and ended per
  // request cost more than the request (tests/integration/threads_test.cc
  // watches for it).
  ReceiveLoopOptions receive;
  receive.workers = FuseWorkers();
  receive.buffer_size = max_request + kRequestHeaderRoom;
  receive.read = ReadChannel;
  receive.context = fs.get();
  // A worker serving a request on its own thread (ost::Service::SubmitOrRun)
  // on a disk that stopped answering cannot be joined, and the loop
  // joins its workers before it returns. So once a stop was asked for, this
  // watcher waits for what is in flight and, if only such calls are left,
  // leaves as below without waiting for the loop.
  std::atomic<bool> loop_returned{false};
  std::thread stop_watch([&] {
    while (!loop_returned.load() && !fuse_session_exited(session)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!loop_returned.load() && !fs->Quiesce()) LeaveStuck(session, mountpoint, *fs, *logger);
  });
  Result<LoopEnd> ended = RunReceiveLoop(session, receive);
  loop_returned.store(true);
  stop_watch.join();
  // The queues serve on after the loop ended (a stop by signal leaves the
  // mount up): no new op may start once Quiesce has counted them.
  if (ring != nullptr) ring->StopServing();
  // Requests still with the OSTs are answered while the session lives.
  if (!fs->Quiesce()) LeaveStuck(session, mountpoint, *fs, *logger);
  // Before /dev/fuse is closed (fuse_session_unmount): a command the ring
  // still has in the kernel holds the device open, and the kernel would
  // wait for an answer to its DESTROY that nobody is left to give.
  signal_sweep.reset();
  if (ring != nullptr) {
    ring->Stop();
    const ring::RingCounters c = ring->counters();
    logger->info(
        "FUSE over io_uring served {} requests: {} reads and writes started on its "
        "io_urings, {} replies committed on their queue's thread, {} handed to it, "
        "{} malformed requests answered EIO",
        c.served, c.io_started, c.replied_local, c.replied_handed, c.bad_requests);
  }
  fs->set_session(nullptr);
  fuse_session_unmount(session);
  fuse_remove_signal_handlers(session);
  fuse_session_destroy(session);
  const int refused = fs->init_amendment().refused.load();
  metrics_server.reset();  // it renders from fs
  fs.reset();  // drains the OST queues, then closes the store
  if (!ended.ok()) {
    logger->error("{}; unmounted {}", ended.status().ToString(), mountpoint);
    return 1;
  }
  if (refused != 0) {
    logger->error("the FUSE INIT request was refused ({}); unmounted {}", strerror(refused),
                  mountpoint);
    return 1;
  }
  // libfuse's signal handlers (SIGTERM, SIGINT, SIGHUP) end the session: a
  // requested, clean stop.
  if (*ended == LoopEnd::kExitRequested) {
    logger->info("stopped on request (a signal); unmounted {}", mountpoint);
    return 0;
  }
  logger->info("unmounted {}", mountpoint);
  return 0;
}

}  // namespace

int RunMount(const MountOptions& options) {
  auto mountpoint = CheckMountpoint(options.mountpoint);
  if (!mountpoint.ok()) {
    fprintf(stderr, "stripefs: %s\n", mountpoint.status().ToString().c_str());
    return 1;
  }
  // The daemon runs in "/", so every path it keeps must be absolute.
  std::error_code ec;
  MountOptions absolute = options;
  // mds://ADDRESS:PORT is a client mount (its metadata is the MDS's).
  if (client::IsMdsPath(options.meta_dir)) {
    auto address = client::ParseMdsPath(options.meta_dir);
    if (!address.ok()) {
      fprintf(stderr, "stripefs: %s\n", address.status().ToString().c_str());
      return 1;
    }
  } else {
    absolute.meta_dir = stdfs::absolute(options.meta_dir, ec).lexically_normal().string();
  }
  if (!absolute.log_file.empty()) {
    absolute.log_file = stdfs::absolute(options.log_file, ec).lexically_normal().string();
  }
  for (std::string* file : {&absolute.key_file, &absolute.tls_ca, &absolute.tls_cert,
                            &absolute.tls_key}) {
    if (!file->empty()) *file = stdfs::absolute(*file, ec).lexically_normal().string();
  }
  if (options.foreground) return Serve(absolute, *mountpoint, -1);

  // Fork before anything starts a thread or opens RocksDB; the parent waits
  // to hear whether the mount came up, so errors still reach the terminal.
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    perror("stripefs: pipe");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("stripefs: fork");
    return 1;
  }
  if (child == 0) {
    close(pipe_fds[0]);
    setsid();
    _exit(Serve(absolute, *mountpoint, pipe_fds[1]));
  }
  close(pipe_fds[1]);
  std::string message;
  char buf[512];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0) message.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  if (message == "OK") return 0;
  if (message.empty()) message = "the mount daemon exited before mounting";
  fprintf(stderr, "stripefs: %s\n", message.c_str());
  waitpid(child, nullptr, 0);
  return 1;
}

}  // namespace sfs::fs
