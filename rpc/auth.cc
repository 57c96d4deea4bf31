#include "rpc/auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sfs::rpc {
namespace {

std::string Trim(std::string text) {
  const char* space = " \t\r\n";
  const size_t first = text.find_first_not_of(space);
  if (first == std::string::npos) return {};
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

}  // namespace

Result<Key> ReadKeyFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Status::Error(errno, "key file " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return Status::Error(EINVAL, "key file " + path + " is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    return Status::Error(EACCES, fmt::format("key file {} may be read or changed by others "
                                             "(mode {:o}): chmod 600 {}",
                                             path, st.st_mode & 0777, path));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      return Status::Error(err, "key file " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > (1u << 16)) {
      close(fd);
      return Status::Error(EINVAL, "key file " + path + " is larger than 64 KiB");
    }
  }
  close(fd);
  Key key{Trim(std::move(text))};
  if (key.bytes.size() < kMinKeyBytes) {
    return Status::Error(EINVAL, fmt::format("key file {} holds {} bytes, fewer than {}", path,
                                             key.bytes.size(), kMinKeyBytes));
  }
  return key;
}

Status WriteNewKeyFile(const std::string& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Error(errno, "key file " + path + ": " + std::strerror(errno));
  std::string hex;
  for (unsigned char c : RandomBytes(32)) hex += fmt::format("{:02x}", c);
  hex += '\n';
  const bool written = write(fd, hex.data(), hex.size()) == static_cast<ssize_t>(hex.size()) &&
                       fsync(fd) == 0;
  const int err = errno;
  close(fd);
  if (!written) {
    unlink(path.c_str());
    return Status::Error(err, "key file " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = getrandom(out.data() + got, n - got, 0);
    if (r > 0) got += static_cast<size_t>(r);
    // EINTR only: getrandom without GRND_NONBLOCK waits for entropy and
    // does not fail otherwise for requests this small.
  }
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string SessionKey(const Key& key, std::string_view client_nonce,
                       std::string_view server_nonce) {
  std::string message = "stripefs session";
  message.append(client_nonce);
  message.append(server_nonce);
  return HmacSha256(key.bytes, message);
}

void AppendField(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(value >> (8 * i)));
}

void AppendField(std::string& out, std::string_view text) {
  AppendField(out, text.size());
  out.append(text);
}

std::string CallMac(std::string_view session_key, std::string_view method, uint64_t sequence,
                    std::string_view fields) {
  std::string message;
  AppendField(message, method);
  AppendField(message, sequence);
  message.append(fields);
  return HmacSha256(session_key, message);
}

bool ReplayWindow::Accept(uint64_t sequence) {
  if (sequence == 0) return false;
  if (newest_ >= kReplayWindow && sequence <= newest_ - kReplayWindow) return false;
  auto bit = [this](uint64_t s) -> std::pair<uint64_t&, uint64_t> {
    const uint64_t slot = s % kReplayWindow;
    return {seen_[slot / 64], uint64_t{1} << (slot % 64)};
  };
  if (sequence > newest_) {
    // Slots between the old newest and this one now stand for new numbers.
    for (uint64_t s = newest_ + 1; s < sequence && s <= newest_ + kReplayWindow; ++s) {
      auto [word, mask] = bit(s);
      word &= ~mask;
    }
    newest_ = sequence;
    auto [word, mask] = bit(sequence);
    word |= mask;
    return true;
  }
  auto [word, mask] = bit(sequence);
  if (word & mask) return false;
  word |= mask;
  return true;
}

Result<SessionTable::Opened> SessionTable::Open(std::string_view client_nonce) {
  if (client_nonce.size() != kNonceBytes) {
    return Status::Error(EINVAL, "hello with a nonce of " + std::to_string(client_nonce.size()) +
                                     " bytes");
  }
  Opened opened{0, RandomBytes(kNonceBytes)};
  std::string session_key = SessionKey(key_, client_nonce, opened.server_nonce);
  std::lock_guard lock(mu_);
  if (sessions_.size() >= capacity_) {
    // A session no call has used yet goes first: anyone may open sessions
    // (Hello needs no key), so a flood of them must not push out the ones
    // key holders use.
    auto oldest = sessions_.end(), oldest_unused = sessions_.end();
    for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
      if (oldest == sessions_.end() || it->second.last_used < oldest->second.last_used) oldest = it;
      if (!it->second.used && (oldest_unused == sessions_.end() ||
                               it->second.last_used < oldest_unused->second.last_used)) {
        oldest_unused = it;
      }
    }
    sessions_.erase(oldest_unused != sessions_.end() ? oldest_unused : oldest);
  }
  opened.session = next_session_++;
  Session& session = sessions_[opened.session];
  session.key = std::move(session_key);
  session.last_used = ++clock_;
  return opened;
}

Status SessionTable::Check(uint64_t session, uint64_t sequence, std::string_view method,
                           std::string_view fields, std::string_view mac) {
  std::string session_key;
  {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(session);
    if (it == sessions_.end()) return Status::Error(EACCES, "unknown session");
    session_key = it->second.key;
  }
  // The MAC before the replay window: a forged call must not use up a
  // sequence number of the real client's.
  const std::string expected = CallMac(session_key, method, sequence, fields);
  if (mac.size() != expected.size() ||
      CRYPTO_memcmp(mac.data(), expected.data(), expected.size()) != 0) {
    return Status::Error(EACCES, "wrong call signature (not the filesystem's key?)");
  }
  std::lock_guard lock(mu_);
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return Status::Error(EACCES, "unknown session");
  if (!it->second.window.Accept(sequence)) {
    return Status::Error(EACCES, "call replayed (sequence " + std::to_string(sequence) + ")");
  }
  it->second.last_used = ++clock_;
  it->second.used = true;
  return Status::Ok();
}

Status ClientSession::Open(uint64_t session, std::string_view server_nonce) {
  if (server_nonce.size() != kNonceBytes) {
    return Status::Error(EINVAL, "the server's nonce has " + std::to_string(server_nonce.size()) +
                                     " bytes");
  }
  session_ = session;
  session_key_ = SessionKey(key_, client_nonce_, server_nonce);
  return Status::Ok();
}

ClientSession::Signature ClientSession::Sign(std::string_view method, std::string_view fields) {
  const uint64_t sequence = sequence_.fetch_add(1, std::memory_order_relaxed) + 1;
  return {session_, sequence, CallMac(session_key_, method, sequence, fields)};
}

}  // namespace sfs::rpc
