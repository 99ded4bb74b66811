#include "cli/client.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "core/error.hpp"
#include "core/rlimits.hpp"
#include "core/slurm_conf.hpp"
#include "net/framed_client.hpp"
#include "net/keys.hpp"
#include "net/protocol.hpp"
#include "net/unix_client.hpp"
#include "proto/agent_msg.hpp"
#include "proto/decode.hpp"
#include "proto/error.hpp"

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

std::optional<core::SlurmConf> local_slurm_conf() {
  // A local cluster's commands know it by its state directory, which holds its slurm.conf.
  const char* c = std::getenv("SLURM_CONF");
  const char* d = std::getenv("DROVER_STATE_DIR");
  const std::string path = c && *c   ? c
                           : d && *d ? std::string(d) + "/slurm.conf"
                                     : "/etc/slurm/slurm.conf";
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    return core::parse_slurm_conf(text.str(), path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::map<std::string, std::string> propagated_limits(const std::optional<std::string>& propagate) {
  std::vector<int> resources;
  if (propagate) {
    resources = core::parse_rlimit_list(propagate->empty() ? "ALL" : *propagate);
  } else {
    const auto conf = local_slurm_conf();
    try {
      resources = core::conf_rlimits(conf ? conf->get("PropagateResourceLimits", "") : "",
                                     conf ? conf->get("PropagateResourceLimitsExcept", "") : "");
    } catch (const core::ParseError&) {
      resources = core::parse_rlimit_list("ALL");  // the controller refuses such a file
    }
  }
  std::map<std::string, std::string> env;
  for (int r : resources) {
    struct rlimit lim {};
    if (::getrlimit(static_cast<__rlimit_resource_t>(r), &lim) != 0) continue;
    env[core::rlimit_env_name(r)] = std::to_string(static_cast<unsigned long long>(lim.rlim_cur));
  }
  return env;
}

namespace {
// The controller's host:port from slurm.conf (SlurmctldAddr, else SlurmctldHost's address,
// else its name; SlurmctldPort), for a host that does not share the controller's file system.
std::optional<RemoteController> controller_from_conf(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  core::SlurmConf conf;
  try {
    conf = core::parse_slurm_conf(text.str(), path);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string host = conf.get("SlurmctldHost", conf.get("ControlMachine", ""));
  if (host.empty()) return std::nullopt;
  if (auto open = host.find('('); open != std::string::npos) {
    const auto close = host.find(')', open);
    host = host.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
  }
  host = conf.get("SlurmctldAddr", host);
  return RemoteController{host, static_cast<int>(conf.get_int("SlurmctldPort", 6817))};
}

std::string auth_socket() {
  if (const char* s = std::getenv("DROVER_AUTH_SOCKET"); s && *s) return s;
  return "/run/drover/auth.sock";
}

// The controller's refusal of the connection (proto::Refusal) as a failed reply: its number,
// or, from a controller that sent none (the previous release), the number its text is.
std::string refusal_reply(const json& frame) {
  proto::Refusal r;
  try {
    r = proto::Refusal::from_json(frame);
  } catch (const proto::BadMessage&) {
    r.error = "refused";
  }
  if (r.error.empty()) r.error = "refused";
  const proto::Error e = r.code ? proto::Error(static_cast<proto::Errno>(*r.code), r.error)
                                : proto::Error::from_message(r.error);
  return e.reply().dump();
}

// One request over TCP (docs/security.md): a credential from this host's vouching socket, then
// the request and its reply under the session key that came with it.
std::string call_remote(const RemoteController& ctl, const std::string& request) {
  const std::string sock = auth_socket();
  json cred;
  try {
    net::UnixClient vouch;
    vouch.connect(sock);
    cred = json::parse(vouch.call(R"({"op":"credential"})"));
  } catch (const std::exception& e) {
    return proto::Error(
               proto::Errno::kAuthentication,
               "Authentication failure: cannot get a credential from " + sock + ": " + e.what())
        .reply()
        .dump();
  }
  if (!cred.value("ok", false))
    return proto::Error(proto::Errno::kAuthentication,
                        "Authentication failure: " + cred.value("error", ""))
        .reply()
        .dump();
  net::FramedClient client;
  try {
    client.connect_tcp(ctl.host, ctl.port);
  } catch (const std::exception& e) {
    throw ControllerUnreachable(ctl.host + ":" + std::to_string(ctl.port) + ": " + e.what());
  }
  bool sent = false;  // the request is on its way: it may have been acted on
  try {
    // The controller greets every connection (an agent's challenge), before anything is sent.
    const json hello = json::parse(client.recv());
    if (hello.value("type", "") == "error") return refusal_reply(hello);
    client.send(json{{"type", "command"},
                     {"version", net::kProtocolVersion},
                     {"cred", cred.at("cred")},
                     {"sig", cred.at("sig")}}
                    .dump());
    client.set_session_key(net::from_hex(cred.at("session_key").get<std::string>()));
    try {
      if (json::parse(client.recv()).value("type", "") != "accepted")
        throw std::runtime_error("unexpected answer to the credential");
    } catch (const json::exception&) {
      throw;
    } catch (const std::exception& e) {
      // The controller refuses a credential before any key is in use, in the clear.
      const json refusal = json::parse(client.unauthenticated, nullptr, false);
      if (refusal.is_object() && refusal.value("type", "") == "error")
        return refusal_reply(refusal);
      throw;
    }
    sent = true;
    client.send(request);
    return client.recv();
  } catch (const json::exception& e) {
    throw ControllerUnreachable(std::string("bad reply: ") + e.what(), sent);
  } catch (const std::exception& e) {
    throw ControllerUnreachable(e.what(), sent);
  }
}
}  // namespace

std::optional<RemoteController> remote_controller() {
  if (const char* s = std::getenv("DROVER_SOCKET"); s && *s) return std::nullopt;
  if (const char* r = std::getenv("DROVER_CONTROLLER"); r && *r) {
    const std::string v = r;
    const auto colon = v.rfind(':');
    if (colon == std::string::npos || colon == 0) return RemoteController{v, 6817};
    return RemoteController{v.substr(0, colon), std::atoi(v.c_str() + colon + 1)};
  }
  if (const char* d = std::getenv("DROVER_STATE_DIR"); d && *d) return std::nullopt;
  // The controller's socket where this host has it (the controller's host, or a shared file
  // system); else slurm.conf says where the controller listens.
  const std::string sock = controller_socket();
  if (::access(sock.c_str(), F_OK) == 0) return std::nullopt;
  const char* c = std::getenv("SLURM_CONF");
  return controller_from_conf(c && *c ? c : "/etc/slurm/slurm.conf");
}

std::string call_controller_text(const json& request) {
  // Bytes that are not UTF-8 (a job name, a script, the environment) cannot travel in JSON
  // as they are: they go as U+FFFD instead of failing the whole request.
  const std::string text = request.dump(-1, ' ', false, json::error_handler_t::replace);
  if (auto remote = remote_controller()) return call_remote(*remote, text);
  net::UnixClient client;
  try {
    client.connect(controller_socket());
  } catch (const std::exception& e) {
    throw ControllerUnreachable(e.what());
  }
  try {
    return client.call(text);
  } catch (const std::exception& e) {
    throw ControllerUnreachable(e.what(), true);
  }
}

json call_controller(const proto::Request& request) {
  return call_controller(proto::to_json(request));
}

std::string call_controller_text(const proto::Request& request) {
  return call_controller_text(proto::to_json(request));
}

json call_controller(const json& request) {
  const std::string reply = call_controller_text(request);
  try {
    return json::parse(reply);
  } catch (const json::exception& e) {
    throw ControllerUnreachable(std::string("bad reply: ") + e.what(), true);
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

proto::Outcome<proto::SubmitReply> submit_to_controller(proto::SubmitRequest submission,
                                                        std::string id) {
  if (id.empty()) id = new_request_id();
  submission.request_id = id;
  const json request = submission.to_json();
  double limit_s = 60;
  if (const char* r = std::getenv("DROVER_SUBMIT_RETRY_S"); r && *r) limit_s = std::atof(r);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(limit_s));
  auto delay = std::chrono::milliseconds(100);
  bool maybe_received = false;
  while (true) {
    try {
      return proto::decode_reply<proto::SubmitReply>(call_controller(request));
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
