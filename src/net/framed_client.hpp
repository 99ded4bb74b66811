#pragma once
// A blocking client for one framed exchange over TCP (a command talking to a controller on
// another host): frames as net::Connection writes them, and once a session key is set, each
// carries HMAC(key, direction | sequence | payload) both ways, as Connection checks them.
#include <string>

namespace drover::net {

class FramedClient {
 public:
  FramedClient() = default;
  ~FramedClient();
  FramedClient(const FramedClient&) = delete;
  FramedClient& operator=(const FramedClient&) = delete;

  // Throws std::runtime_error when the host cannot be reached within timeout_s.
  void connect_tcp(const std::string& host, int port, int timeout_s = 10);
  // From now on frames are authenticated; this side is the one dialling ('u' up, 'd' down).
  void set_session_key(std::string key) { key_ = std::move(key); }
  void send(const std::string& payload);
  // Throws std::runtime_error on a frame whose MAC does not match (`unauthenticated` then
  // holds its text, which may be the controller's refusal, sent before any key).
  std::string recv();
  std::string unauthenticated;

 private:
  int fd_ = -1;
  std::string key_;
  uint64_t send_seq_ = 0, recv_seq_ = 0;
};

}  // namespace drover::net
