#include "resource/free_space.h"

#include <iterator>

namespace sfs::resource {

void FreeSpace::Sample(uint64_t available, Clock::time_point at,
                       std::optional<Clock::time_point> until) {
  if (sampled_at_ && at <= *sampled_at_) return;
  if (!until || *until < at) until = at;
  // What the sample already shows: the writes completed by the latest
  // mark at or before it (a lower bound, so the estimate stays low).
  const Mark* latest = nullptr;
  for (const Mark& mark : marks_) {
    if (mark.last > at) break;
    latest = &mark;
  }
  uint64_t shown = 0;
  if (latest != nullptr) {
    shown = latest->written;
  } else if (marks_dropped_) {
    return;  // what it shows cannot be told: wait for a newer one
  }
  // (No mark at or before it and none dropped: no write had completed.)
  available_ = available;
  sampled_at_ = at;
  sampled_until_ = until;
  // Frees begun before its statvfs returned may be in it: no longer
  // credited (if one was not, the estimate is low until the next sample).
  while (!frees_.empty() && frees_.front().from <= *until) {
    freed_ -= frees_.front().bytes;
    frees_.pop_front();
  }
  written_at_sample_ = shown;
  marks_dropped_ = false;
  while (marks_.size() > 1 && marks_[1].last <= at) marks_.pop_front();
}

std::optional<int64_t> FreeSpace::left() const {
  if (!available_) return std::nullopt;
  return static_cast<int64_t>(*available_) + static_cast<int64_t>(freed_) -
         static_cast<int64_t>(written_ - written_at_sample_) -
         static_cast<int64_t>(granted_) - static_cast<int64_t>(margin_);
}

bool FreeSpace::Get(uint64_t bytes) {
  const auto room = left();
  if (room && static_cast<int64_t>(bytes) > *room) return false;
  granted_ += bytes;
  return true;
}

void FreeSpace::Put(uint64_t bytes, Clock::time_point now) {
  granted_ -= std::min(bytes, granted_);
  written_ += bytes;
  // Marks keep time order: a completion told late counts as of the latest
  // time known (later, so never in a sample that cannot show it).
  if (!marks_.empty() && now < marks_.back().last) now = marks_.back().last;
  if (!marks_.empty() && now - marks_.back().first < kMarkSpacing) {
    // The last mark takes this write too: it then holds for samples from
    // now on (a sample between its writes uses the mark before it).
    marks_.back().last = now;
    marks_.back().written = written_;
    return;
  }
  marks_.push_back({now, now, written_});
  if (marks_.size() > kMaxMarks) {
    marks_.pop_front();
    marks_dropped_ = true;  // until a sample shows what they held
  }
}

void FreeSpace::Freed(uint64_t bytes, Clock::time_point from) {
  if (bytes == 0 || (sampled_until_ && from <= *sampled_until_)) return;
  freed_ += bytes;
  // Into the latest mark begun at or before it (sorted by `from`; a mark
  // may only be dropped earlier for it, never later).
  auto later = std::find_if(frees_.begin(), frees_.end(),
                            [&](const FreeMark& mark) { return mark.from > from; });
  if (later != frees_.begin() && from - std::prev(later)->from < kMarkSpacing) {
    std::prev(later)->bytes += bytes;
    return;
  }
  frees_.insert(later, FreeMark{from, bytes});
  if (frees_.size() > kMaxMarks) {
    // The oldest two become one, dropped with the first of them.
    frees_[1].from = frees_[0].from;
    frees_[1].bytes += frees_[0].bytes;
    frees_.pop_front();
  }
}

}  // namespace sfs::resource
