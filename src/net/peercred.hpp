#pragma once
#include <sys/types.h>

#include <optional>

namespace drover::net {

// The kernel's word on who is at the other end of a Unix socket (SO_PEERCRED). This, not
// anything in a request, is a client's identity.
struct PeerCred {
  uid_t uid;
  gid_t gid;
  pid_t pid;
};

std::optional<PeerCred> peer_credentials(int fd);

}  // namespace drover::net
