#include "net/http_server.hpp"

#include <strings.h>

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <deque>
#include <mutex>
#include <optional>

namespace drover::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string HttpRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k.size() == name.size() && ::strncasecmp(k.data(), name.data(), k.size()) == 0) return v;
  return "";
}

std::string_view http_reason(int status) {
  auto r = http::obsolete_reason(static_cast<http::status>(status));
  return r.empty() ? std::string_view("Unknown") : std::string_view(r.data(), r.size());
}

struct HttpServer::State {
  explicit State(asio::io_context& io_, HttpLimits l) : io(io_), acceptor(io_), limits(l) {}
  asio::io_context& io;
  tcp::acceptor acceptor;
  HttpLimits limits;
  // path -> method -> handler
  std::map<std::string, std::map<std::string, HttpHandler>> routes;
  std::map<std::string, HttpHandler> prefixes;
  std::size_t active = 0;   // io thread only
  std::size_t streams = 0;  // io thread only
};

namespace {

HttpResponse error_response(int status, std::string_view detail) {
  HttpResponse r;
  r.status = status;
  r.body = std::to_string(status) + " " + std::string(http_reason(status));
  if (!detail.empty()) r.body += ": " + std::string(detail);
  r.body += "\n";
  return r;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(std::shared_ptr<HttpServer::State> st, tcp::socket sock)
      : st_(std::move(st)), stream_(std::move(sock)) {
    ++st_->active;
  }
  ~Session() {
    if (streaming_) {
      --st_->streams;
    } else {
      --st_->active;
    }
  }

  void start() { read(); }

  // Over the connection cap: one 503 and close.
  void reject() {
    keep_alive_ = false;
    write(error_response(503, "too many connections"), false);
  }

 private:
  void read() {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(st_->limits.max_header_bytes));
    parser_->body_limit(st_->limits.max_body_bytes);
    stream_.expires_after(st_->limits.timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
        ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
        ec == asio::error::eof) {
      return close();
    }
    if (ec == http::error::body_limit) return write(error_response(413, "body too large"), false);
    if (ec == http::error::header_limit)
      return write(error_response(431, "header too large"), false);
    if (ec) return write(error_response(400, ec.message()), false);

    auto msg = parser_->release();
    keep_alive_ = msg.keep_alive();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    auto q = req.target.find('?');
    req.path = req.target.substr(0, q);
    if (q != std::string::npos) req.query = req.target.substr(q + 1);
    for (const auto& f : msg)
      req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
    req.body = std::move(msg.body());

    {
      beast::error_code ignored;
      const auto remote = stream_.socket().remote_endpoint(ignored);
      if (!ignored) req.peer = remote.address().to_string() + ":" + std::to_string(remote.port());
    }

    auto path_it = st_->routes.find(req.path);
    if (path_it == st_->routes.end()) {
      // The longest prefix route that the path starts with.
      const HttpHandler* prefix = nullptr;
      for (auto it = st_->prefixes.begin(); it != st_->prefixes.end(); ++it)
        if (req.path.compare(0, it->first.size(), it->first) == 0) prefix = &it->second;
      if (prefix == nullptr) return write(error_response(404, req.path), keep_alive_);
      return dispatch(*prefix, req);
    }
    auto h = path_it->second.find(req.method);
    if (h == path_it->second.end()) {
      std::string allow;
      for (const auto& [m, _] : path_it->second) allow += (allow.empty() ? "" : ", ") + m;
      auto r = error_response(405, req.method);
      r.headers.emplace_back("Allow", allow);
      return write(std::move(r), keep_alive_);
    }
    dispatch(h->second, req);
  }

  void dispatch(const HttpHandler& handler, const HttpRequest& req) {
    // The handler may answer from another thread: hop back onto the io thread.
    auto self = shared_from_this();
    stream_.expires_never();
    // One answer whatever happens: a handler that throws (a request it did not expect) gets a
    // 500 instead of taking the server's thread down, unless it had answered already.
    auto answered = std::make_shared<std::atomic<bool>>(false);
    auto respond = [self, answered](HttpResponse r) {
      if (answered->exchange(true)) return;
      asio::post(self->st_->io, [self, r = std::move(r)]() mutable {
        self->write(std::move(r), self->keep_alive_);
      });
    };
    try {
      handler(req, respond);
    } catch (const std::exception& e) {
      respond(error_response(500, e.what()));
    }
  }

  // The handle a stream's owner sends on; the session is reached through a weak pointer, so a
  // handle kept after the client left costs nothing but itself.
  class Stream : public HttpStream {
   public:
    Stream(std::weak_ptr<Session> s, asio::io_context& io) : session_(std::move(s)), io_(io) {}
    bool send(std::string text) override {
      if (closed_) return false;
      asio::post(io_, [w = session_, text = std::move(text)]() mutable {
        if (auto s = w.lock()) s->stream_write(std::move(text));
      });
      return true;
    }
    void close() override {
      if (closed_.exchange(true)) return;
      asio::post(io_, [w = session_] {
        if (auto s = w.lock()) s->close();
      });
    }
    bool closed() const override { return closed_; }
    void mark_closed() { closed_ = true; }

   private:
    std::weak_ptr<Session> session_;
    asio::io_context& io_;
    std::atomic<bool> closed_{false};
  };

  void start_stream(HttpResponse r) {
    if (st_->streams >= st_->limits.max_streams)
      return write(error_response(503, "too many open streams"), false);
    streaming_ = true;
    --st_->active;
    ++st_->streams;
    keep_alive_ = false;
    // Written by hand: the body has no length and ends when the connection does.
    std::string head =
        "HTTP/1.1 " + std::to_string(r.status) + " " + std::string(http_reason(r.status)) +
        "\r\nServer: drover\r\nContent-Type: " + r.content_type + "\r\nConnection: close\r\n";
    for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
    head += "\r\n" + r.body;
    handle_ = std::make_shared<Stream>(weak_from_this(), st_->io);
    stream_write(std::move(head));
    // Nothing more is expected from the client: a read ends when it goes away.
    stream_.expires_never();
    stream_.async_read_some(asio::buffer(discard_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              self->on_stream_read(ec);
                            });
    r.on_stream(handle_);
  }

  void on_stream_read(beast::error_code ec) {
    if (ec) return close();
    stream_.async_read_some(
        asio::buffer(discard_),
        [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_stream_read(e); });
  }

  void stream_write(std::string text) {
    if (stream_closed_) return;
    backlog_ += text.size();
    if (backlog_ > st_->limits.max_stream_backlog) return close();
    out_.push_back(std::move(text));
    if (!writing_) stream_flush();
  }

  void stream_flush() {
    if (out_.empty() || stream_closed_) {
      writing_ = false;
      return;
    }
    writing_ = true;
    auto text = std::make_shared<std::string>(std::move(out_.front()));
    out_.pop_front();
    // A client that stops reading is dropped after the timeout.
    stream_.expires_after(st_->limits.timeout);
    asio::async_write(stream_, asio::buffer(*text),
                      [self = shared_from_this(), text](beast::error_code ec, std::size_t) {
                        self->backlog_ -= text->size();
                        if (ec) return self->close();
                        self->stream_.expires_never();
                        self->stream_flush();
                      });
  }

  void write(HttpResponse r, bool keep_alive) {
    if (r.on_stream) return start_stream(std::move(r));
    auto res = std::make_shared<http::response<http::string_body>>();
    res->version(11);
    res->result(static_cast<unsigned>(r.status));
    res->set(http::field::server, "drover");
    res->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res->set(k, v);
    res->keep_alive(keep_alive);
    res->body() = std::move(r.body);
    res->prepare_payload();
    stream_.expires_after(st_->limits.timeout);
    http::async_write(
        stream_, *res,
        [self = shared_from_this(), res, keep_alive](beast::error_code ec, std::size_t) {
          if (ec || !keep_alive) return self->close();
          self->read();
        });
  }

  void close() {
    if (stream_closed_) return;
    stream_closed_ = true;
    if (handle_) handle_->mark_closed();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.close();
  }

  std::shared_ptr<HttpServer::State> st_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool keep_alive_ = true;
  // Streaming (HttpResponse::on_stream): what is queued, and whether a write is under way.
  bool streaming_ = false, writing_ = false, stream_closed_ = false;
  std::size_t backlog_ = 0;
  std::deque<std::string> out_;
  std::shared_ptr<Stream> handle_;
  char discard_[512];
};

void accept_loop(const std::shared_ptr<HttpServer::State>& st) {
  st->acceptor.async_accept([st](beast::error_code ec, tcp::socket sock) {
    if (ec == asio::error::operation_aborted || !st->acceptor.is_open()) return;
    if (!ec) {
      beast::error_code ignored;
      sock.set_option(tcp::no_delay(true), ignored);
      const bool over = st->active >= st->limits.max_connections;
      auto s = std::make_shared<Session>(st, std::move(sock));
      if (over)
        s->reject();
      else
        s->start();
    }
    accept_loop(st);
  });
}

}  // namespace

HttpServer::HttpServer(asio::io_context& io, HttpLimits limits)
    : state_(std::make_shared<State>(io, limits)) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::route(const std::string& method, const std::string& path, HttpHandler handler) {
  state_->routes[path][method] = std::move(handler);
}

void HttpServer::route_prefix(const std::string& prefix, HttpHandler handler) {
  state_->prefixes[prefix] = std::move(handler);
}

unsigned short HttpServer::listen(const std::string& address, unsigned short port) {
  tcp::endpoint ep(asio::ip::make_address(address), port);
  state_->acceptor.open(ep.protocol());
  state_->acceptor.set_option(asio::socket_base::reuse_address(true));
  state_->acceptor.bind(ep);
  state_->acceptor.listen(asio::socket_base::max_listen_connections);
  accept_loop(state_);
  return state_->acceptor.local_endpoint().port();
}

void HttpServer::stop() {
  beast::error_code ignored;
  if (state_->acceptor.is_open()) state_->acceptor.close(ignored);
}

std::size_t HttpServer::active_connections() const { return state_->active; }

std::size_t HttpServer::active_streams() const { return state_->streams; }

asio::io_context& HttpServer::context() const { return state_->io; }

}  // namespace drover::net
