// The nice values of a process's threads, for the tests of the io_uring
// queue threads' priority (the ring's unit test and the mount's
// transport test).
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sfs::test {

// The nice value of each thread of `pid` whose name begins with
// `name_prefix`, from /proc/PID/task/*/stat (its 19th field).
inline std::vector<int> NiceOfThreads(pid_t pid, const std::string& name_prefix) {
  std::vector<int> nice;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return nice;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = dir + "/" + e->d_name;
    std::string comm;
    std::getline(std::ifstream(task + "/comm"), comm);
    if (comm.rfind(name_prefix, 0) != 0) continue;
    std::string stat;
    std::getline(std::ifstream(task + "/stat"), stat);
    // After the command's closing parenthesis: state is field 3, nice 19.
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 3; i < 19 && rest >> field;) ++i;
    int value = 0;
    if (rest >> value) nice.push_back(value);
  }
  closedir(d);
  return nice;
}

}  // namespace sfs::test
