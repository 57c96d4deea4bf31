// The MDS's half of reply reconstruction (Lustre's last_rcvd): which calls
// of which client mounts are running now, and when each client was last
// heard. The records themselves are in the metadata store, written in the
// batch of the operation they answer (meta::ReplyRecordScope).
//
// A client numbers its calls and sends a call again, with the same number,
// when no answer came (the MDS restarted, the connection broke). A call
// that changes the namespace runs between Begin and End; a resend that
// comes while its original still runs waits in Begin, then finds the
// original's record. The client sends the lowest number it still waits
// for with every call: records below it may go (Heard says when, in steps
// of kDropEvery so range deletions stay few). A client not heard for a
// window (twice the call-back timeout: the recovery window, in which a
// client that lost its MDS calls again) has all its records dropped (Gone):
// it unmounted or died, and a new mount is a new client.
//
// Thread safety: every method may be called from any thread; mu_ guards
// the tables, is a leaf, and is never held while a caller waits for
// anything but another call's End.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace sfs::mds {

class ReplyLedger {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr uint64_t kDropEvery = 256;

  // `window`: how long a client may stay silent before its records go;
  // `started`: when the MDS started (clients from before it have a window
  // from then to call again).
  ReplyLedger(Clock::duration window, Clock::time_point started)
      : window_(window), started_(started) {}

  // A call of `client` came at `now`; it waits for no answer below
  // `oldest`. Returns the request id below which the client's records
  // may be dropped now, or 0.
  uint64_t Heard(uint64_t client, uint64_t oldest, Clock::time_point now);

  // Waits while call (client, request) runs already, then marks it running.
  void Begin(uint64_t client, uint64_t request);
  void End(uint64_t client, uint64_t request);

  // Of the clients that have records, those whose records may all go at
  // `now`; they are forgotten here too, and a call of theirs waits in Begin
  // until Dropped says their records went.
  std::vector<uint64_t> Gone(const std::vector<uint64_t>& with_records, Clock::time_point now);
  void Dropped(uint64_t client);

 private:
  struct Client {
    Clock::time_point heard;
    uint64_t dropped_below = 0;
  };
  const Clock::duration window_;
  const Clock::time_point started_;
  std::mutex mu_;
  std::condition_variable ended_;
  std::map<uint64_t, Client> clients_;                  // GUARDED_BY(mu_)
  std::set<std::pair<uint64_t, uint64_t>> running_;     // GUARDED_BY(mu_)
  std::set<uint64_t> dropping_;                         // GUARDED_BY(mu_)
};

}  // namespace sfs::mds
