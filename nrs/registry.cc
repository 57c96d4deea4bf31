#include "nrs/registry.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

namespace sfs::nrs {
namespace {

// Settings arrive from setxattr and config files, which often carry a
// trailing newline, so every kind of ASCII blank counts.
constexpr std::string_view kBlanks = " \t\n\r\f\v";

std::string_view Trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  const size_t last = s.find_last_not_of(kBlanks);
  return s.substr(first, last - first + 1);
}

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
  spec = Trim(spec);
  while (!spec.empty()) {
    const size_t end = std::min(spec.find_first_of(kBlanks), spec.size());
    if (!out.empty()) out += ' ';
    out.append(spec.substr(0, end));
    spec = Trim(spec.substr(end));
  }
  return out;
}

Result<std::unique_ptr<Policy>> PolicyRegistry::Create(std::string_view spec,
                                                       const Tunables& tunables) const {
  spec = Trim(spec);
  const size_t name_end = std::min(spec.find_first_of(kBlanks), spec.size());
  const std::string_view name = spec.substr(0, name_end);
  const std::string_view args = Trim(spec.substr(name_end));

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
  return registry;
}

}  // namespace sfs::nrs
