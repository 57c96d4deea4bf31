#include "metrics/http_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "common/log.h"

namespace sfs::metrics {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr auto kClientPatience = std::chrono::seconds(5);

// One connection: read one request, write one answer, close. `open`
// counts the sessions alive (the server's; it outlives them, see Impl).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, const std::function<std::string()>& render,
          std::atomic<size_t>& open)
      : stream_(std::move(socket)), render_(render), open_(open) {
    parser_.header_limit(8192);
    parser_.body_limit(0);
  }
  ~Session() { open_--; }

  void Start() {
    stream_.expires_after(kClientPatience);
    http::async_read(stream_, buffer_, parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Answer(self->parser_.get());
                     });
  }

 private:
  void Answer(const http::request<http::empty_body>& request) {
    auto& response = response_.emplace(http::status::ok, request.version());
    response.set(http::field::server, "stripefs");
    response.keep_alive(false);
    const std::string_view target(request.target().data(), request.target().size());
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      response.result(http::status::method_not_allowed);
      response.set(http::field::allow, "GET, HEAD");
      response.body() = "only GET /metrics\n";
    } else if (target != "/metrics" && target.rfind("/metrics?", 0) != 0) {
      response.result(http::status::not_found);
      response.body() = "the metrics are at /metrics\n";
    } else {
      response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      response.body() = render_();
    }
    response.prepare_payload();
    if (request.method() == http::verb::head) response.body().clear();
    stream_.expires_after(kClientPatience);
    http::async_write(stream_, response, [self = shared_from_this()](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  http::request_parser<http::empty_body> parser_;
  std::optional<http::response<http::string_body>> response_;  // lives until written
  const std::function<std::string()>& render_;  // the server's; outlives every session
  std::atomic<size_t>& open_;
};

}  // namespace

struct HttpServer::Impl {
  explicit Impl(std::function<std::string()> r) : render(std::move(r)) {}

  void Accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;  // closing
      if (ec) {
        // Most likely no descriptor left (EMFILE): retrying at once would
        // spin, so wait a moment; say so once per run of failures.
        if (!accept_failing) {
          Logger("metrics")->warn("metrics: accept failed ({}); retrying every 100 ms",
                                  ec.message());
        }
        accept_failing = true;
        backoff.expires_after(std::chrono::milliseconds(100));
        backoff.async_wait([this](beast::error_code wait_ec) {
          if (!wait_ec) Accept();
        });
        return;
      }
      accept_failing = false;
      if (open.load() >= kMaxConnections) {
        beast::error_code ignored;
        socket.close(ignored);  // over the cap: closed at once
      } else {
        open++;
        std::make_shared<Session>(std::move(socket), render, open)->Start();
      }
      Accept();
    });
  }

  // Declared first, destroyed last: sessions still pending are freed when
  // `io` is destroyed, and they use these.
  const std::function<std::string()> render;
  std::atomic<size_t> open{0};  // sessions alive
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer backoff{io};
  bool accept_failing = false;  // only on the io thread
  std::string bound;            // set before the thread starts, then read only
  std::thread thread;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const std::string& address, uint16_t port,
                                                      std::function<std::string()> render) {
  auto impl = std::make_unique<Impl>(std::move(render));
  beast::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(address, ec);
  if (ec) return Status::Error(EINVAL, "metrics: '" + address + "' is not an IP address");
  const tcp::endpoint endpoint(ip, port);
  auto failed = [&](const char* what) {
    return Status::Error(ec.value() > 0 ? ec.value() : EIO,
                         fmt::format("metrics: cannot {} {}:{}: {}", what, address, port,
                                     ec.message()));
  };
  impl->acceptor.open(endpoint.protocol(), ec);
  if (ec) return failed("open a socket for");
  impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  impl->acceptor.bind(endpoint, ec);
  if (ec) return failed("listen on");
  impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return failed("listen on");
  // Asked here, before the io thread uses the acceptor (not thread-safe).
  const tcp::endpoint bound = impl->acceptor.local_endpoint(ec);
  if (ec) return failed("read the address of");
  impl->bound = bound.address().is_v6()
                    ? fmt::format("[{}]:{}", bound.address().to_string(), bound.port())
                    : fmt::format("{}:{}", bound.address().to_string(), bound.port());
  impl->Accept();
  Impl* raw = impl.get();
  try {
    impl->thread = std::thread([raw] { raw->io.run(); });
  } catch (const std::system_error& e) {
    return Status::Error(EAGAIN, std::string("metrics: cannot start its thread: ") + e.what());
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::~HttpServer() {
  impl_->io.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string HttpServer::address() const { return impl_->bound; }

}  // namespace sfs::metrics
