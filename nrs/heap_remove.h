// Internal to nrs/: taking one entry out of a policy's std::priority_queue
// (Policy::Remove, seed 000's nrs_priority). A raise is rare, so O(n) in
// the queue's size is fine; the queue's own operations stay as they are.
#pragma once

#include <algorithm>
#include <optional>
#include <queue>
#include <vector>

namespace sfs::nrs {

// Removes the entry of `heap` for which `matches` is true (the first, if
// several are), and returns it; nullopt when there is none.
template <class Entry, class Matches>
std::optional<Entry> RemoveFromHeap(std::priority_queue<Entry>& heap, Matches matches) {
  // The container is a protected member: reached through a derived class,
  // the standard way to get at it without copying the queue.
  struct Access : std::priority_queue<Entry> {
    static std::vector<Entry>& Of(std::priority_queue<Entry>& q) { return q.*&Access::c; }
  };
  std::vector<Entry>& entries = Access::Of(heap);
  auto it = std::find_if(entries.begin(), entries.end(), matches);
  if (it == entries.end()) return std::nullopt;
  Entry found = *it;
  entries.erase(it);
  std::make_heap(entries.begin(), entries.end(), std::less<Entry>());
  return found;
}

}  // namespace sfs::nrs
