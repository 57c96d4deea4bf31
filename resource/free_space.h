// The free space of one disk as a resource (seed 003's "free storage
// space is a resource"; Lustre's OST grants): a write is granted room for
// every byte it sends to the disk before any of it runs, so a write that
// cannot fit is refused (ENOSPC) before anything lands, instead of
// failing half-way on one OST after others took their stripes. Grants
// end when the write completes.
//
// What is free comes from samples of the disk (statvfs, taken in the
// background and possibly late). Until a sample taken after a write
// completed arrives, that write's bytes count as used, whether or not it
// overwrote blocks already allocated: the estimate can be low (an
// overwrite near a full disk may be refused until the next sample), never
// high. Space freed (unlink, truncate, punch) is credited at once, until a
// sample that may show it is in use: a free begun after a sample's statvfs
// returned cannot be in it; one begun before may or may not be, and is
// taken as shown (low again, never high).
//
// Pure logic, clock injected; not thread-safe (one caller at a time).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>

namespace sfs::resource {

class FreeSpace {
 public:
  using Clock = std::chrono::steady_clock;

  // `margin`: bytes never granted (the disk's own metadata, the object
  // files' inodes and extent blocks).
  explicit FreeSpace(uint64_t margin) : margin_(margin) {}

  // A sample taken at `at` (asked then) whose statvfs returned at `until`
  // (nullopt: at `at`): `available` bytes were free for the daemon. One
  // older than what is already known, or from before the oldest write
  // remembered, changes nothing.
  void Sample(uint64_t available, Clock::time_point at,
              std::optional<Clock::time_point> until = std::nullopt);
  void set_margin(uint64_t margin) { margin_ = margin; }

  // Grants `bytes` if that much is left; before the first sample
  // everything is granted (nothing is known yet).
  bool Get(uint64_t bytes);
  // A granted write of `bytes` completed (or failed) by `now`. Times
  // earlier than one already told count as that one.
  void Put(uint64_t bytes, Clock::time_point now);
  // A grant given back unused (nothing was sent to the disk).
  void Cancel(uint64_t bytes) { granted_ -= std::min(bytes, granted_); }
  // `bytes` were freed by a change begun at `from` (stamped before its
  // system call): free from now on, unless the sample in use may show it.
  void Freed(uint64_t bytes, Clock::time_point from);

  uint64_t granted() const { return granted_; }
  // Bytes freed and not yet in a sample (for tests).
  uint64_t freed() const { return freed_; }
  // What a Get could take now; nullopt before the first sample.
  std::optional<int64_t> left() const;

 private:
  // Completed writes are remembered in marks: the total written after
  // the last write a mark counts, and that write's time, so a sample
  // taken at or after `last` shows at least `written`. A mark takes the
  // writes of up to kMarkSpacing from its `first`, which bounds their
  // number.
  struct Mark {
    Clock::time_point first;
    Clock::time_point last;
    uint64_t written;
  };
  static constexpr Clock::duration kMarkSpacing = std::chrono::milliseconds(20);
  static constexpr size_t kMaxMarks = 1024;

  // Frees not shown by the sample in use, oldest `from` first: each
  // holds those begun from its `from` on, up to kMarkSpacing later (a
  // sample drops a free mark whole once it may show its first free).
  struct FreeMark {
    Clock::time_point from;
    uint64_t bytes;
  };

  uint64_t margin_;
  std::optional<uint64_t> available_;  // as of the sample in use
  std::optional<Clock::time_point> sampled_at_;
  std::optional<Clock::time_point> sampled_until_;  // its statvfs returned
  uint64_t written_ = 0;            // completed writes, all time
  uint64_t written_at_sample_ = 0;  // of them, known to be in the sample
  uint64_t granted_ = 0;            // writes in flight
  std::deque<Mark> marks_;
  std::deque<FreeMark> frees_;
  uint64_t freed_ = 0;  // the sum of frees_
  // Marks were dropped (kMaxMarks) since the sample in use: an older
  // sample than the oldest mark left can no longer be placed.
  bool marks_dropped_ = false;
};

}  // namespace sfs::resource
