// The OST label text (ost/label.h ParseLabel): FormatLabel's text of a
// label it accepts must parse back to an equal label.
#include <string>

#include "fuzz/fuzz_check.h"
#include "ost/label.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  const std::string_view text = fuzz::Text(data, size);
  auto label = ost::ParseLabel(text);
  if (!label.ok()) {
    fuzz::Check(label.err() == EINVAL, "a malformed label that is not EINVAL", text);
    return 0;
  }
  const std::string formatted = ost::FormatLabel(*label);
  auto again = ost::ParseLabel(formatted);
  if (!again.ok())
    fuzz::Fail("ParseLabel refused FormatLabel's text", formatted, again.status().message());
  fuzz::Check(again->fs_uuid == label->fs_uuid && again->index == label->index &&
                  again->ost_uuid == label->ost_uuid,
              "the label changed through its text", text, formatted);
  return 0;
}
