// Extent credits across client mounts (seed 003, the MDS as master): a
// client reads an open file's data only while it holds the file's credit
// in read mode, and writes it only in write mode. Readers share; a writer
// is alone. A client asks (EXTENT_GET) and keeps what it was granted until
// a call-back takes it back because another client asked for a mode that
// conflicts; the holder lets its reads and writes in flight end, then
// acknowledges, and the asker is granted. So a striped request of one
// client never meets one of another halfway (each request is atomic
// across clients, as the one-process mount's extent credits make it
// within one mount), and a read started after a write returned sees it.
//
// One credit per file, the whole of it: one master for every stripe keeps
// a request atomic without ordering credits of several OSSs, and files
// written by one client at a time (IOR's file per process, most jobs)
// cost one call per open. Files shared by writers on several clients pass
// the credit back and forth per request (Lustre's extent locks would give
// each its own range; the next step if shared-file writes matter).
//
// Each grant carries the generation of the holder's call-back stream and a
// number of its own: a revocation settles only the grant it revoked (the
// holder may have been granted again meanwhile), and a stream's end drops
// only what was granted under it or before.
//
// Pure bookkeeping, no clock; thread safety: every method from any thread
// (one leaf lock).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "mds/cache_credits.h"

namespace sfs::mds {

class ExtentMaster {
 public:
  enum class Mode { kRead = 1, kWrite = 2 };
  struct Grant {
    SessionId session = 0;
    uint64_t number = 0;
  };

  // `session` (stream `generation`) asks for `ino` in `mode`. Granted
  // (true) when no other session holds a conflicting credit; else false,
  // and `conflicts` are the grants to revoke first (then ask again).
  bool Ask(uint64_t ino, SessionId session, uint64_t generation, Mode mode,
           std::vector<Grant>* conflicts);
  // A revoked grant was given back (acknowledged, or its holder went).
  void Revoked(uint64_t ino, const Grant& grant);
  // `session` closed `ino` (its last close): whatever it held of it ends.
  void Closed(uint64_t ino, SessionId session);
  // `session`'s stream of `generation` ended: what it held under it (or
  // an earlier one) ends.
  void StreamEnded(SessionId session, uint64_t generation);

  // Grants held now (for tests and status).
  size_t size() const;

 private:
  struct Held {
    Mode mode = Mode::kRead;
    uint64_t generation = 0;
    uint64_t number = 0;  // 0: not granted yet
  };
  mutable std::mutex mu_;  // guards everything below
  std::map<uint64_t, std::map<SessionId, Held>> files_;
  uint64_t next_number_ = 1;
};

}  // namespace sfs::mds
