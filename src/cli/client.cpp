#include "cli/client.hpp"

#include <unistd.h>

#include <cstdlib>

#include "net/unix_client.hpp"

namespace drover::cli {

std::string controller_socket() {
  if (const char* s = std::getenv("DROVER_SOCKET"); s && *s) return s;
  if (const char* d = std::getenv("DROVER_STATE_DIR"); d && *d)
    return std::string(d) + "/ctld.sock";
  // Inside a job (even with --export=NONE) SLURM_CONF names the cluster's slurm.conf; a local
  // cluster keeps its controller's socket beside it.
  if (const char* c = std::getenv("SLURM_CONF"); c && *c) {
    std::string conf = c;
    auto slash = conf.rfind('/');
    std::string sock = (slash == std::string::npos ? "." : conf.substr(0, slash)) + "/ctld.sock";
    if (::access(sock.c_str(), F_OK) == 0) return sock;
  }
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
    // Bytes that are not UTF-8 (a job name, a script, the environment) cannot travel in JSON
    // as they are: they go as U+FFFD instead of failing the whole request.
    return json::parse(client.call(request.dump(-1, ' ', false, json::error_handler_t::replace)));
  } catch (const json::exception& e) {
    throw ControllerUnreachable(std::string("bad reply: ") + e.what());
  } catch (const std::exception& e) {
    throw ControllerUnreachable(e.what());
  }
}

}  // namespace drover::cli
