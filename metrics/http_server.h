// A small HTTP/1.1 server for Prometheus scrapes (Boost.Beast on Boost.Asio):
// GET /metrics answers 200 with render()'s text (text/plain; version=0.0.4),
// any other path 404, any other method 405. One Asio thread of its own,
// which is the only thread that calls render(). Each connection gets one
// answer and is closed; a client has 5 s to send its request and to take
// the answer, so a stalled client holds nothing for long, and requests are
// capped at 8 KiB of header and no body. At most kMaxConnections are open at
// once (each holds a descriptor; the daemon budgets them, fs/fd_budget.h);
// one more is closed at once. When accept fails (no descriptor left) the
// server waits a moment before the next, with one log line.
//
// There is no authentication: whoever reaches the port reads every job id
// and counter. Bind it to a loopback address unless the network is trusted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/status.h"

namespace sfs::metrics {

class HttpServer {
 public:
  static constexpr size_t kMaxConnections = 16;

  // Binds `address` (an IPv4 or IPv6 literal) and `port` (0: any free port)
  // and starts serving. EADDRINUSE, EACCES, EADDRNOTAVAIL, EINVAL with a
  // message naming the address when it cannot (EAGAIN: no thread).
  static Result<std::unique_ptr<HttpServer>> Start(const std::string& address, uint16_t port,
                                                   std::function<std::string()> render);
  // Stops accepting, drops open connections and joins the thread.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // "127.0.0.1:9100" or "[::1]:9100", with the port actually bound.
  std::string address() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sfs::metrics
