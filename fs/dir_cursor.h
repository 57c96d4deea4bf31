// Internal to fs/: what one open directory handle remembers between readdir
// calls, in memory bounded whatever the size of the directory.
//
// readdir offsets are cookies this handle hands out: "." gets 1, ".." 2, and
// the entries of a listing 3, 4, ... in the order they are returned (name
// order). The offset sent with an entry is where a readdir resumes after it,
// and the kernel may resume at any entry of the last batch (when the user's
// getdents buffer filled in the middle of it), or at any offset the program
// kept from telldir (seekdir). A DirCursor turns an offset back into a place
// in name order:
//   * exactly, by name, for the offsets of the last batch and the one it
//     resumed after (the window): a listing that only moves forward always
//     resumes after the last name the user consumed, so no entry is listed
//     twice and none that stayed in the directory is missed;
//   * otherwise by counting entries forward from the nearest earlier name it
//     remembers: a checkpoint (one every `stride` offsets, at most
//     kMaxCheckpoints of them), the last name sent, or the start. Counting
//     is exact for a directory that did not change since those offsets were
//     handed out, which is what POSIX asks of seekdir; a changed directory
//     may then repeat or skip entries near the seek point. Checkpoints keep a
//     seekdir in a 100k-entry directory to a few thousand steps, not a
//     re-scan.
//
// Memory: the window holds one batch of names (fs/ops_dir.cc caps a batch at
// 32 KiB of dirents) and the checkpoints at most kMaxCheckpoints names of up
// to 255 bytes.
//
// Thread safety: none; the owner serializes calls (fs/ops_dir.cc holds the
// directory handle's mutex).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sfs::fs {

class DirCursor {
 public:
  static constexpr uint64_t kDotOffset = 1;     // resume after "."
  static constexpr uint64_t kDotDotOffset = 2;  // resume after "..": the first entry is next
  static constexpr size_t kMaxCheckpoints = 32;
  static constexpr uint64_t kFirstStride = 256;

  // Where a listing resumed at some offset goes on: with the first name
  // strictly after `after` ("" = the first entry), once `skip` more entries
  // have been passed over.
  struct Position {
    std::string after;
    uint64_t skip = 0;
  };

  // REQUIRES: off >= kDotDotOffset (the caller emits "." and "..").
  Position Find(uint64_t off) const;

  // A batch was sent: `anchor` is the name the batch resumed after ("" for
  // the start) and carries offset `anchor_off`; `names` carry anchor_off + 1,
  // anchor_off + 2, ... Replaces the window.
  void Sent(uint64_t anchor_off, std::string anchor, std::vector<std::string> names);

  // A listing starts again at offset 0 (opendir, rewinddir): offsets handed
  // out before may now name other entries, so forget them all.
  void Restart();

  // For tests.
  uint64_t stride() const { return stride_; }
  size_t checkpoints() const { return checkpoints_.size(); }

 private:
  void Checkpoint(uint64_t off, const std::string& name);

  uint64_t window_off_ = 0;                      // offset of window_[0]
  std::vector<std::string> window_;              // the anchor and the last batch sent
  uint64_t stride_ = kFirstStride;               // checkpoint every stride_ offsets
  std::map<uint64_t, std::string> checkpoints_;  // offset -> name sent with it
};

}  // namespace sfs::fs
