#include "net/framed_client.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "net/auth.hpp"
#include "net/fd_io.hpp"
#include "proto/frame.hpp"

namespace drover::net {
FramedClient::~FramedClient() {
  if (fd_ >= 0) ::close(fd_);
}

void FramedClient::connect_tcp(const std::string& host, int port, int timeout_s) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    throw std::runtime_error(host + ": " + ::gai_strerror(rc));
  std::string last = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, timeout_s * 1000) == 1 &&
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0) {
        rc = err == 0 ? 0 : -1;
        errno = err;
      } else {
        errno = ETIMEDOUT;
      }
    }
    if (rc == 0) {
      ::fcntl(fd, F_SETFL, 0);  // blocking from here on
      int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fd_ = fd;
      break;
    }
    last = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (fd_ < 0) throw std::runtime_error(last);
}

void FramedClient::send(const std::string& payload) {
  std::string body = payload;
  if (!key_.empty()) body = frame_mac(key_, 'u', send_seq_++, payload) + payload;
  const std::string frame = proto::encode_length(static_cast<uint32_t>(body.size())) + body;
  send_all(fd_, frame.data(), frame.size(), MSG_NOSIGNAL);
}

std::string FramedClient::recv() {
  unsigned char h[4];
  read_all(fd_, reinterpret_cast<char*>(h), 4);
  const uint32_t len = proto::decode_length(h);
  if (len > proto::kMaxReply) throw std::runtime_error("reply too large");
  std::string body(len, '\0');
  read_all(fd_, body.data(), len);
  if (key_.empty()) return body;
  if (body.size() < kFrameMacSize ||
      !constant_time_equal(
          std::string_view(body.data(), kFrameMacSize),
          frame_mac(key_, 'd', recv_seq_, std::string_view(body).substr(kFrameMacSize)))) {
    unauthenticated = body;
    throw std::runtime_error("reply without a valid message authentication code");
  }
  ++recv_seq_;
  return body.substr(kFrameMacSize);
}

}  // namespace drover::net
