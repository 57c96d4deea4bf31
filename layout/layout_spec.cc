#include "layout/layout_spec.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "layout/layout.h"
#include "layout/pool_rule.h"

namespace sfs::layout {
namespace {

constexpr std::string_view kBlanks = " \t\n\r";

Status Bad(std::string_view word, const std::string& why) {
  return Status::Error(EINVAL, "layout '" + std::string(word) + "': " + why);
}

}  // namespace

Result<LayoutSpec> ParseLayoutSpec(std::string_view text) {
  LayoutSpec spec;
  std::set<std::string, std::less<>> seen;
  size_t pos = 0;
  while (true) {
    pos = text.find_first_not_of(kBlanks, pos);
    if (pos == std::string_view::npos) break;
    const size_t end = std::min(text.find_first_of(kBlanks, pos), text.size());
    const std::string_view word = text.substr(pos, end - pos);
    pos = end;
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) return Bad(word, "expected key=value");
    const std::string_view key = word.substr(0, eq);
    const std::string_view value = word.substr(eq + 1);
    if (!seen.insert(std::string(key)).second) return Bad(word, "key given twice");
    if (key == "stripe_count") {
      int64_t count = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), count);
      if (value.empty() || ec != std::errc() || p != value.data() + value.size() || count < -1 ||
          count > static_cast<int64_t>(kMaxStripeCount)) {
        return Bad(word, "stripe_count must be -1 (all), 0 (default) or 1.." +
                             std::to_string(kMaxStripeCount));
      }
      spec.stripe_count = count;
    } else if (key == "stripe_size") {
      auto size = ParseSize(value);
      if (!size.ok()) return Bad(word, size.status().message());
      if (*size != 0) {
        LayoutRequest check;
        check.stripe_size = *size;
        Status valid = Validate(check);
        if (!valid.ok()) return Bad(word, valid.message());
      }
      spec.stripe_size = *size;
    } else if (key == "pool") {
      if (!value.empty()) SFS_RETURN_IF_ERROR(CheckPoolName(value));
      spec.pool = std::string(value);
    } else if (key == "osts") {
      std::string_view rest = value;
      std::set<uint32_t> distinct;
      while (!rest.empty()) {
        const size_t comma = std::min(rest.find(','), rest.size());
        const std::string_view item = rest.substr(0, comma);
        uint32_t ost = 0;
        auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), ost);
        if (item.empty() || ec != std::errc() || p != item.data() + item.size()) {
          return Bad(word, "osts must be OST indexes separated by commas");
        }
        if (!distinct.insert(ost).second) return Bad(word, "an OST is listed twice");
        spec.osts.push_back(ost);
        rest = comma < rest.size() ? rest.substr(comma + 1) : std::string_view{};
      }
      if (spec.osts.empty()) return Bad(word, "osts is empty");
      if (spec.osts.size() > kMaxStripeCount) return Bad(word, "too many OSTs");
    } else {
      return Bad(word, "unknown key (stripe_count, stripe_size, pool, osts)");
    }
  }
  // As Lustre's setstripe -c N -o list: the list is the layout, so a count
  // other than its length cannot be honoured and is refused rather than cut.
  if (spec.stripe_count > 0 && !spec.osts.empty() &&
      static_cast<size_t>(spec.stripe_count) != spec.osts.size()) {
    return Bad("stripe_count=" + std::to_string(spec.stripe_count),
               "osts lists " + std::to_string(spec.osts.size()) +
                   " OSTs (give the same count, -1, or no stripe_count)");
  }
  return spec;
}

std::string FormatLayoutSpec(const LayoutSpec& spec) {
  std::string out;
  auto add = [&](const std::string& item) {
    if (!out.empty()) out += ' ';
    out += item;
  };
  if (spec.stripe_count != 0) add("stripe_count=" + std::to_string(spec.stripe_count));
  if (spec.stripe_size != 0) add("stripe_size=" + std::to_string(spec.stripe_size));
  if (!spec.pool.empty()) add("pool=" + spec.pool);
  if (!spec.osts.empty()) {
    std::string list;
    for (uint32_t ost : spec.osts) list += (list.empty() ? "" : ",") + std::to_string(ost);
    add("osts=" + list);
  }
  return out;
}

}  // namespace sfs::layout
