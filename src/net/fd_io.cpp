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

bool write_fully(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace drover::net
