// A real stripefs for integration tests: formatted in a fresh temporary
// folder, mounted by the real binary in the foreground as a child process,
// and always unmounted by the destructor, even when the test failed.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "servers.h"

namespace sfs::test {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs `command` through /bin/sh; never throws.
CommandResult Shell(const std::string& command);

// Whether this run mounts every MountedFs as a client of a metadata
// service (SFS_IT_MOUNT=client, set by CTest for the integration_client
// runs): an OSS process serves the OST directories, an MDS process the
// metadata directory, and the mount is `stripefs mount mds://...`.
bool ClientMountRun();

class MountedFs {
 public:
  struct Options {
    // A client mount of an MDS (see ClientMountRun) instead of the
    // one-process mount.
    bool client = ClientMountRun();
    // More `stripefs mds` arguments for a client mount's MDS.
    std::vector<std::string> mds_args;
    // The MDS's --trusted list ("": none) and whether the client mounts
    // with -o root_squash: by default the tests' root stays root, as the
    // POSIX suites need (a trusted client with -o no_root_squash).
    std::string trusted = "127.0.0.0/8";
    bool root_squash = false;
    int osts = 4;
    int stripe_count = 4;
    std::string stripe_size = "1M";
    std::vector<std::string> mount_options;  // each passed as -o
    // Runs before mkfs, when only the empty mount point exists: e.g. to put
    // an OST on its own small filesystem with MountTmpfs.
    std::function<void(MountedFs&)> before_mkfs;
    // The daemon logs to meta_dir()/stripefs.log instead of root()/stripefs.log.
    bool log_in_meta = false;
    // Sends the daemon's stderr to root()/daemon.stderr (see Stderr()).
    bool capture_stderr = false;
    // Starts the daemon with this RLIMIT_NOFILE (soft = hard); 0 = inherit.
    int nofile_limit = 0;
    // More mkfs arguments (e.g. " --ost oss://... --key FILE"), after the
    // `osts` local ones; before_mkfs may set them (the OSS's port).
    std::string mkfs_args;
  };
  MountedFs();  // 4 OSTs, stripe_count 4, 1 MiB
  explicit MountedFs(const Options& options);
  ~MountedFs();
  MountedFs(const MountedFs&) = delete;
  MountedFs& operator=(const MountedFs&) = delete;

  bool mounted() const { return daemon_ > 0; }
  bool client() const { return options_.client; }
  // A client mount's servers (null otherwise).
  MdsProcess* mds() const { return mds_.get(); }
  OssProcess* oss() const { return oss_.get(); }
  // The mount source: the metadata directory, or mds://ADDRESS:PORT.
  std::string Source() const;
  const std::string& root() const { return root_; }        // temporary folder
  const std::string& mnt() const { return mnt_; }          // mount point
  const std::string& meta_dir() const { return meta_; }
  std::string ost_dir(int index) const;
  std::string Path(const std::string& relative) const { return mnt_ + "/" + relative; }
  std::string Log() const;  // the daemon's log so far
  std::string Stderr() const;  // what the daemon wrote to stderr (capture_stderr)
  pid_t daemon_pid() const { return daemon_; }

  // Mounts again after Unmount/Kill; returns false on failure.
  bool Mount();
  // Clean unmount (fusermount3 -u) and waits for the daemon to exit.
  bool Unmount();
  // SIGKILLs the daemon mid-flight and detaches the dead mount.
  void Kill();
  // SIGTERMs the daemon (as a service manager stops it) and returns its
  // exit status as waitpid reports it, or -1 if it did not exit in 30 s.
  int Terminate();

  // Every object file (regular files under */objects/) of OST `index`.
  std::vector<std::string> Objects(int index) const;

  // Mounts a tmpfs of `size` (e.g. "4m") on OST `index`'s directory,
  // creating it; the destructor unmounts it after the filesystem.
  bool MountTmpfs(int index, const std::string& size);
  // The same on any directory (e.g. the metadata directory).
  bool MountTmpfsAt(const std::string& dir, const std::string& size);
  // OST `index`'s directory on a passthrough FUSE filesystem of the test's
  // own (tests/integration/freezefs.cc) that Freeze() stops, as a hung disk
  // would be, and Thaw() lets go; the destructor unmounts it after the
  // filesystem. For before_mkfs.
  bool MountFreezable(int index);
  void Freeze();
  void Thaw();

  // An ext4 of `size_mib` on a loop device, mounted with errors=remount-ro
  // on OST `index`'s directory; its block device name (e.g. "loop3") is
  // set in `device` for /sys/fs/ext4/<device>/.
  bool MountExt4(int index, int size_mib, std::string* device);

  // A copy of the stripefs binary that any user may run (the build tree may
  // sit in a directory only root can enter, e.g. a clean clone in mktemp -d).
  std::string PublicBinary();

  // True if mkfs succeeded in the constructor.
  bool formatted() const { return formatted_; }
  // For before_mkfs: more mkfs arguments (Options::mkfs_args).
  void AddMkfsArgs(const std::string& args) { options_.mkfs_args += args; }
  void AddMountOption(const std::string& option) { options_.mount_options.push_back(option); }

 private:
  bool WaitMounted(bool want, int timeout_ms) const;

  Options options_;
  std::string root_, mnt_, meta_, log_;
  pid_t daemon_ = -1;
  bool formatted_ = false;
  std::vector<std::string> tmpfs_;  // mounted by MountTmpfs/MountExt4, unmounted last
  pid_t freezable_ = -1;            // the freezefs helper, if any
  std::string freezable_dir_;
  // A client mount's key and servers, stopped after the mount.
  std::string key_;
  std::unique_ptr<OssProcess> oss_;
  std::unique_ptr<MdsProcess> mds_;
};

// The stripefs binary under test.
const char* StripefsBinary();
// Whether this run mounts over FUSE's io_uring queues (SFS_IT_TRANSPORT,
// set per run by CTest), for the few checks that differ by transport.
bool OverIoUring();

}  // namespace sfs::test
