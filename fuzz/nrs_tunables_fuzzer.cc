// Per-OST and per-head NRS tunables (control/nrs_settings.h) and the id lists
// of rule expressions (common/id_list.h). The first byte chooses:
//   a setting name ("ost3.hp.nrs_orr_quantum"): its canonical name splits
//     back to the same OST, heads and base;
//   a tunable value (the next byte picks the tunable): an accepted value
//     formats to text that parses back to the same text, a refused one
//     leaves the values as they were;
//   an id list ("500 1000-1999"): an accepted list prints text that parses
//     back to the same list, each range contains its ends and not their
//     neighbours outside every range.
#include <string>

#include "common/id_list.h"
#include "common/text.h"
#include "control/nrs_settings.h"
#include "fuzz/fuzz_check.h"

namespace sfs::fuzz {
namespace {

void Name(std::string_view text) {
  const control::SettingName split = control::SplitSettingName(text);
  Check(split.heads.regular || split.heads.high, "a name with no head", text);
  Check(split.head_given || (split.heads.regular && split.heads.high), "one head without a prefix",
        text);
  const std::string joined = control::JoinSettingName(split);
  const control::SettingName again = control::SplitSettingName(joined);
  Check(again.ost == split.ost && again.heads == split.heads &&
            again.head_given == split.head_given && again.base == split.base,
        "a setting name changed through its canonical form", text, joined);
}

void Tunable(std::string_view text) {
  if (text.empty()) return;
  const auto names = control::TunableNames();
  const std::string_view name = names[static_cast<uint8_t>(text[0]) % names.size()].name;
  const std::string_view value = text.substr(1);
  control::TunableValues values;
  const std::string before = control::FormatTunable(name, values);
  Status parsed = control::ParseTunable(name, value, &values);
  if (!parsed.ok()) {
    Check(parsed.err() == EINVAL, "a refusal other than EINVAL", text);
    Check(control::FormatTunable(name, values) == before, "a refused value changed the values", text);
    return;
  }
  const std::string formatted = control::FormatTunable(name, values);
  control::TunableValues fresh;
  Status again = control::ParseTunable(name, formatted, &fresh);
  if (!again.ok()) Fail("ParseTunable refused FormatTunable's text", formatted, again.message());
  Check(control::FormatTunable(name, fresh) == formatted, "a tunable changed through its text", text,
        formatted);
}

void Ids(std::string_view text) {
  IdList list;
  for (std::string_view entry : SplitAny(text, std::string(kBlanks) + ",")) {
    const size_t before = list.ranges().size();
    Status added = list.Add("uid", entry);
    if (!added.ok()) {
      Check(list.ranges().size() == before, "a refused entry was kept", entry);
      return;
    }
  }
  IdList again;
  const std::string printed = list.ToString();
  for (std::string_view entry : Words(printed)) {
    Status added = again.Add("uid", entry);
    if (!added.ok()) Fail("Add refused ToString's text", printed, added.message());
  }
  Check(again == list, "an id list changed through its text", text, printed);
  for (const IdRange& r : list.ranges()) {
    Check(r.first <= r.last && list.Contains(r.first) && list.Contains(r.last),
          "a range does not contain its ends", printed);
  }
  IdList sorted = list;
  sorted.Sort();
  for (const IdRange& r : list.ranges()) {
    Check(sorted.Contains(r.first) && sorted.Contains(r.last), "Sort lost a range", printed);
  }
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs::fuzz;
  DispatchByFirstByte(data, size, {Name, Tunable, Ids});
  return 0;
}
