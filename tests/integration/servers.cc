#include "servers.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/close_range.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "file_util.h"

namespace sfs::test {
namespace {

namespace stdfs = std::filesystem;

std::vector<std::string> Created(std::vector<std::string> dirs) {
  for (const std::string& dir : dirs) stdfs::create_directories(dir);
  return dirs;
}

std::vector<std::string> Numbered(const std::string& root, const std::string& name, int count) {
  std::vector<std::string> dirs;
  for (int i = 0; i < count; ++i) dirs.push_back(root + "/" + name + "-ost" + std::to_string(i));
  return dirs;
}

std::vector<std::string> Joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

ServerProcess::ServerProcess(std::string command, std::string log, std::string host,
                             std::string key_file, std::vector<std::string> tail)
    : command_(std::move(command)),
      log_(std::move(log)),
      host_(std::move(host)),
      key_file_(std::move(key_file)),
      tail_(std::move(tail)) {}

bool ServerProcess::Restart() {
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
  const std::string was = address_;
  address_.clear();
  Start(was);
  return address_ == was;
}

void ServerProcess::Signal(int signal) { kill(pid_, signal); }

std::string ServerProcess::Log() const { return ReadFile(log_).value_or(""); }

void ServerProcess::Start(const std::string& listen) {
  std::vector<std::string> args = {StripefsBinary(), command_,   "--listen",  listen.empty() ? host_ + ":0" : listen,
                                   "--key",          key_file_,  "--log-file", log_, "-f"};
  args.insert(args.end(), tail_.begin(), tail_.end());
  const size_t logged = Log().size();
  pid_ = Spawn(std::move(args));
  // "listening on A (port N)" (oss), "serving M on A (port N)" (mds).
  const std::regex listening(R"(on \S+ \(port (\d+)\))");
  WaitFor([&] {
    std::smatch match;
    const std::string log = Log().substr(logged);
    if (!std::regex_search(log, match, listening)) return false;
    address_ = host_ + ":" + match[1].str();
    return true;
  }, 20000);
}

int ServerProcess::Stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int status = -1;
  for (int i = 0; i < 300 && waitpid(pid_, &status, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (status == -1) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
  return status;
}

OssProcess::OssProcess(const std::string& root, const std::string& name,
                       const std::string& address, const std::string& key_file, int count,
                       std::vector<std::string> extra_args, const std::string& listen)
    : ServerProcess("oss", root + "/" + name + ".log", address, key_file,
                    Joined(std::move(extra_args), Created(Numbered(root, name, count)))),
      dirs_(Numbered(root, name, count)) {
  Start(listen);
}

OssProcess::OssProcess(const std::string& log, const std::string& address,
                       const std::string& key_file, std::vector<std::string> dirs)
    : ServerProcess("oss", log, address, key_file, Created(dirs)), dirs_(std::move(dirs)) {
  Start("");
}

MdsProcess::MdsProcess(const std::string& log, const std::string& address,
                       const std::string& key_file, const std::string& meta_dir,
                       std::vector<std::string> extra_args)
    : ServerProcess("mds", log, address, key_file, Joined(std::move(extra_args), {meta_dir})) {
  Start("");
}

pid_t Spawn(std::vector<std::string> args) {
  const pid_t pid = fork();
  if (pid == 0) {
    // Not the test's descriptors: a server holding a file of a mount open
    // would keep the kernel from releasing it when the test closes it.
    close_range(3, ~0U, 0);
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

std::string NewKey(const std::string& path) {
  EXPECT_EQ(Shell(std::string(StripefsBinary()) + " key new " + path).exit_code, 0);
  return path;
}

}  // namespace sfs::test
