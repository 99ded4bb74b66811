#pragma once
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace drover::net {

// A small HTTP/1.1 server on Boost.Beast for the controller's metrics and REST API.
// Everything runs on the io_context's thread; a handler may answer later from any thread
// (the answer is posted back to the io_context).

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: "/metrics?x=1"
  std::string path;    // target without the query: "/metrics"
  std::string query;   // after '?', "" when none
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string peer;  // the client's address and port: "127.0.0.1:40312"
  // The first header of that name (case-insensitive), "" when absent.
  std::string header(std::string_view name) const;
};

// An answer that stays open (Server-Sent Events): its body is written as the handler sends it,
// until either side closes. Thread-safe.
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  // Queues text for the client; false once the stream is closed (the client left, a write
  // timed out, or the client fell more than HttpLimits::max_stream_backlog behind).
  virtual bool send(std::string text) = 0;
  virtual void close() = 0;
  virtual bool closed() const = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
  // Set: the response is a stream. Its header and `body` go out first (no Content-Length, the
  // connection closes at the end), then this is called once on the I/O thread with the
  // stream to send on. Streams do not count against max_connections but max_streams.
  std::function<void(std::shared_ptr<HttpStream>)> on_stream = {};
};

// Hands the response back; call it exactly once, from any thread.
using HttpResponder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(const HttpRequest&, HttpResponder)>;

struct HttpLimits {
  std::size_t max_header_bytes = 8 * 1024;
  std::size_t max_body_bytes = 1024 * 1024;
  // A request must arrive whole within this (slow clients are dropped); also the idle time
  // allowed between requests of a kept-alive connection, and the time to write a response.
  std::chrono::milliseconds timeout{10000};
  // Connections over this many are answered 503 and closed at once.
  std::size_t max_connections = 64;
  // Open streams (HttpResponse::on_stream) over this many are answered 503.
  std::size_t max_streams = 256;
  // Bytes queued for a stream's slow client beyond which the stream is closed.
  std::size_t max_stream_backlog = 1024 * 1024;
};

class HttpServer {
 public:
  explicit HttpServer(boost::asio::io_context& io, HttpLimits limits = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Exact path match. Other methods on a known path get 405 (with Allow), unknown paths 404.
  void route(const std::string& method, const std::string& path, HttpHandler handler);
  // Every method on every path that starts with `prefix` and has no exact route (the longest
  // prefix wins): for APIs with ids in their paths, which answer 404/405 themselves.
  void route_prefix(const std::string& prefix, HttpHandler handler);
  // Binds and starts accepting. Returns the port bound (useful with port 0). Throws
  // boost::system::system_error when the address cannot be bound.
  unsigned short listen(const std::string& address, unsigned short port);
  // Stops accepting; open connections end after their current exchange.
  void stop();
  std::size_t active_connections() const;
  std::size_t active_streams() const;
  // The io_context it runs on (for timers that go with its handlers).
  boost::asio::io_context& context() const;

  struct State;  // shared with the connections (public for them; opaque to users)

 private:
  std::shared_ptr<State> state_;
};

// Standard reason phrase ("Not Found") for a status code; "Unknown" otherwise.
std::string_view http_reason(int status);

}  // namespace drover::net
