#include "net/unix_client.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "net/fd_io.hpp"
#include "proto/frame.hpp"

namespace drover::net {

UnixClient::~UnixClient() {
  if (fd_ >= 0) ::close(fd_);
}

void UnixClient::connect(const std::string& path) {
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error(std::strerror(errno));
}

std::string UnixClient::call(const std::string& request) {
  std::string frame = proto::encode_length(static_cast<uint32_t>(request.size())) + request;
  send_all(fd_, frame.data(), frame.size(), 0);
  unsigned char h[4];
  read_all(fd_, reinterpret_cast<char*>(h), 4);
  uint32_t len = proto::decode_length(h);
  if (len > proto::kMaxReply) throw std::runtime_error("reply too large");
  std::string body(len, '\0');
  read_all(fd_, body.data(), len);
  return body;
}

}  // namespace drover::net
