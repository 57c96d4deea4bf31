// The public entry points of the filesystem: format a new filesystem and
// mount one. tools/stripefs/main.cc is a thin command-line wrapper over these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace sfs::fs {

struct MkfsOptions {
  std::string meta_dir;
  std::vector<std::string> ost_dirs;  // index = position
  uint32_t stripe_count = 1;          // default layout of new files
  uint64_t stripe_size = 1 << 20;
  bool force = false;  // reuse directories that hold a previous filesystem
  // An OST may be "oss://ADDRESS:PORT/DIR" (a directory an OSS serves,
  // labelled through it); then the shared key is needed, and the TLS files
  // if the OSSs use TLS (rpc/tls.h).
  std::string key_file;
  std::string tls_ca, tls_cert, tls_key;
};

// Creates the metadata store and labels every OST directory (creating the
// directories if missing). Refuses: a path given twice or nested in another,
// a directory holding another filesystem or other data (EEXIST) unless
// `force`, an impossible layout (EINVAL).
Status Mkfs(const MkfsOptions& options);

struct MountOptions {
  std::string meta_dir;
  std::string mountpoint;
  bool foreground = false;
  // Options for FUSE's -o (after ours are taken out): allow_other and
  // default_permissions are always added.
  std::vector<std::string> fuse_options;
  std::string log_level;  // empty: $STRIPEFS_LOG_LEVEL, else "info"
  std::string log_file;   // empty: stderr in foreground, meta_dir/stripefs.log otherwise
  uint32_t admin_uid = 0;     // besides root, who may change admin settings
  int ost_threads = 2;        // service threads per OST
  // Seconds the kernel caches attributes, entries and negative entries.
  // Only this daemon changes the namespace and every change passes through
  // the kernel, which drops what a change makes stale (docs/design.md).
  double attr_timeout = 60.0;
  // Seconds a request may be in service at an OST before that OST is marked
  // unresponsive (see ost_status). Finite, above 0, at most 3600.
  double ost_timeout = 30.0;
  // The filesystem's shared key (rpc/auth.h), needed when OSTs are on OSSs
  // (oss://...); read at mount. TLS files if the OSSs use TLS.
  std::string key_file;
  std::string tls_ca, tls_cert, tls_key;
  // cache=writearound (the default): as writethrough, but a handle opened
  // for writing bypasses the kernel's page cache (FUSE direct_io), so its
  // bytes are copied twice instead of three times; O_RDONLY handles read
  // through the cache. O_RDWR handles only where the kernel keeps shared
  // mmap working on them (FUSE_DIRECT_IO_ALLOW_MMAP, Linux 6.6); else they
  // are write-through. cache=writethrough: every write(2) passes the page
  // cache and reaches an OST before it returns, and fails itself.
  // cache=writeback: the kernel's page cache
  // gathers writes and sends them to the daemon in large pieces, as a
  // Lustre client does; a failure to store them (ENOSPC, EIO) is reported
  // by fsync and close, and cached writes not yet sent are lost if the
  // daemon is killed (docs/design.md, "Write caching").
  bool writeback = false;
  bool direct_writes = true;  // cache=writearound
  // A client mount's `-o root_squash` (default) or `-o no_root_squash`
  // (client::MdsOptions::root_squash).
  bool root_squash = true;
  // The largest read request the kernel sends (FUSE's max_read); 0: the
  // daemon's choice, max_request if that was given, else 512 KiB (fs/ops.h,
  // kMaxRead).
  uint32_t max_read = 0;
  // The largest request the kernel may send (max_write and max_pages in
  // the INIT reply, and max_read unless given), so that I/O up to that
  // size is one request, which extent credits make atomic (README,
  // "Concurrent I/O on one file"). The kernel keeps at most
  // /proc/sys/fs/fuse/max_pages_limit pages (256 unless root raised it).
  // 0: 1 MiB (fs/ops.h, kMaxTransfer).
  uint32_t max_request = 0;
  // metrics=ADDRESS:PORT: serve Prometheus metrics over HTTP there (no
  // authentication: bind to loopback unless the network is trusted). Empty:
  // no metrics server.
  std::string metrics_address;
  uint16_t metrics_port = 0;
  // mdt_nrs=off: metadata operations skip the metadata service's request
  // scheduler (no mdt.* settings); for measuring what it costs.
  bool mdt_nrs = true;
  // extent_credits=off: reads and writes hold no extent credits, so
  // overlapping striped I/O may interleave stripe by stripe; for measuring.
  bool extent_credits = true;
  // io_uring=auto (the default): requests come over FUSE's io_uring queues
  // (Linux 6.14+, ring/fuse_ring.h) when the kernel offers them, else over
  // /dev/fuse, with one log line saying why; on: the mount fails if they
  // cannot be used; off: /dev/fuse only. The kernel offers them only when
  // root has set /sys/module/fuse/parameters/enable_uring (README).
  enum class Uring { kAuto, kOn, kOff };
  Uring io_uring = Uring::kAuto;
  // Entries per io_uring queue (one queue per CPU): the requests of one
  // CPU the daemon holds at once, waiting ones included; the kernel queues
  // the rest. 0: the daemon's choice (fs/mount.cc, RingDepth).
  uint32_t uring_depth = 0;
  // The nice value of the io_uring queue threads (ring::Options::queue_nice:
  // a queue thread is the only server of its CPU's requests; below 0
  // needs CAP_SYS_NICE, without which they keep the daemon's).
  int uring_nice = -20;
};

// Parses one "-o a,b=c" word into `options` (fs/mount_options.cc, which
// links without libfuse): our own keys are consumed, the rest kept for FUSE.
// Our keys need a value, parsed whole and range-checked:
//   log_level     trace|debug|info|warn|warning|error|critical|off
//   log_file      a path
//   admin_uid     0..4294967294
//   ost_threads   1..64
//   attr_timeout  seconds, finite, 0..86400
//   ost_timeout   seconds, finite, above 0, at most 3600
//   key           FILE: the shared key of a filesystem with OSTs on OSSs
//   tls_ca, tls_cert, tls_key   FILE: TLS to OSSs that use it
//   cache         writearound|writethrough|writeback
//   max_read      4096..1048576 (bytes; also passed to FUSE)
//   max_request   1M..16M (bytes or K/M binary units), a multiple of 4K
//   metrics       ADDRESS:PORT, an IPv4 or [IPv6] literal, port 0..65535
//   mdt_nrs       on|off
//   extent_credits on|off
//   io_uring      auto|on|off
//   uring_depth   8..1024
//   uring_nice    -20..19
// A later item overrides an earlier one. EINVAL with a message naming the
// item otherwise, and `options` is then left unchanged.
Status ParseMountOption(const std::string& word, MountOptions* options);

// Mounts and serves until unmounted. Without `foreground` it forks first and
// the calling process returns once the mount is up (0) or failed (its error
// printed). Returns a process exit code.
int RunMount(const MountOptions& options);

struct FsckOptions {
  std::string meta_dir;
  bool repair = false;
  // For OSTs on OSSs (oss://...): the shared key, and the TLS files if the
  // OSSs use TLS; without a key they are "not checked".
  std::string key_file;
  std::string tls_ca, tls_cert, tls_key;
};

// Checks (and with `repair` fixes) the unmounted filesystem whose metadata
// is in `meta_dir`: fsck/fsck.h says what. Prints one line per finding and
// a summary to stdout. Returns an exit code as e2fsck's: 0 clean, 1 all
// problems repaired, 4 problems left, 8 it could not run (the store is
// mounted (EBUSY), missing or unreadable; said on stderr).
int RunFsck(const FsckOptions& options);

}  // namespace sfs::fs
