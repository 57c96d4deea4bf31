#include "resource/quota_limits.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <vector>

namespace sfs::resource {
namespace {

constexpr int64_t kMaxGraceSeconds = 10LL * 366 * 24 * 3600;

std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> words;
  size_t pos = 0;
  while (pos < text.size()) {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == ',' || text[pos] == '\t' ||
                                 text[pos] == '\n')) {
      ++pos;
    }
    size_t end = pos;
    while (end < text.size() && text[end] != ' ' && text[end] != ',' && text[end] != '\t' &&
           text[end] != '\n') {
      ++end;
    }
    if (end > pos) words.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return words;
}

// Digits with an optional unit from `units` (each a multiplier).
std::optional<uint64_t> Number(std::string_view text, std::string_view unit_letters,
                               const uint64_t* multipliers, uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  uint64_t multiplier = 1;
  std::string_view rest(end, static_cast<size_t>(text.data() + text.size() - end));
  if (!rest.empty()) {
    if (rest.size() != 1) return std::nullopt;
    const size_t unit = unit_letters.find(rest[0]);
    if (unit == std::string_view::npos) return std::nullopt;
    multiplier = multipliers[unit % (unit_letters.size() / 2)];
  }
  if (value != 0 && multiplier > max / value) return std::nullopt;
  return value * multiplier;
}

// Bytes take binary units, inode counts decimal ones (100k inodes are
// 100,000), as quota-tools' setquota reads them.
std::optional<uint64_t> Amount(std::string_view text, bool bytes) {
  static constexpr uint64_t kBinary[] = {1ULL << 10, 1ULL << 20, 1ULL << 30, 1ULL << 40, 1ULL << 50};
  static constexpr uint64_t kDecimal[] = {1'000ULL, 1'000'000ULL, 1'000'000'000ULL,
                                          1'000'000'000'000ULL, 1'000'000'000'000'000ULL};
  return Number(text, "KMGTPkmgtp", bytes ? kBinary : kDecimal,
                static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

std::optional<int64_t> Duration(std::string_view text) {
  static constexpr uint64_t kSeconds[] = {1, 60, 3600, 24 * 3600, 7 * 24 * 3600};
  auto seconds = Number(text, "smhdwSMHDW", kSeconds, kMaxGraceSeconds);
  if (!seconds) return std::nullopt;
  return static_cast<int64_t>(*seconds);
}

Status Bad(std::string what) { return Status::Error(EINVAL, std::move(what)); }

}  // namespace

Result<QuotaLimitsChange> ParseQuotaLimits(std::string_view text) {
  const auto words = Words(text);
  if (words.empty()) {
    return Bad("a quota is 'bsoft=N bhard=N isoft=N ihard=N' (any of them), not an empty value");
  }
  QuotaLimitsChange change;
  for (std::string_view word : words) {
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) {
      return Bad("quota limit '" + std::string(word) + "' is not name=value");
    }
    const std::string_view name = word.substr(0, eq);
    std::optional<uint64_t>* slot = name == "bsoft"   ? &change.block_soft
                                    : name == "bhard" ? &change.block_hard
                                    : name == "isoft" ? &change.inode_soft
                                    : name == "ihard" ? &change.inode_hard
                                                      : nullptr;
    if (slot == nullptr) {
      return Bad("unknown quota limit '" + std::string(name) +
                 "' (bsoft, bhard, isoft and ihard are known)");
    }
    if (slot->has_value()) return Bad("quota limit " + std::string(name) + " given twice");
    auto value = Amount(word.substr(eq + 1), /*bytes=*/name[0] == 'b');
    if (!value) {
      return Bad("quota limit " + std::string(name) + " must be a whole number with an optional "
                 "K, M, G, T or P (up to 2^63-1), not '" + std::string(word.substr(eq + 1)) + "'");
    }
    *slot = *value;
  }
  return change;
}

Result<QuotaLimits> ApplyQuotaChange(const QuotaLimits& current, const QuotaLimitsChange& change) {
  QuotaLimits next = current;
  if (change.block_soft) next.block_soft = *change.block_soft;
  if (change.block_hard) next.block_hard = *change.block_hard;
  if (change.inode_soft) next.inode_soft = *change.inode_soft;
  if (change.inode_hard) next.inode_hard = *change.inode_hard;
  if (next.block_soft && next.block_hard && next.block_soft > next.block_hard) {
    return Bad("block soft limit " + std::to_string(next.block_soft) + " is above the hard one " +
               std::to_string(next.block_hard));
  }
  if (next.inode_soft && next.inode_hard && next.inode_soft > next.inode_hard) {
    return Bad("inode soft limit " + std::to_string(next.inode_soft) + " is above the hard one " +
               std::to_string(next.inode_hard));
  }
  return next;
}

std::string FormatQuotaLimits(const QuotaLimits& limits) {
  return "bsoft=" + std::to_string(limits.block_soft) + " bhard=" +
         std::to_string(limits.block_hard) + " isoft=" + std::to_string(limits.inode_soft) +
         " ihard=" + std::to_string(limits.inode_hard);
}

Result<QuotaGrace> ParseQuotaGrace(std::string_view text, const QuotaGrace& current) {
  const auto words = Words(text);
  const std::string rule =
      "quota_grace is a duration (seconds, or with s, m, h, d or w; at most 10 years) for both, "
      "or bgrace=D igrace=D";
  if (words.empty()) return Bad(rule + ", not an empty value");
  if (words.size() == 1 && words[0].find('=') == std::string_view::npos) {
    auto seconds = Duration(words[0]);
    if (!seconds) return Bad(rule + ", not '" + std::string(words[0]) + "'");
    return QuotaGrace{*seconds, *seconds};
  }
  QuotaGrace grace = current;
  bool block_seen = false, inode_seen = false;
  for (std::string_view word : words) {
    const size_t eq = word.find('=');
    const std::string_view name = eq == std::string_view::npos ? word : word.substr(0, eq);
    bool* seen = name == "bgrace" ? &block_seen : name == "igrace" ? &inode_seen : nullptr;
    if (eq == std::string_view::npos || seen == nullptr || *seen) {
      return Bad(rule + ", not '" + std::string(word) + "'");
    }
    auto seconds = Duration(word.substr(eq + 1));
    if (!seconds) return Bad(rule + ", not '" + std::string(word) + "'");
    *seen = true;
    (name == "bgrace" ? grace.block_seconds : grace.inode_seconds) = *seconds;
  }
  return grace;
}

std::string FormatQuotaGrace(const QuotaGrace& grace) {
  return "bgrace=" + std::to_string(grace.block_seconds) +
         " igrace=" + std::to_string(grace.inode_seconds);
}

}  // namespace sfs::resource
