// What the stripefs subcommands share: one way to fail, and one way to turn
// the errno of a setxattr/getxattr on a stripefs mount into advice.
#pragma once

#include <string>

namespace sfs::cli {

// Prints "stripefs: <message>" to stderr; returns the exit code 1.
int Fail(const std::string& message);

// "<what>: <strerror>" plus a hint where stripefs gives that errno a
// meaning (the daemon's log line says why a value was refused).
std::string Explain(const std::string& what, int err);

// The whole value of extended attribute `name` of `path`, retried while it
// grows between the size query and the read (statistics do). On failure
// returns false with `error` set to a message for Fail that starts with
// `what` (e.g. "get_param nrs_stats").
bool ReadXattr(const std::string& path, const std::string& name, const std::string& what,
               std::string* value, std::string* error);

// For commands of the form "COMMAND [options] MOUNTPOINT": `arg`, which is
// none of the command's options, is the mount point. Returns 0, or the exit
// code after saying what was wrong (an unknown option, a second operand).
int TakeMountpoint(const std::string& command, const std::string& arg, const char* usage,
                   std::string* mountpoint);
// The value of setting `name` (user.stripefs.<name>) of `mountpoint` into
// `value`. Returns 0, or the exit code after saying what was wrong (no mount
// point given, the read failed).
int ReadSetting(const std::string& command, const std::string& mountpoint,
                const std::string& name, const char* usage, std::string* value);

}  // namespace sfs::cli
