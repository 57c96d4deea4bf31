// Errors as values. A Status is "ok" or an errno plus a one-line message that
// says what went wrong and where; Result<T> is a T or a non-ok Status.
// The errno is what a FUSE reply finally carries, so every failure inside
// stripefs is classified by the errno a POSIX caller would expect.
#pragma once

#include <cerrno>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace sfs {

class Status {
 public:
  Status() = default;  // ok
  static Status Ok() { return Status(); }
  // REQUIRES: err > 0.
  static Status Error(int err, std::string message) {
    return Status(err, std::move(message));
  }

  bool ok() const { return err_ == 0; }
  int err() const { return err_; }
  const std::string& message() const { return message_; }
  // "message (strerror)" for logs.
  std::string ToString() const;

 private:
  Status(int err, std::string message) : err_(err), message_(std::move(message)) {}
  int err_ = 0;
  std::string message_;
};

// Wraps the current or given errno with what was being done.
Status ErrnoStatus(int err, std::string_view context);

template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  int err() const { return status_.err(); }
  // REQUIRES: ok().
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

inline const Status& StatusOf(const Status& s) { return s; }
template <class T>
const Status& StatusOf(const Result<T>& r) {
  return r.status();
}

}  // namespace sfs

// Early return of a failed Status or Result from a function that returns
// Status or Result<U>.
#define SFS_RETURN_IF_ERROR(expr)                              \
  do {                                                         \
    const auto& sfs_result_ = (expr);                          \
    if (!sfs_result_.ok()) return ::sfs::StatusOf(sfs_result_); \
  } while (0)

