#include "metrics/http_server.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace sfs::metrics {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// Sends `request` as it is and returns everything the server answered.
std::string Exchange(const std::string& address, const std::string& request) {
  const size_t colon = address.rfind(':');
  asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address(address.substr(0, colon)),
                               static_cast<uint16_t>(std::stoi(address.substr(colon + 1)))));
  asio::write(socket, asio::buffer(request));
  std::string answer;
  boost::system::error_code ec;
  asio::read(socket, asio::dynamic_buffer(answer), ec);  // until the server closes
  return answer;
}

TEST(HttpServerTest, ServesMetricsAndOnlyMetrics) {
  std::atomic<int> renders{0};
  auto server = HttpServer::Start("127.0.0.1", 0, [&] {
    renders++;
    return std::string("m 1\n");
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const std::string address = (*server)->address();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  EXPECT_NE(address, "127.0.0.1:0");

  const std::string ok = Exchange(address, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << ok;
  EXPECT_NE(ok.find("\r\n\r\nm 1\n"), std::string::npos) << ok;
  EXPECT_EQ(renders.load(), 1);

  const std::string missing = Exchange(address, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(missing.rfind("HTTP/1.1 404", 0), 0u) << missing;
  const std::string post = Exchange(address, "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post;
  // Garbage gets the connection closed, and the server goes on.
  EXPECT_EQ(Exchange(address, "NONSENSE\r\n\r\n").find("200 OK"), std::string::npos);
  EXPECT_EQ(Exchange(address, "GET /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.0 200 OK", 0), 0u);
  EXPECT_EQ(renders.load(), 2);  // only the two GET /metrics rendered
}

TEST(HttpServerTest, RefusesAnAddressInUseOrNotAnAddress) {
  auto first = HttpServer::Start("127.0.0.1", 0, [] { return std::string(); });
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const std::string address = (*first)->address();
  const uint16_t port = static_cast<uint16_t>(std::stoi(address.substr(address.rfind(':') + 1)));
  auto second = HttpServer::Start("127.0.0.1", port, [] { return std::string(); });
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.err(), EADDRINUSE) << second.status().ToString();
  EXPECT_NE(second.status().message().find(address), std::string::npos)
      << second.status().ToString();
  auto named = HttpServer::Start("localhost", 0, [] { return std::string(); });
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.err(), EINVAL);
}

TEST(HttpServerTest, StopsWithAClientStillConnected) {
  auto server = HttpServer::Start("127.0.0.1", 0, [] { return std::string("m 1\n"); });
  ASSERT_TRUE(server.ok());
  const std::string address = (*server)->address();
  const size_t colon = address.rfind(':');
  asio::io_context io;
  tcp::socket idle(io);
  idle.connect(tcp::endpoint(asio::ip::make_address(address.substr(0, colon)),
                             static_cast<uint16_t>(std::stoi(address.substr(colon + 1)))));
  server->reset();  // must not wait for the idle client
  // ... and the idle client's connection is closed with it.
  char byte;
  boost::system::error_code ec;
  asio::read(idle, asio::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

TEST(HttpServerTest, ClosesConnectionsBeyondItsCapAndServesAgainAfter) {
  auto server = HttpServer::Start("127.0.0.1", 0, [] { return std::string("m 1\n"); });
  ASSERT_TRUE(server.ok());
  const std::string address = (*server)->address();
  const size_t colon = address.rfind(':');
  const tcp::endpoint endpoint(asio::ip::make_address(address.substr(0, colon)),
                               static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  asio::io_context io;
  std::vector<tcp::socket> idle;
  for (size_t i = 0; i < HttpServer::kMaxConnections; i++) {
    idle.emplace_back(io).connect(endpoint);
  }
  // One more is accepted and closed at once: no answer. (Until the server
  // has taken all the idle ones, a new one may still be served: try again.)
  std::string answer = "none yet";
  for (int attempt = 0; attempt < 100 && !answer.empty(); attempt++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    tcp::socket extra(io);
    extra.connect(endpoint);
    boost::system::error_code ec;
    asio::write(extra, asio::buffer(std::string("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")), ec);
    answer.clear();
    asio::read(extra, asio::dynamic_buffer(answer), ec);
    EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  }
  EXPECT_TRUE(answer.empty()) << answer;
  // Once the idle ones leave, requests are answered again.
  idle.clear();
  std::string later;
  for (int attempt = 0; attempt < 200; attempt++) {
    later = Exchange(address, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    if (later.rfind("HTTP/1.1 200 OK", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(later.rfind("HTTP/1.1 200 OK", 0), 0u) << later;
}

}  // namespace
}  // namespace sfs::metrics
