// Extent credits on the data path (issue 11; resource/): every read,
// write, preallocation and punch holds a credit over its byte range from
// before its first part is submitted until its op is gone, so I/O that
// overlaps keeps the order it was admitted in while each OST's NRS
// reorders what does not (docs/design.md, "Resources and credits").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "resource/shared_manager.h"

namespace sfs::fs {

struct OpenFile;

// A held extent credit; Put when the last reference goes. It keeps its
// file (and so the file's manager) alive: an op replies before it is
// deleted, and the kernel may release the last handle in between.
class HeldExtent {
 public:
  HeldExtent(std::shared_ptr<OpenFile> file, resource::Ticket ticket);
  ~HeldExtent();
  HeldExtent(const HeldExtent&) = delete;
  HeldExtent& operator=(const HeldExtent&) = delete;

 private:
  const std::shared_ptr<OpenFile> file_;
  const resource::Ticket ticket_;
};

// Runs `start` with the credit over [offset, offset + length) of `file`
// in `mode`, taken through `owner` (a handle's, or the root): now, on this
// thread, or once the I/O it clashes with is done, on the thread that
// finishes that I/O (outside any FUSE callback scope). `before_waiting`
// runs first if it has to wait. Without extent credits (mount option
// extent_credits=off) `start` runs now with a null credit.
void WithExtent(const std::shared_ptr<OpenFile>& file, resource::OwnerId owner, uint64_t offset, uint64_t length,
                resource::Mode mode, std::function<void(std::shared_ptr<void>)> start,
                const std::function<void()>& before_waiting);

}  // namespace sfs::fs
