#include "common/private_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

namespace sfs {

Result<bool> MakePrivate(int dir_fd, const std::string& what) {
  struct stat st;
  if (fstat(dir_fd, &st) != 0) return ErrnoStatus(errno, "stat " + what);
  if ((st.st_mode & 077) == 0) return false;
  const mode_t mode = st.st_mode & 07700;
  if (fchmod(dir_fd, mode) != 0) {
    if (errno != EROFS) return ErrnoStatus(errno, "chmod " + what);
    // Nothing can be changed there; the data is still served.
    Logger("fs")->warn(
        "{} is open to other users (mode {:04o}) and on a read-only filesystem: "
        "make it private (chmod 0700) once it is writable",
        what, st.st_mode & 07777);
    return false;
  }
  Logger("fs")->warn(
      "{} was open to other users (mode {:04o}); made it private ({:04o}): it "
      "holds every user's data and names",
      what, st.st_mode & 07777, mode);
  return true;
}

Result<bool> MakePrivate(const std::string& path, const std::string& what) {
  int fd = open(path.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open " + what);
  Result<bool> made = MakePrivate(fd, what);
  close(fd);
  return made;
}

}  // namespace sfs
