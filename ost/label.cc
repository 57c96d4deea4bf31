// The OST label is three "key=value" lines. Text, so an operator can read it
// with cat; written via rename so a crash leaves the old label or the new
// one, never half of either.
#include "ost/label.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <random>
#include <string_view>

#include "common/private_dir.h"

namespace sfs::ost {
namespace {

constexpr size_t kMaxLabelBytes = 4096;  // a label is ~100 bytes; more is not ours

// Closes an fd on every return path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  const int fd_;
};

Status Fail(const std::string& dir, const char* what) {
  int err = errno;
  return ErrnoStatus(err, fmt::format("ost {}: {} label", dir, what));
}

Status WriteAll(int fd, std::string_view text, const std::string& dir) {
  while (!text.empty()) {
    ssize_t n = write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(dir, "write");
    }
    text.remove_prefix(n);
  }
  return Status::Ok();
}

bool ValidUuidField(const std::string& s) {
  return !s.empty() && s.find_first_of("\n=") == std::string::npos;
}

}  // namespace

std::string FormatLabel(const Label& label) {
  return fmt::format("fs_uuid={}\nindex={}\nost_uuid={}\n", label.fs_uuid, label.index,
                     label.ost_uuid);
}

Result<Label> ParseLabel(std::string_view text) {
  auto malformed = [](std::string_view why) {
    return Status::Error(EINVAL, "malformed label: " + std::string(why));
  };
  if (text.size() > kMaxLabelBytes) return malformed("too large");
  Label label;
  bool seen_fs = false, seen_index = false, seen_ost = false;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t eol = rest.find('\n');
    if (eol == std::string_view::npos) return malformed("last line is unterminated");
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol + 1);
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) return malformed("a line has no '='");
    std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (value.empty()) return malformed(fmt::format("empty {}", key));
    bool* seen = nullptr;
    if (key == "fs_uuid") {
      seen = &seen_fs;
      label.fs_uuid = std::string(value);
    } else if (key == "ost_uuid") {
      seen = &seen_ost;
      label.ost_uuid = std::string(value);
    } else if (key == "index") {
      seen = &seen_index;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), label.index);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return malformed("index is not a number");
      }
    } else {
      continue;  // a newer mkfs may add keys; they do not make this one wrong
    }
    if (*seen) return malformed(fmt::format("{} appears twice", key));
    *seen = true;
  }
  if (!seen_fs || !seen_index || !seen_ost) return malformed("missing a key");
  return label;
}

Status WriteLabel(const std::string& dir, const Label& label) {
  if (!ValidUuidField(label.fs_uuid) || !ValidUuidField(label.ost_uuid)) {
    return Status::Error(EINVAL,
                         fmt::format("ost {}: label uuids must be one non-empty word", dir));
  }
  Fd dir_fd(open(dir.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
  if (dir_fd.get() < 0) return Fail(dir, "open directory for");
  const std::string text = FormatLabel(label);
  {
    Fd tmp(openat(dir_fd.get(), kLabelTempFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kPrivateFileMode));
    if (tmp.get() < 0) return Fail(dir, "create temporary");
    SFS_RETURN_IF_ERROR(WriteAll(tmp.get(), text, dir));
    if (fsync(tmp.get()) != 0) return Fail(dir, "fsync");
  }
  if (renameat(dir_fd.get(), kLabelTempFile, dir_fd.get(), kLabelFile) != 0) {
    return Fail(dir, "rename");
  }
  // The rename itself is only durable once the directory is.
  if (fsync(dir_fd.get()) != 0) return Fail(dir, "fsync directory of");
  return Status::Ok();
}

Result<Label> ReadLabel(const std::string& dir) {
  std::string path = dir + "/" + kLabelFile;
  Fd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Fail(dir, "open");
  // One byte more than a label may have, so ParseLabel sees "too large".
  std::string text(kMaxLabelBytes + 1, '\0');
  size_t have = 0;
  while (have < text.size()) {
    ssize_t n = read(fd.get(), text.data() + have, text.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(dir, "read");
    }
    if (n == 0) break;
    have += n;
  }
  text.resize(have);
  auto label = ParseLabel(text);
  if (!label.ok()) {
    return Status::Error(EINVAL,
                         fmt::format("ost {}: {} in {}", dir, label.status().message(), path));
  }
  return label;
}

std::string NewUuid() {
  std::random_device rd;
  uint8_t b[16];
  for (int i = 0; i < 16; i += 4) {
    uint32_t r = rd();
    for (int j = 0; j < 4; ++j) b[i + j] = static_cast<uint8_t>(r >> (8 * j));
  }
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  return fmt::format(
      "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
      "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

Status CheckReusable(const std::string& dir, bool force) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  if (stdfs::is_empty(dir, ec) && !ec) return Status::Ok();
  auto label = ReadLabel(dir);
  const std::string what = label.ok() ? "an OST of filesystem " + label->fs_uuid : "other data";
  if (!force) {
    return Status::Error(EEXIST, "OST directory " + dir + " already holds " + what +
                                     " (use --force to reuse a stripefs OST)");
  }
  for (const auto& entry : stdfs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != kLabelFile && name != "objects") {
      return Status::Error(EEXIST, "OST directory " + dir + " holds " + name +
                                       ", which stripefs did not write; refusing even with --force");
    }
  }
  if (ec) return Status::Error(ec.value(), "OST directory " + dir + ": " + ec.message());
  return Status::Ok();
}

void ClearOstDir(const std::string& dir) {
  namespace stdfs = std::filesystem;
  std::error_code ec;
  stdfs::remove_all(stdfs::path(dir) / "objects", ec);
  stdfs::remove(stdfs::path(dir) / kLabelFile, ec);
}

}  // namespace sfs::ost
