#pragma once
#include <string>

namespace drover::net {

// A blocking request/response client over the controller's Unix socket, for the CLI: no
// event loop, so a command starts and finishes fast.
class UnixClient {
 public:
  UnixClient() = default;
  ~UnixClient();
  UnixClient(const UnixClient&) = delete;
  UnixClient& operator=(const UnixClient&) = delete;

  // Throws std::runtime_error with errno text when the controller cannot be reached.
  void connect(const std::string& path);
  std::string call(const std::string& request);

 private:
  int fd_ = -1;
};

}  // namespace drover::net
