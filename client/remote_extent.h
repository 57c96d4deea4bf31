// A client's side of one open file's extent credit at the MDS
// (mds/extent_master.h): every read holds it in read mode and every
// write, preallocation and punch in write mode, for as long as the I/O is
// in flight. Asked for (EXTENT_GET) when not held in a mode that covers
// the I/O; kept until the MDS takes it back, which waits for the I/O in
// flight under it and makes the next one ask again.
//
// A revocation may overtake the reply that granted the credit it takes
// back (the client saw nothing to give back and acknowledged): a grant
// whose ask began before a revocation came is not kept, and the I/O asks
// again.
//
// Thread safety: every method from any thread; mu_ is a leaf, never held
// while asking.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>

#include "common/status.h"

namespace sfs::client {

class RemoteExtent {
 public:
  // `ask(write)`: the EXTENT_GET call, returning once granted.
  explicit RemoteExtent(std::function<Status(bool write)> ask) : ask_(std::move(ask)) {}

  // Holds the credit in read (`write` false) or write mode until Release;
  // asks the MDS first if needed (blocking). Nothing is held on an error.
  // (No hold object: the I/O's own held credit, fs::HeldExtent, releases
  // it, so the data path allocates nothing more for it.)
  Status Acquire(bool write);
  void Release();
  // The MDS takes it back: waits for the holds in flight, then drops it.
  void Revoke();
  // The call-back stream was lost: the MDS dropped it (no wait; the I/O in
  // flight ends as it may).
  void Lost();

  // For tests: the mode held (0 none, 1 read, 2 write).
  int held() const;

 private:
  const std::function<Status(bool)> ask_;
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable changed_;
  int held_ = 0;            // 0 none, 1 read, 2 write
  int in_flight_ = 0;       // holds given out
  bool revoking_ = false;   // a Revoke waits for in_flight_ to drain
  uint64_t revocations_ = 0;
};

}  // namespace sfs::client
