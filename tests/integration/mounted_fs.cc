#include "mounted_fs.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace sfs::test {
namespace {

namespace stdfs = std::filesystem;

bool InMountinfo(const std::string& path) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, mount_point;
    fields >> id >> parent >> devno >> root >> mount_point;
    if (mount_point == path) return true;
  }
  return false;
}

// Waits for `pid` up to `timeout_ms`; true if it exited.
bool WaitExit(pid_t pid, int timeout_ms) {
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// The FUSE transport every mount of the binary uses, from CTest
// (tests/integration/CMakeLists.txt runs each binary once per transport):
// SFS_IT_TRANSPORT=io_uring or dev_fuse; unset: the daemon's default.
std::string TransportOption() {
  const char* transport = getenv("SFS_IT_TRANSPORT");
  if (transport == nullptr) return "";
  const std::string name = transport;
  if (name == "io_uring") return "io_uring=on";
  if (name == "dev_fuse") return "io_uring=off";
  return "";
}

// The io_uring run of a binary is skipped whole on a kernel without FUSE
// over io_uring; CTest's fixture (uring_param.sh) has turned the module
// parameter on where it exists.
class TransportEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* transport = getenv("SFS_IT_TRANSPORT");
    if (transport != nullptr && std::string(transport) == "io_uring" &&
        access("/sys/module/fuse/parameters/enable_uring", F_OK) != 0) {
      GTEST_SKIP() << "this kernel has no FUSE over io_uring (Linux 6.14+ with "
                      "CONFIG_FUSE_IO_URING): the io_uring run is skipped";
    }
  }
};
[[maybe_unused]] const auto* const kTransportEnvironment =
    ::testing::AddGlobalTestEnvironment(new TransportEnvironment);

}  // namespace

const char* StripefsBinary() { return STRIPEFS_BINARY; }

bool ClientMountRun() {
  const char* mode = getenv("SFS_IT_MOUNT");
  return mode != nullptr && std::string(mode) == "client";
}

bool OverIoUring() {
  const char* transport = getenv("SFS_IT_TRANSPORT");
  return transport != nullptr && std::string(transport) == "io_uring";
}

CommandResult Shell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) result.output.append(buf, n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

MountedFs::MountedFs() : MountedFs(Options{}) {}

MountedFs::MountedFs(const Options& options) : options_(options) {
  // run_and_clean.sh cleans up after this prefix.
  const char* prefix = getenv("SFS_IT_PREFIX");
  std::string tmpl = std::string(prefix != nullptr ? prefix : "/tmp/sfs-it-") + "XXXXXX";
  root_ = mkdtemp(tmpl.data());
  // Other users (runuser tests) must reach the mount point.
  chmod(root_.c_str(), 0755);
  mnt_ = root_ + "/mnt";
  meta_ = root_ + "/meta";
  log_ = options_.log_in_meta ? meta_ + "/stripefs.log" : root_ + "/stripefs.log";
  stdfs::create_directories(mnt_);
  if (options_.before_mkfs) options_.before_mkfs(*this);
  std::string mkfs = std::string(StripefsBinary()) + " mkfs --meta " + meta_;
  if (options_.client) {
    key_ = NewKey(root_ + "/key");
    std::vector<std::string> dirs;
    for (int i = 0; i < options_.osts; ++i) dirs.push_back(ost_dir(i));
    oss_ = std::make_unique<OssProcess>(root_ + "/oss.log", "127.0.0.2", key_, dirs);
    if (!oss_->running()) {
      fprintf(stderr, "the OSS did not start:\n%s\n", oss_->Log().c_str());
      return;
    }
    for (int i = 0; i < options_.osts; ++i) mkfs += " --ost " + oss_->Url(i);
    mkfs += " --key " + key_;
  } else {
    for (int i = 0; i < options_.osts; ++i) mkfs += " --ost " + ost_dir(i);
  }
  mkfs += " --stripe-count " + std::to_string(options_.stripe_count) + " --stripe-size " +
          options_.stripe_size + options_.mkfs_args;
  CommandResult formatted = Shell(mkfs);
  if (formatted.exit_code != 0) {
    fprintf(stderr, "mkfs failed: %s\n", formatted.output.c_str());
    return;
  }
  formatted_ = true;
  if (options_.client) {
    std::vector<std::string> mds_args = options_.mds_args;
    if (!options_.trusted.empty()) {
      mds_args.insert(mds_args.begin(), {"--trusted", options_.trusted});
    }
    mds_ = std::make_unique<MdsProcess>(root_ + "/mds.log", "127.0.0.3", key_, meta_, mds_args);
    if (!mds_->running()) {
      fprintf(stderr, "the MDS did not start:\n%s\n", mds_->Log().c_str());
      return;
    }
  }
  Mount();
}

std::string MountedFs::Source() const { return mds_ != nullptr ? mds_->Url() : meta_; }

MountedFs::~MountedFs() {
  if (daemon_ > 0 && !Unmount()) Kill();
  if (InMountinfo(mnt_)) Shell("fusermount3 -uz " + mnt_);
  mds_.reset();  // after its clients, before the OSS it reaches
  oss_.reset();
  if (freezable_ > 0) {
    Thaw();
    Shell("fusermount3 -uz " + freezable_dir_);
    kill(freezable_, SIGTERM);
    if (!WaitExit(freezable_, 5000)) {
      kill(freezable_, SIGKILL);
      waitpid(freezable_, nullptr, 0);
    }
  }
  for (const std::string& dir : tmpfs_) Shell("umount -l " + dir);
  if (getenv("SFS_KEEP_TEST_DIRS") == nullptr) {
    std::error_code ec;
    stdfs::remove_all(root_, ec);
  }
}

std::string MountedFs::ost_dir(int index) const { return root_ + "/ost" + std::to_string(index); }

std::string MountedFs::Stderr() const {
  std::ifstream in(root_ + "/daemon.stderr");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string MountedFs::Log() const {
  std::ifstream in(log_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool MountedFs::WaitMounted(bool want, int timeout_ms) const {
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    if (InMountinfo(mnt_) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool MountedFs::Mount() {
  std::vector<std::string> args = {StripefsBinary(), "mount", Source(), mnt_, "-f",
                                   "-o", "log_file=" + log_};
  if (!key_.empty()) {
    args.push_back("-o");
    args.push_back("key=" + key_);
  }
  if (options_.client && !options_.root_squash) {
    args.push_back("-o");
    args.push_back("no_root_squash");
  }
  // First, so that a test's own io_uring= wins.
  if (const std::string transport = TransportOption(); !transport.empty()) {
    args.push_back("-o");
    args.push_back(transport);
  }
  for (const std::string& option : options_.mount_options) {
    args.push_back("-o");
    args.push_back(option);
  }
  const std::string stderr_path = root_ + "/daemon.stderr";
  pid_t pid = fork();
  if (pid == 0) {
    if (options_.capture_stderr) {
      int fd = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) dup2(fd, 2);
    }
    if (options_.nofile_limit > 0) {
      const rlimit limit{static_cast<rlim_t>(options_.nofile_limit),
                         static_cast<rlim_t>(options_.nofile_limit)};
      setrlimit(RLIMIT_NOFILE, &limit);
    }
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  daemon_ = pid;
  for (int waited = 0; waited <= 10000; waited += 20) {
    if (InMountinfo(mnt_)) return true;
    if (waitpid(pid, nullptr, WNOHANG) == pid) break;  // it gave up
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  fprintf(stderr, "mount failed; log:\n%s\n", Log().c_str());
  if (waitpid(pid, nullptr, WNOHANG) == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  daemon_ = -1;
  return false;
}

bool MountedFs::Unmount() {
  if (daemon_ <= 0) return true;
  // A busy mount (a test left a file open) is retried briefly; if it stays
  // busy the daemon will not exit, so report failure (the destructor kills).
  bool detached = false;
  for (int attempt = 0; attempt < 50 && !detached; ++attempt) {
    detached = Shell("fusermount3 -u " + mnt_).exit_code == 0;
    if (!detached) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!detached) return false;
  bool exited = WaitExit(daemon_, 30000);
  if (exited) daemon_ = -1;
  return exited && !InMountinfo(mnt_);
}

void MountedFs::Kill() {
  if (daemon_ > 0) {
    kill(daemon_, SIGKILL);
    // Bounded: a daemon with a thread inside a request a stopped FUSE
    // server (freezefs) holds cannot die until it answers.
    if (!WaitExit(daemon_, 30000)) {
      fprintf(stderr, "daemon %d did not die within 30 s of SIGKILL; left unreaped\n", daemon_);
    }
    daemon_ = -1;
  }
  Shell("fusermount3 -uz " + mnt_);
  WaitMounted(false, 5000);
}

int MountedFs::Terminate() {
  if (daemon_ <= 0) return -1;
  kill(daemon_, SIGTERM);
  int status = -1;
  for (int waited = 0; waited <= 30000; waited += 20) {
    if (waitpid(daemon_, &status, WNOHANG) == daemon_) {
      daemon_ = -1;
      Shell("fusermount3 -uz " + mnt_ + " 2>/dev/null");
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  Kill();
  return -1;
}

bool MountedFs::MountFreezable(int index) {
  freezable_dir_ = ost_dir(index);
  const std::string backing = root_ + "/ost" + std::to_string(index) + ".backing";
  std::error_code ec;
  stdfs::create_directories(freezable_dir_, ec);
  stdfs::create_directories(backing, ec);
  pid_t pid = fork();
  if (pid == 0) {
    execl(FREEZEFS_BINARY, FREEZEFS_BINARY, backing.c_str(), freezable_dir_.c_str(), nullptr);
    _exit(127);
  }
  freezable_ = pid;
  for (int waited = 0; waited <= 10000; waited += 20) {
    if (InMountinfo(freezable_dir_)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  fprintf(stderr, "freezefs on %s did not come up\n", freezable_dir_.c_str());
  return false;
}

void MountedFs::Freeze() {
  if (freezable_ > 0) kill(freezable_, SIGSTOP);
}

void MountedFs::Thaw() {
  if (freezable_ > 0) kill(freezable_, SIGCONT);
}

bool MountedFs::MountExt4(int index, int size_mib, std::string* device) {
  const std::string dir = ost_dir(index);
  const std::string image = root_ + "/ost" + std::to_string(index) + ".ext4";
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  CommandResult made = Shell("truncate -s " + std::to_string(size_mib) + "M " + image +
                             " && mkfs.ext4 -q -F " + image + " && mount -o loop,errors=remount-ro " +
                             image + " " + dir + " && rmdir " + dir + "/lost+found");
  if (made.exit_code != 0) {
    fprintf(stderr, "ext4 on %s failed: %s\n", dir.c_str(), made.output.c_str());
    return false;
  }
  tmpfs_.push_back(dir);
  CommandResult source = Shell("findmnt -n -o SOURCE " + dir);
  std::string name = source.output.substr(0, source.output.find('\n'));
  *device = name.substr(name.rfind('/') + 1);
  return true;
}

std::vector<std::string> MountedFs::Objects(int index) const {
  std::vector<std::string> objects;
  std::error_code ec;
  const stdfs::path dir = stdfs::path(ost_dir(index)) / "objects";
  for (auto it = stdfs::recursive_directory_iterator(dir, ec);
       !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) objects.push_back(it->path().string());
  }
  return objects;
}

bool MountedFs::MountTmpfs(int index, const std::string& size) {
  return MountTmpfsAt(ost_dir(index), size);
}

bool MountedFs::MountTmpfsAt(const std::string& dir, const std::string& size) {
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  CommandResult mounted = Shell("mount -t tmpfs -o size=" + size + " tmpfs " + dir);
  if (mounted.exit_code != 0) {
    fprintf(stderr, "tmpfs on %s failed: %s\n", dir.c_str(), mounted.output.c_str());
    return false;
  }
  tmpfs_.push_back(dir);
  return true;
}

std::string MountedFs::PublicBinary() {
  const std::string copy = root_ + "/stripefs-public";
  if (access(copy.c_str(), X_OK) != 0) {
    Shell(std::string("cp ") + StripefsBinary() + " " + copy + " && chmod 0755 " + copy);
  }
  return copy;
}

}  // namespace sfs::test
