#include "nrs/target.h"

#include "common/log.h"

namespace sfs::nrs {

void ApplySettings(Target& target, const TargetSettings& previous, const TargetSettings& next,
                   const PolicyRegistry& registry) {
  target.SetHighPriority(next.hp_ops, next.hp_ratio);
  target.SetEpochLength(next.epoch_length);
  constexpr Head kHeads[] = {Head::kRegular, Head::kHighPriority};
  for (size_t head = 0; head < 2; head++) {
    const std::string& spec = next.specs[head];
    if (spec == previous.specs[head]) {
      target.Retune(kHeads[head], next.tunables[head]);
      continue;
    }
    if (spec == "fifo") {
      target.StopPolicy(kHeads[head]);
      continue;
    }
    auto policy = registry.Create(spec, next.tunables[head]);
    if (!policy.ok()) {
      Logger("nrs")->error("{}: starting '{}' failed after validation: {}", HeadName(kHeads[head]),
                           spec, policy.status().ToString());
      continue;
    }
    target.StartPolicy(kHeads[head], std::move(policy).value());
  }
}

}  // namespace sfs::nrs
