// Mount options (fs/stripefs.h ParseMountOption). A refused word changes
// nothing; an accepted one leaves every value in its documented range, and
// gives the same options as its items parsed one by one.
#include <cmath>
#include <string>

#include "fs/stripefs.h"
#include "fuzz/fuzz_check.h"

namespace sfs::fuzz {
namespace {

bool Same(const fs::MountOptions& a, const fs::MountOptions& b) {
  return a.log_level == b.log_level && a.log_file == b.log_file && a.admin_uid == b.admin_uid &&
         a.ost_threads == b.ost_threads && a.attr_timeout == b.attr_timeout &&
         a.ost_timeout == b.ost_timeout && a.max_request == b.max_request &&
         a.fuse_options == b.fuse_options;
}

}  // namespace
}  // namespace sfs::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sfs;
  const std::string word(fuzz::Text(data, size));
  const fs::MountOptions before;
  fs::MountOptions options;
  Status s = fs::ParseMountOption(word, &options);
  if (!s.ok()) {
    fuzz::Check(s.err() == EINVAL && !s.message().empty(), "a refusal without EINVAL and a message",
                word);
    fuzz::Check(fuzz::Same(options, before), "a refused word changed the options", word);
    return 0;
  }
  fuzz::Check(options.admin_uid != 4294967295u, "admin_uid (uid_t)-1 accepted", word);
  fuzz::Check(options.ost_threads >= 1 && options.ost_threads <= 64, "ost_threads out of range",
              word);
  fuzz::Check(std::isfinite(options.attr_timeout) && options.attr_timeout >= 0 &&
                  options.attr_timeout <= 86400,
              "attr_timeout out of range", word);
  fuzz::Check(
      std::isfinite(options.ost_timeout) && options.ost_timeout > 0 && options.ost_timeout <= 3600,
      "ost_timeout out of range", word);
  fuzz::Check(options.max_request == 0 || (options.max_request >= (1u << 20) &&
                                            options.max_request <= (16u << 20) &&
                                            options.max_request % 4096 == 0),
              "max_request out of range", word);
  for (const std::string& item : options.fuse_options) {
    fuzz::Check(!item.empty() && item.find(',') == std::string::npos, "a bad FUSE option kept",
                word, item);
  }
  // Item by item, in order, gives the same result.
  fs::MountOptions one_by_one;
  size_t start = 0;
  while (start <= word.size()) {
    const size_t comma = std::min(word.find(',', start), word.size());
    Status item = fs::ParseMountOption(word.substr(start, comma - start), &one_by_one);
    fuzz::Check(item.ok(), "an item of an accepted word is refused alone", word);
    start = comma + 1;
  }
  fuzz::Check(fuzz::Same(options, one_by_one), "items one by one differ from the whole word", word);
  return 0;
}
