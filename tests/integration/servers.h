// `stripefs oss -f` and `stripefs mds -f` processes for integration tests:
// each listens on ADDRESS:0 (a free port, read back from its log) of a
// 127.0.0.x address, and is stopped (SIGTERM, then SIGKILL) by its
// destructor.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sfs::test {

class ServerProcess {
 public:
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;
  virtual ~ServerProcess() { Stop(); }

  // Starts it again where it listened before (after Stop or SIGKILL).
  bool Restart();
  void Signal(int signal);
  bool running() const { return !address_.empty() && pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& address() const { return address_; }  // ADDRESS:PORT
  std::string Log() const;
  // SIGTERM; the exit status as waitpid says, -1 if it did not stop in 30 s
  // (then SIGKILL).
  int Stop();

 protected:
  // `command`: "oss" or "mds"; `tail`: the arguments after the common ones.
  ServerProcess(std::string command, std::string log, std::string host, std::string key_file,
                std::vector<std::string> tail);
  void Start(const std::string& listen);

 private:
  const std::string command_, log_, host_, key_file_;
  const std::vector<std::string> tail_;
  std::string address_;
  pid_t pid_ = -1;
};

// An OSS serving `dirs` (created), or `count` new directories under `root`.
class OssProcess final : public ServerProcess {
 public:
  OssProcess(const std::string& root, const std::string& name, const std::string& address,
             const std::string& key_file, int count, std::vector<std::string> extra_args = {},
             const std::string& listen = "");
  OssProcess(const std::string& log, const std::string& address, const std::string& key_file,
             std::vector<std::string> dirs);
  std::string Url(int dir) const { return "oss://" + address() + dirs_[dir]; }
  const std::string& dir(int i) const { return dirs_[i]; }

 private:
  const std::vector<std::string> dirs_;
};

// An MDS serving the metadata directory `meta_dir`.
class MdsProcess final : public ServerProcess {
 public:
  MdsProcess(const std::string& log, const std::string& address, const std::string& key_file,
             const std::string& meta_dir, std::vector<std::string> extra_args = {});
  std::string Url() const { return "mds://" + address(); }
};

// Starts `args` (the program first) as a child process; its pid.
pid_t Spawn(std::vector<std::string> args);

// A new key file at `path` (stripefs key new).
std::string NewKey(const std::string& path);

}  // namespace sfs::test
