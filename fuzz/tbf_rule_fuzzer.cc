// TBF rule commands (nrs/tbf_rules.h): each line of the input is applied to
// the rule set the previous lines built. After every accepted command the
// set must survive its own persistence: Deserialize(Serialize()) is
// accepted and serializes to the same text, with the same rules. The whole
// input is also tried as stored text (Deserialize), with the same check.
#include <memory>
#include <string>

#include "common/text.h"
#include "fuzz/fuzz_check.h"
#include "nrs/tbf_rules.h"

namespace sfs::fuzz {
namespace {

void CheckPersistence(const nrs::TbfRuleSet& set) {
  const std::string text = set.Serialize();
  auto back = nrs::TbfRuleSet::Deserialize(text);
  if (!back.ok()) Fail("Deserialize refused what Serialize wrote", text, back.status().message());
  const std::string again = (*back)->Serialize();
  Check(again == text, "Serialize(Deserialize(Serialize())) differs", text, again);
  Check((*back)->rules().size() == set.rules().size(), "rule count changed", text, again);
  for (size_t i = 0; i < set.rules().size(); ++i) {
    const nrs::TbfRule& a = set.rules()[i];
    const nrs::TbfRule& b = (*back)->rules()[i];
    Check(a.name == b.name && a.expression == b.expression && a.fields == b.fields &&
              a.rate == b.rate && a.bps == b.bps && a.depth == b.depth && a.realtime == b.realtime,
          "a rule changed through persistence", a.ToString(), b.ToString());
  }
  const nrs::TbfRule& d = set.default_rule();
  const nrs::TbfRule& e = (*back)->default_rule();
  Check(d.rate == e.rate && d.bps == e.bps && d.depth == e.depth && d.realtime == e.realtime,
        "the default rule changed through persistence", d.ToString(), e.ToString());
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  fuzz::FuzzRuleCommands(fuzz::Text(data, size), nrs::TbfRuleSet::Empty(),
                         [](const nrs::TbfRuleSet& set) { fuzz::CheckPersistence(set); });
  return 0;
}
