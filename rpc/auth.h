// Proof that a caller holds the filesystem's shared key, on every call.
//
// The key never travels. A client opens a session with Hello: it sends a
// fresh nonce, the server answers with one of its own and a session number,
// and both derive the session key HMAC-SHA256(key, "stripefs session" |
// client nonce | server nonce). Every later call carries the session, a
// sequence number and HMAC-SHA256(session key, method | sequence | the
// call's fields): what it asks for and as whom (OST, op, object, offsets,
// uid, gid, job id). The server accepts each sequence number of a session
// once (a window of the last kReplayWindow), so a recorded call cannot be
// played again, and because its nonce is fresh, nor into a new session or
// after a restart. What this does not protect: the payload bytes of reads
// and writes, and anything from a reader on the wire; TLS does (the OSS's
// --tls-* options, docs/design.md).
//
// Thread safety: SessionTable is safe from any thread (its own mutex, a
// leaf). ClientSession is safe from any thread once Open succeeded.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sfs::rpc {

// The filesystem's shared key: the bytes of a key file (surrounding
// whitespace removed), at least kMinKeyBytes of them.
struct Key {
  std::string bytes;
};
inline constexpr size_t kMinKeyBytes = 16;

// Reads a key file. EACCES if group or others may read or write it (the
// key would not be secret: "chmod 600 FILE"); EINVAL if it holds fewer
// than kMinKeyBytes bytes; the errno of a failed open or read.
Result<Key> ReadKeyFile(const std::string& path);
// Creates a key file with 32 random bytes in hex, mode 0600; EEXIST if
// there is one.
Status WriteNewKeyFile(const std::string& path);

// Random bytes from the kernel (getrandom); 16 make a nonce.
std::string RandomBytes(size_t n);
inline constexpr size_t kNonceBytes = 16;

std::string HmacSha256(std::string_view key, std::string_view message);
std::string SessionKey(const Key& key, std::string_view client_nonce,
                       std::string_view server_nonce);
// A field of a signed message: a number as 8 bytes little endian, a text
// as its length then its bytes, so that no two field lists encode alike.
void AppendField(std::string& out, uint64_t value);
void AppendField(std::string& out, std::string_view text);

// The MAC of one call; `fields` is the call's canonical description
// (rpc/wire.h, IoCallFields and the like).
std::string CallMac(std::string_view session_key, std::string_view method, uint64_t sequence,
                    std::string_view fields);

// Each sequence number at most once; one older than the newest seen by
// kReplayWindow or more is refused (calls in flight at once arrive in
// any order, within a window).
class ReplayWindow {
 public:
  static constexpr uint64_t kReplayWindow = 4096;
  bool Accept(uint64_t sequence);

 private:
  uint64_t newest_ = 0;  // 0: none yet (sequence numbers start at 1)
  std::array<uint64_t, kReplayWindow / 64> seen_{};  // bit per sequence, mod kReplayWindow
};

// The server's sessions: at most `capacity` at once; opening one more
// forgets the least recently used one no valid call has used yet, else the
// least recently used (its client sees UNAUTHENTICATED and opens another).
class SessionTable {
 public:
  SessionTable(Key key, size_t capacity = 4096) : key_(std::move(key)), capacity_(capacity) {}
  struct Opened {
    uint64_t session;
    std::string server_nonce;
  };
  // EINVAL for a nonce of the wrong size.
  Result<Opened> Open(std::string_view client_nonce);
  // EACCES (UNAUTHENTICATED to the caller) for an unknown session, a wrong
  // MAC or a sequence number seen or too old; the message says which.
  Status Check(uint64_t session, uint64_t sequence, std::string_view method,
               std::string_view fields, std::string_view mac);

 private:
  struct Session {
    std::string key;
    ReplayWindow window;
    uint64_t last_used = 0;
    bool used = false;  // a call with a valid MAC came in it
  };
  const Key key_;
  const size_t capacity_;
  std::mutex mu_;  // guards everything below
  uint64_t next_session_ = 1;
  uint64_t clock_ = 0;  // a counter, for least recently used
  std::map<uint64_t, Session> sessions_;
};

// The client's side of one session.
class ClientSession {
 public:
  explicit ClientSession(Key key) : key_(std::move(key)), client_nonce_(RandomBytes(kNonceBytes)) {}
  const std::string& client_nonce() const { return client_nonce_; }
  // With the server's answer to Hello(client_nonce()). EINVAL for a nonce
  // of the wrong size.
  Status Open(uint64_t session, std::string_view server_nonce);
  struct Signature {
    uint64_t session;
    uint64_t sequence;
    std::string mac;
  };
  Signature Sign(std::string_view method, std::string_view fields);

 private:
  const Key key_;
  const std::string client_nonce_;
  uint64_t session_ = 0;
  std::string session_key_;
  std::atomic<uint64_t> sequence_{0};
};

// Metadata keys the signature travels in.
inline constexpr const char* kSessionHeader = "sfs-session";
inline constexpr const char* kSequenceHeader = "sfs-seq";
inline constexpr const char* kMacHeader = "sfs-mac-bin";  // binary: gRPC base64s it

}  // namespace sfs::rpc
