#include "common/id_list.h"

#include <algorithm>
#include <cerrno>
#include <charconv>

namespace sfs {
namespace {

// The id `word` is, or why not (a message naming `field`).
Result<uint32_t> ParseId(std::string_view field, std::string_view word) {
  uint32_t id = 0;
  auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), id);
  // from_chars accepts no sign or blank, so "+5" and " 5" are refused.
  const std::string quoted = std::string(field) + ": '" + std::string(word) + "'";
  if (ec == std::errc::result_out_of_range) {
    return Status::Error(EINVAL, quoted + " is out of range 0..4294967295");
  }
  if (word.empty() || ec != std::errc() || end != word.data() + word.size()) {
    return Status::Error(EINVAL, quoted + " is not a number (an id, or a range first-last)");
  }
  return id;
}

}  // namespace

Status IdList::Add(std::string_view field, std::string_view entry) {
  // A '-' at 0 would be a negative number, which no id is.
  const size_t dash = entry.find('-', 1);
  auto first = ParseId(field, entry.substr(0, dash));
  if (!first.ok()) return first.status();
  IdRange range{*first, *first};
  if (dash != std::string_view::npos) {
    auto last = ParseId(field, entry.substr(dash + 1));
    if (!last.ok()) return last.status();
    range.last = *last;
  }
  if (range.first > range.last) {
    return Status::Error(
        EINVAL, std::string(field) + ": range '" + std::string(entry) + "' ends before it starts");
  }
  ranges_.push_back(range);
  return Status::Ok();
}

bool IdList::Contains(uint32_t id) const {
  return std::any_of(ranges_.begin(), ranges_.end(),
                     [id](const IdRange& r) { return r.first <= id && id <= r.last; });
}

void IdList::Sort() {
  std::sort(ranges_.begin(), ranges_.end());
  ranges_.erase(std::unique(ranges_.begin(), ranges_.end()), ranges_.end());
}

std::string IdList::ToString(std::string_view separator) const {
  std::string out;
  for (const IdRange& r : ranges_) {
    if (!out.empty()) out += separator;
    out += std::to_string(r.first);
    if (r.last != r.first) out += '-' + std::to_string(r.last);
  }
  return out;
}

}  // namespace sfs
