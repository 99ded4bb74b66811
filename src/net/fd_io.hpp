#pragma once
// Whole reads and writes on a blocking socket, for the commands' clients (unix_client,
// framed_client). Both throw std::runtime_error naming the controller, which is the only peer.
#include <cstddef>

namespace drover::net {

// Sends all `n` bytes, retrying on EINTR; `flags` as send(2)'s (MSG_NOSIGNAL, or 0: as write).
void send_all(int fd, const char* p, size_t n, int flags);
// Reads exactly `n` bytes, retrying on EINTR; the peer closing first is an error.
void read_all(int fd, char* p, size_t n);

}  // namespace drover::net
