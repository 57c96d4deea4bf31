// CRR-N weight rule commands (nrs/crrn_weights.h): each line of the input is
// applied to the set the previous lines built. After every accepted command
// the set must survive its own persistence, every weight stays in 1..64 and
// the rule count within its bound. The whole input is also tried as stored
// text (Deserialize), with the same check.
#include <memory>
#include <string>

#include "common/text.h"
#include "fuzz/fuzz_check.h"
#include "nrs/crrn_weights.h"

namespace sfs::fuzz {
namespace {

void CheckPersistence(const nrs::CrrnWeights& set) {
  const std::string text = set.Serialize();
  auto back = nrs::CrrnWeights::Deserialize(text);
  if (!back.ok()) Fail("Deserialize refused what Serialize wrote", text, back.status().message());
  const std::string again = (*back)->Serialize();
  Check(again == text, "Serialize(Deserialize(Serialize())) differs", text, again);
  Check(set.rules().size() <= nrs::kMaxCrrnWeightRules, "too many rules", text);
  for (const nrs::CrrnWeightRule& rule : set.rules()) {
    Check(rule.weight >= 1 && rule.weight <= nrs::kMaxCrrnWeight, "a weight out of range", text);
  }
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  fuzz::FuzzRuleCommands(fuzz::Text(data, size), nrs::CrrnWeights::Empty(),
                         [](const nrs::CrrnWeights& set) { fuzz::CheckPersistence(set); });
  return 0;
}
