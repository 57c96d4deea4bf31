#include "nrs/registry.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

#include "common/text.h"

namespace sfs::nrs {
namespace {

Result<std::unique_ptr<Policy>> NewFifoFromArgs(std::string_view args, const Tunables&) {
  if (!args.empty()) {
    return Status::Error(EINVAL,
                         "NRS policy 'fifo' takes no arguments, got '" + std::string(args) + "'");
  }
  return NewFifoPolicy();
}

}  // namespace

void PolicyRegistry::Register(std::string name, PolicyFactory factory) {
  // A second registration replaces the first: main() decides, not the order
  // in which modules happen to register.
  factories_[std::move(name)] = std::move(factory);
}

std::string PolicyRegistry::Canonical(std::string_view spec) {
  std::string out;
  for (std::string_view word : Words(spec)) {
    if (!out.empty()) out += ' ';
    out.append(word);
  }
  return out;
}

Result<std::unique_ptr<Policy>> PolicyRegistry::Create(std::string_view spec,
                                                       const Tunables& tunables) const {
  const auto [name, args] = SplitWord(spec);
  auto it = factories_.find(name);
  if (name.empty() || it == factories_.end()) {
    return Status::Error(EINVAL, "unknown NRS policy '" + std::string(name) + "'");
  }
  return it->second(args, tunables);
}

std::vector<std::string> PolicyRegistry::Names() const {
  std::vector<std::string> names;
  names.reserve(factories_.size());
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

bool PolicyRegistry::Has(std::string_view name) const {
  return factories_.find(name) != factories_.end();
}

PolicyRegistry BuiltinPolicies() {
  PolicyRegistry registry;
  registry.Register("fifo", NewFifoFromArgs);
  registry.Register("crrn", NewCrrnPolicy);
  registry.Register("orr", NewOrrPolicy);
  registry.Register("delay", NewDelayPolicy);
  registry.Register("tbf", NewTbfPolicy);
  registry.Register("epoch", NewEpochPolicy);
  return registry;
}

}  // namespace sfs::nrs
