#include "cli/client.hpp"

#include <cstdlib>

#include "net/unix_client.hpp"

namespace drover::cli {

std::string controller_socket() {
  if (const char* s = std::getenv("DROVER_SOCKET"); s && *s) return s;
  if (const char* d = std::getenv("DROVER_STATE_DIR"); d && *d)
    return std::string(d) + "/ctld.sock";
  return "/run/drover/ctld.sock";
}

json call_controller(const json& request) {
  net::UnixClient client;
  try {
    client.connect(controller_socket());
  } catch (const std::exception& e) {
    throw ControllerUnreachable(e.what());
  }
  try {
    return json::parse(client.call(request.dump()));
  } catch (const json::exception& e) {
    throw ControllerUnreachable(std::string("bad reply: ") + e.what());
  } catch (const std::exception& e) {
    throw ControllerUnreachable(e.what());
  }
}

}  // namespace drover::cli
