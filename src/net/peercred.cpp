#include "net/peercred.hpp"

#include <sys/socket.h>

namespace drover::net {

std::optional<PeerCred> peer_credentials(int fd) {
  struct ucred cred {};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return PeerCred{cred.uid, cred.gid, cred.pid};
}

}  // namespace drover::net
