#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "net/http_server.hpp"

using namespace drover;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// A server on 127.0.0.1 (an ephemeral port) whose io_context runs on its own thread.
struct Fixture {
  explicit Fixture(net::HttpLimits limits = {}) : server(io, limits) {
    server.route("GET", "/hello", [](const net::HttpRequest& req, net::HttpResponder respond) {
      net::HttpResponse r;
      r.body = "hello " + req.query + " accept=" + req.header("accept");
      respond(std::move(r));
    });
    server.route("POST", "/echo", [](const net::HttpRequest& req, net::HttpResponder respond) {
      net::HttpResponse r;
      r.content_type = "application/json";
      r.body = req.body;
      respond(std::move(r));
    });
    server.route("GET", "/throws", [](const net::HttpRequest&, net::HttpResponder) {
      throw std::runtime_error("unexpected request");
    });
    server.route("GET", "/later", [](const net::HttpRequest&, net::HttpResponder respond) {
      std::thread([respond] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        net::HttpResponse r;
        r.body = "from another thread";
        respond(std::move(r));
      }).detach();
    });
  }
  void start() {
    port = server.listen("127.0.0.1", 0);
    thread = std::thread([this] { io.run(); });
  }
  ~Fixture() {
    asio::post(io, [this] { server.stop(); });
    io.stop();
    if (thread.joinable()) thread.join();
  }
  tcp::socket connect() {
    tcp::socket s(client_io);
    s.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    return s;
  }
  asio::io_context io;
  asio::io_context client_io;
  net::HttpServer server;
  unsigned short port = 0;
  std::thread thread;
};

http::response<http::string_body> roundtrip(tcp::socket& s, beast::flat_buffer& buf,
                                            http::verb verb, const std::string& target,
                                            const std::string& body = "",
                                            const std::string& accept = "") {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "localhost");
  if (!accept.empty()) req.set(http::field::accept, accept);
  req.body() = body;
  req.prepare_payload();
  http::write(s, req);
  http::response<http::string_body> res;
  http::read(s, buf, res);
  return res;
}

// Everything the server sends until it closes the connection.
std::string read_to_close(tcp::socket& s) {
  std::string out;
  char chunk[4096];
  boost::system::error_code ec;
  for (;;) {
    size_t n = s.read_some(asio::buffer(chunk), ec);
    out.append(chunk, n);
    if (ec) break;
  }
  return out;
}

}  // namespace

TEST(HttpServer, ServesRouteWithQueryAndHeaders) {
  Fixture f;
  f.start();
  auto s = f.connect();
  beast::flat_buffer buf;
  auto res = roundtrip(s, buf, http::verb::get, "/hello?x=1", "", "text/plain");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "hello x=1 accept=text/plain");
  EXPECT_EQ(res[http::field::content_type], "text/plain; charset=utf-8");
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  Fixture f;
  f.start();
  auto s = f.connect();
  beast::flat_buffer buf;
  for (int i = 0; i < 3; ++i) {
    auto res = roundtrip(s, buf, http::verb::post, "/echo", "{\"n\":" + std::to_string(i) + "}");
    EXPECT_EQ(res.result_int(), 200);
    EXPECT_EQ(res.body(), "{\"n\":" + std::to_string(i) + "}");
    EXPECT_TRUE(res.keep_alive());
  }
  EXPECT_EQ(f.server.active_connections(), 1u);
}

TEST(HttpServer, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  Fixture f;
  f.start();
  auto s = f.connect();
  beast::flat_buffer buf;
  auto res = roundtrip(s, buf, http::verb::get, "/nope");
  EXPECT_EQ(res.result_int(), 404);
  EXPECT_EQ(res.body(), "404 Not Found: /nope\n");
  res = roundtrip(s, buf, http::verb::delete_, "/hello");
  EXPECT_EQ(res.result_int(), 405);
  EXPECT_EQ(res[http::field::allow], "GET");
  EXPECT_EQ(res.body(), "405 Method Not Allowed: DELETE\n");
  // The connection is still usable after those.
  res = roundtrip(s, buf, http::verb::get, "/hello");
  EXPECT_EQ(res.result_int(), 200);
}

TEST(HttpServer, PrefixRoutesTakeWhatNoExactRouteDoesLongestFirst) {
  Fixture f;
  auto echo = [](std::string tag) {
    return [tag](const net::HttpRequest& req, net::HttpResponder respond) {
      net::HttpResponse r;
      r.body = tag + " " + req.method + " " + req.path +
               " from=" + (req.peer.rfind("127.0.0.1:", 0) == 0 ? "loopback" : req.peer);
      respond(std::move(r));
    };
  };
  f.server.route_prefix("/api/", echo("api"));
  f.server.route_prefix("/api/v2/", echo("v2"));
  f.start();
  auto s = f.connect();
  beast::flat_buffer buf;
  auto res = roundtrip(s, buf, http::verb::delete_, "/api/job/7?signal=9");
  EXPECT_EQ(res.body(), "api DELETE /api/job/7 from=loopback");
  res = roundtrip(s, buf, http::verb::get, "/api/v2/nodes");
  EXPECT_EQ(res.body(), "v2 GET /api/v2/nodes from=loopback");
  res = roundtrip(s, buf, http::verb::get, "/hello");  // exact routes still win
  EXPECT_EQ(res.body(), "hello  accept=");
  res = roundtrip(s, buf, http::verb::get, "/apiary");
  EXPECT_EQ(res.result_int(), 404);
}

TEST(HttpServer, MalformedRequestIs400AndCloses) {
  Fixture f;
  f.start();
  auto s = f.connect();
  asio::write(s, asio::buffer(std::string("NOT HTTP AT ALL\r\n\r\n")));
  std::string out = read_to_close(s);
  EXPECT_EQ(out.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << out;
  EXPECT_NE(out.find("Connection: close"), std::string::npos) << out;
}

TEST(HttpServer, OversizedBodyIs413AndOversizedHeaderIs431) {
  net::HttpLimits limits;
  limits.max_body_bytes = 100;
  limits.max_header_bytes = 512;
  Fixture f(limits);
  f.start();
  {
    auto s = f.connect();
    std::string req =
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + std::string(1000, 'a');
    asio::write(s, asio::buffer(req));
    std::string out = read_to_close(s);
    EXPECT_EQ(out.rfind("HTTP/1.1 413 ", 0), 0u) << out;
  }
  {
    auto s = f.connect();
    std::string req =
        "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(2000, 'b') + "\r\n\r\n";
    asio::write(s, asio::buffer(req));
    std::string out = read_to_close(s);
    EXPECT_EQ(out.rfind("HTTP/1.1 431 ", 0), 0u) << out;
  }
}

TEST(HttpServer, SlowClientIsDisconnectedAfterTimeout) {
  net::HttpLimits limits;
  limits.timeout = std::chrono::milliseconds(200);
  Fixture f(limits);
  f.start();
  auto s = f.connect();
  asio::write(s, asio::buffer(std::string("GET /hello HTTP/1.1\r\nHo")));  // never finished
  auto t0 = std::chrono::steady_clock::now();
  std::string out = read_to_close(s);
  auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(out, "");
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

TEST(HttpServer, HandlerMayAnswerFromAnotherThread) {
  Fixture f;
  f.start();
  auto s = f.connect();
  beast::flat_buffer buf;
  auto res = roundtrip(s, buf, http::verb::get, "/later");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "from another thread");
}

TEST(HttpServer, ConnectionsOverTheCapGet503) {
  net::HttpLimits limits;
  limits.max_connections = 1;
  Fixture f(limits);
  f.start();
  auto first = f.connect();
  beast::flat_buffer buf;
  EXPECT_EQ(roundtrip(first, buf, http::verb::get, "/hello").result_int(), 200);
  auto second = f.connect();
  std::string out = read_to_close(second);
  EXPECT_EQ(out.rfind("HTTP/1.1 503 ", 0), 0u) << out;
  // The first connection still works.
  EXPECT_EQ(roundtrip(first, buf, http::verb::get, "/hello").result_int(), 200);
}

// A handler that throws answers 500 and the server goes on (the exception used to leave the
// io_context's run(), taking the controller with it).
TEST(HttpServer, HandlerThatThrowsIs500AndServerGoesOn) {
  Fixture f;
  f.start();
  auto s = f.connect();
  beast::flat_buffer buf;
  auto res = roundtrip(s, buf, http::verb::get, "/throws");
  EXPECT_EQ(res.result_int(), 500);
  EXPECT_EQ(res.body(), "500 Internal Server Error: unexpected request\n");
  res = roundtrip(s, buf, http::verb::get, "/hello");
  EXPECT_EQ(res.result_int(), 200);
}

// A stream (Server-Sent Events): the header and first body go out, then what the owner sends,
// from any thread; it closes when the client goes away, and does not count as a connection.
TEST(HttpServer, StreamsSendUntilTheClientLeaves) {
  net::HttpLimits limits;
  limits.max_connections = 2;
  limits.max_streams = 1;
  Fixture f(limits);
  std::mutex mu;
  std::shared_ptr<net::HttpStream> held;
  f.server.route("GET", "/events", [&](const net::HttpRequest&, net::HttpResponder respond) {
    net::HttpResponse r;
    r.content_type = "text/event-stream";
    r.body = "event: hello\ndata: {}\n\n";
    r.on_stream = [&](std::shared_ptr<net::HttpStream> s) {
      std::lock_guard lock(mu);
      held = std::move(s);
    };
    respond(std::move(r));
  });
  f.start();
  auto s = f.connect();
  const std::string req = "GET /events HTTP/1.1\r\nHost: x\r\n\r\n";
  asio::write(s, asio::buffer(req));
  auto read_until = [&](const std::string& want) {
    std::string got;
    char buf[256];
    while (got.find(want) == std::string::npos) {
      const size_t n = s.read_some(asio::buffer(buf));
      got.append(buf, n);
    }
    return got;
  };
  const std::string head = read_until("data: {}\n\n");
  EXPECT_NE(head.find("HTTP/1.1 200 OK\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("Content-Type: text/event-stream\r\n"), std::string::npos);
  EXPECT_EQ(head.find("Content-Length"), std::string::npos);
  std::shared_ptr<net::HttpStream> stream;
  for (int i = 0; i < 200 && !stream; ++i) {
    {
      std::lock_guard lock(mu);
      stream = held;
    }
    if (!stream) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(stream);
  std::thread([stream] { stream->send("event: jobs\ndata: {\"ids\":[1]}\n\n"); }).join();
  EXPECT_NE(read_until("ids").find("event: jobs"), std::string::npos);

  // The stream is not a connection: with one plain connection open, a third is still
  // accepted (max_connections 2), and refused only as a second stream.
  auto other = f.connect();
  beast::flat_buffer buf;
  EXPECT_EQ(roundtrip(other, buf, http::verb::get, "/hello").result_int(), 200);
  auto third = f.connect();
  beast::flat_buffer buf3;
  const auto refused = roundtrip(third, buf3, http::verb::get, "/events");
  EXPECT_EQ(refused.result_int(), 503);
  EXPECT_NE(refused.body().find("too many open streams"), std::string::npos) << refused.body();

  s.close();
  bool closed = false;
  for (int i = 0; i < 400 && !closed; ++i) {
    stream->send(": ping\n\n");
    closed = stream->closed();
    if (!closed) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(closed);
}
