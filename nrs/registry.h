// A plain object mapping policy names to factories. The mount builds one
// (BuiltinPolicies, in fs/mount.cc) and hands it to the Filesystem;
// nothing registers itself through a global.
//
// Thread safety: Register only before the registry is shared; Create and
// Names are const and safe from any thread afterwards.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "nrs/policy.h"

namespace sfs::nrs {

// Builds a policy from the words after its name ("tbf uid" -> "uid") and the
// head's tunables. Returns EINVAL with a message for arguments or tunables it
// does not accept.
using PolicyFactory = std::function<Result<std::unique_ptr<Policy>>(std::string_view args,
                                                                    const Tunables& tunables)>;

class PolicyRegistry {
 public:
  void Register(std::string name, PolicyFactory factory);

  // `spec` is "name [args...]". ENOENT-free on purpose: an unknown name is a
  // malformed setting, so it is EINVAL.
  Result<std::unique_ptr<Policy>> Create(std::string_view spec, const Tunables& tunables) const;
  // The canonical form of `spec`: name and arguments with single blanks.
  static std::string Canonical(std::string_view spec);

  std::vector<std::string> Names() const;
  bool Has(std::string_view name) const;

 private:
  std::map<std::string, PolicyFactory, std::less<>> factories_;
};

// A registry with every policy stripefs ships: fifo, crrn, orr, tbf, delay,
// epoch.
PolicyRegistry BuiltinPolicies();

}  // namespace sfs::nrs
