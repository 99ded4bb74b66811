#include "cli/client.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

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
    throw ControllerUnreachable(std::string("bad reply: ") + e.what(), true);
  } catch (const std::exception& e) {
    throw ControllerUnreachable(e.what(), true);
  }
}

namespace {
std::string new_request_id() {
  std::random_device rd;
  char buf[33];
  std::snprintf(buf, sizeof buf, "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return buf;
}
}  // namespace

json submit_to_controller(json request, std::string id) {
  if (id.empty()) id = new_request_id();
  request["request_id"] = id;
  double limit_s = 60;
  if (const char* r = std::getenv("DROVER_SUBMIT_RETRY_S"); r && *r) limit_s = std::atof(r);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(limit_s));
  auto delay = std::chrono::milliseconds(100);
  bool maybe_received = false;
  while (true) {
    try {
      return call_controller(request);
    } catch (const ControllerUnreachable& e) {
      maybe_received = maybe_received || e.maybe_received;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) throw SubmitUnanswered(e.what(), maybe_received, id);
      // The last try comes at the deadline.
      std::this_thread::sleep_for(
          std::min(delay, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)));
    }
    delay = std::min(delay * 2, std::chrono::milliseconds(2000));
  }
}

std::string unanswered_submission(const SubmitUnanswered& e) {
  if (!e.maybe_received) return "Unable to contact slurm controller (connect failure)";
  return "Unable to contact slurm controller (no reply: it may have been submitted, request id " +
         e.request_id + ")";
}

}  // namespace drover::cli
