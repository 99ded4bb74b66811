#include "net/fd_io.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace drover::net {

void send_all(int fd, const char* p, size_t n, int flags) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, flags);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      throw std::runtime_error(std::string("write to controller: ") + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

void read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) throw std::runtime_error("controller closed the connection");
    if (r < 0)
      throw std::runtime_error(std::string("read from controller: ") + std::strerror(errno));
    p += r;
    n -= static_cast<size_t>(r);
  }
}

}  // namespace drover::net
