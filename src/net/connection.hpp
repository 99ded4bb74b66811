#pragma once
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "proto/frame.hpp"

namespace drover::net {

// One framed, bidirectional message stream over a TCP or Unix socket. Reads and writes run on
// the socket's executor; send() may be called from any thread. After set_session_key() every
// frame in both directions carries a MAC (see auth.hpp) and a bad one closes the connection.
// Lifetime: pending reads, writes and timers each hold the connection; the frame being written
// is owned by the connection outside the queue, so close() (which drops the queue) never frees
// a buffer the socket is still writing, and nothing touches the queue once it is closed.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;
  using MessageHandler = std::function<void(std::string payload)>;
  using CloseHandler = std::function<void(const std::string& why)>;

  // What a peer that has not authenticated, or has gone quiet, may hold (see set_limits).
  struct Limits {
    uint32_t max_frame = proto::kMaxFrame;
    // Before set_session_key(), and on links that never have one: frames larger close it.
    uint32_t max_frame_unauthenticated = proto::kMaxFrame;
    // Closed when no frame has come in or gone out for this long (zero: never).
    std::chrono::milliseconds idle_timeout{0};
    // Closed unless set_session_key() comes within this long of start() (zero: never).
    std::chrono::milliseconds handshake_timeout{0};
  };
  explicit Connection(Socket socket);
  ~Connection();

  // Before start(), or on the executor (from a message handler): then from the next frame on.
  void set_limits(const Limits& limits) { limits_ = limits; }

  void start(MessageHandler on_message, CloseHandler on_close);
  // Queues one message. `authenticated` false only for handshake frames.
  void send(std::string payload, bool authenticated = true);
  void close();
  // Must be called on the executor (from a message handler), before the next frame.
  void set_session_key(std::string key, bool is_controller);
  int native_handle() { return socket_.native_handle(); }
  // Where an authenticated session stands, for another process to carry it on (a job's step
  // supervisor taking over srun's link from the agent).
  struct SessionState {
    std::string key;
    char send_dir = 0, recv_dir = 0;
    uint64_t send_seq = 0, recv_seq = 0;
  };
  // Hands the socket over: this connection stops reading and writing without shutting the
  // socket down or calling its close handler, and returns its descriptor (now the caller's)
  // with the session's state. Must be called on the executor, from a message handler
  // (so no read is in flight); -1 while a frame is still being written.
  int hand_over(SessionState& state);
  // The other end of hand_over(), before start().
  void resume(const SessionState& state);
  uint64_t id() const { return id_; }
  const std::string& peer() const { return peer_; }
  void set_peer(std::string p) { peer_ = std::move(p); }

 private:
  void read_header();
  void read_body(uint32_t len);
  void write_next();
  void fail(const std::string& why);
  void arm_idle();

  Limits limits_;
  boost::asio::steady_timer idle_timer_, handshake_timer_;

  Socket socket_;
  uint64_t id_;
  std::string peer_;
  unsigned char header_[4];
  std::string body_;
  std::deque<std::string> out_;
  std::string in_flight_;  // the frame async_write is sending: not in out_, see above
  bool writing_ = false, closed_ = false;
  std::string key_;
  char send_dir_ = 0, recv_dir_ = 0;
  uint64_t send_seq_ = 0, recv_seq_ = 0;
  MessageHandler on_message_;
  CloseHandler on_close_;
};

}  // namespace drover::net
