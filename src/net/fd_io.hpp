#pragma once
// Whole reads and writes on blocking descriptors. send_all/read_all are the commands' clients'
// (unix_client, framed_client) and throw std::runtime_error naming the controller, their only
// peer; write_fully is for files and pipes, where the caller decides what a failure means.
#include <cstddef>
#include <string_view>

namespace drover::net {

// Sends all `n` bytes, retrying on EINTR; `flags` as send(2)'s (MSG_NOSIGNAL, or 0: as write).
void send_all(int fd, const char* p, size_t n, int flags);
// Reads exactly `n` bytes, retrying on EINTR; the peer closing first is an error.
void read_all(int fd, char* p, size_t n);
// Writes all of `data`, retrying on EINTR and short writes; false (errno set) if a write fails.
bool write_fully(int fd, std::string_view data);

}  // namespace drover::net
