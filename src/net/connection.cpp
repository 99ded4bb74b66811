#include "net/connection.hpp"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "net/auth.hpp"
#include "proto/frame.hpp"

namespace drover::net {
namespace {
std::atomic<uint64_t> next_id{1};
}  // namespace

Connection::Connection(Socket socket)
    : idle_timer_(socket.get_executor()),
      handshake_timer_(socket.get_executor()),
      socket_(std::move(socket)),
      id_(next_id++) {}
Connection::~Connection() = default;

void Connection::start(MessageHandler on_message, CloseHandler on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  boost::asio::post(socket_.get_executor(), [self = shared_from_this()] {
    if (self->closed_) return;
    if (self->limits_.handshake_timeout.count() > 0 && self->key_.empty()) {
      self->handshake_timer_.expires_after(self->limits_.handshake_timeout);
      self->handshake_timer_.async_wait([self](boost::system::error_code ec) {
        if (!ec && self->key_.empty()) self->fail("no handshake in time");
      });
    }
    self->arm_idle();
    self->read_header();
  });
}

// Restarted by every frame in or out; an idle peer is dropped when it runs out.
void Connection::arm_idle() {
  if (limits_.idle_timeout.count() <= 0 || closed_) return;
  idle_timer_.expires_after(limits_.idle_timeout);
  idle_timer_.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    auto self = weak.lock();
    if (!ec && self) self->fail("idle timeout");
  });
}

void Connection::set_session_key(std::string key, bool is_controller) {
  key_ = std::move(key);
  handshake_timer_.cancel();
  send_dir_ = is_controller ? 'd' : 'u';  // down to agents, up to the controller
  recv_dir_ = is_controller ? 'u' : 'd';
}

int Connection::hand_over(SessionState& state) {
  if (closed_ || writing_ || !out_.empty()) return -1;
  // release(), not close(): the descriptor leaves this process's epoll set too (closing a copy
  // would leave the socket registered there while the other process holds it).
  boost::system::error_code ec;
  const int fd = socket_.release(ec);
  if (ec || fd < 0) return -1;
  state = {key_, send_dir_, recv_dir_, send_seq_, recv_seq_};
  closed_ = true;  // the read that would follow this frame is never started
  idle_timer_.cancel();
  handshake_timer_.cancel();
  // The handlers stay (the message handler may be the caller); closed_ keeps them from running.
  ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

void Connection::resume(const SessionState& state) {
  key_ = state.key;
  send_dir_ = state.send_dir;
  recv_dir_ = state.recv_dir;
  send_seq_ = state.send_seq;
  recv_seq_ = state.recv_seq;
}

void Connection::send(std::string payload, bool authenticated) {
  boost::asio::post(socket_.get_executor(), [self = shared_from_this(), p = std::move(payload),
                                             authenticated]() mutable {
    if (self->closed_) return;
    std::string frame;
    if (authenticated && !self->key_.empty()) {
      std::string mac = frame_mac(self->key_, self->send_dir_, self->send_seq_++, p);
      frame = proto::encode_length(static_cast<uint32_t>(mac.size() + p.size())) + mac + p;
    } else {
      frame = proto::encode_length(static_cast<uint32_t>(p.size())) + p;
    }
    self->out_.push_back(std::move(frame));
    if (!self->writing_) self->write_next();
  });
}

void Connection::write_next() {
  if (out_.empty() || closed_) {
    writing_ = false;
    return;
  }
  writing_ = true;
  // The frame leaves the queue before the write starts: fail() may clear the queue while the
  // write is in flight, and a write that completes after that must find nothing to pop.
  in_flight_ = std::move(out_.front());
  out_.pop_front();
  boost::asio::async_write(socket_, boost::asio::buffer(in_flight_),
                           [self = shared_from_this()](boost::system::error_code ec, size_t) {
                             if (self->closed_) return;
                             if (ec) return self->fail(ec.message());
                             self->arm_idle();
                             self->write_next();
                           });
}

void Connection::read_header() {
  boost::asio::async_read(socket_, boost::asio::buffer(header_, 4),
                          [self = shared_from_this()](boost::system::error_code ec, size_t) {
                            if (self->closed_) return;
                            if (ec) return self->fail(ec.message());
                            uint32_t len = proto::decode_length(self->header_);
                            const uint32_t max = self->key_.empty()
                                                     ? self->limits_.max_frame_unauthenticated
                                                     : self->limits_.max_frame;
                            if (len > max) return self->fail("frame too large");
                            self->body_.clear();
                            self->read_body(len);
                          });
}

// The body is read in pieces that at most double what has arrived, so memory follows the bytes
// a peer sent, not the length it announced (a header alone does not reserve 64 MiB).
void Connection::read_body(uint32_t len) {
  const size_t have = body_.size();
  const size_t piece = std::min<size_t>(len - have, std::max<size_t>(have, 64 * 1024));
  body_.resize(have + piece);
  boost::asio::async_read(
      socket_, boost::asio::buffer(body_.data() + have, piece),
      [self = shared_from_this(), len](boost::system::error_code ec, size_t) {
        if (self->closed_) return;
        if (ec) return self->fail(ec.message());
        self->arm_idle();
        if (self->body_.size() < len) return self->read_body(len);
        std::string payload = std::move(self->body_);
        if (!self->key_.empty()) {
          if (payload.size() < kFrameMacSize) return self->fail("frame without MAC");
          std::string_view mac(payload.data(), kFrameMacSize);
          std::string_view data(payload.data() + kFrameMacSize, payload.size() - kFrameMacSize);
          std::string want = frame_mac(self->key_, self->recv_dir_, self->recv_seq_++, data);
          if (!constant_time_equal(mac, want)) return self->fail("bad message authentication code");
          payload.erase(0, kFrameMacSize);
        }
        if (self->on_message_) self->on_message_(std::move(payload));
        if (!self->closed_) self->read_header();
      });
}

void Connection::close() {
  boost::asio::post(socket_.get_executor(), [self = shared_from_this()] { self->fail("closed"); });
}

void Connection::fail(const std::string& why) {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_timer_.cancel();
  handshake_timer_.cancel();
  out_.clear();  // in_flight_ stays: a write may still hold it until its handler runs
  auto cb = std::move(on_close_);
  on_message_ = nullptr;
  if (cb) cb(why);
}

}  // namespace drover::net
