// droverd: the node agent.
#include <fcntl.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "agent/agent.hpp"
#include "agent/stepd.hpp"
#include "agent/vouch.hpp"
#include "net/auth.hpp"
#include "net/keys.hpp"

namespace {
int usage() {
  std::cerr << "usage: droverd --node NAME --controller HOST:PORT --key-file FILE --spool DIR\n"
               "               [--listen ADDR] [--cpus N] [--mem MB] [-Z [--conf \"K=V ...\"]]\n"
               "               [--auth-socket PATH]\n"
               "       droverd --login --node HOST --key-file FILE --auth-socket PATH\n"
               "  --key-file: this host's own key (drover node-key NAME makes it)\n"
               "  --auth-socket: where commands on this host get their credential for the\n"
               "    controller (DROVER_AUTH_SOCKET); --login serves only that (a login host)\n"
               "  In a NodeSet's pod, DROVER_NODE_NAME, DROVER_NODE_CONF, DROVER_NODE_KEY and\n"
               "  DROVER_AUTH_SOCKET stand for --node (with -Z), --conf, --key-file and\n"
               "  --auth-socket; %n in --spool is the name\n";
  return 2;
}

// A login host: no agent, only the vouching socket, until SIGTERM or SIGINT.
int run_login(const std::string& host, const std::string& key_file, const std::string& path) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // the server's thread inherits the mask
  drover::agent::VouchThread vouch(host, drover::net::load_key(key_file), path);
  int sig = 0;
  sigwait(&set, &sig);
  spdlog::info("signal {}: shutting down", sig);
  ::unlink(path.c_str());
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  // What the agent creates (spool, job scripts) is its own unless it says otherwise; jobs get
  // their submitter's umask (SLURM_UMASK) in launch.cpp.
  ::umask(077);
  // A job's or step's supervisor (agent/stepd.hpp), started by the agent: its link is fd 3,
  // its socket fd 4, srun's link (a step's) fd 5.
  if (argc == 4 && std::string(argv[1]) == "--stepd" && std::string(argv[2]) == "--spool") {
    spdlog::set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] [stepd] %v");
    return drover::agent::run_supervisor(3, 4, argv[3], ::fcntl(5, F_GETFD) >= 0 ? 5 : -1);
  }
  drover::agent::AgentOptions opts;
  std::string key_file, controller, auth_socket;
  bool login = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--node")
      opts.node = next();
    else if (a == "--controller")
      controller = next();
    else if (a == "--key-file")
      key_file = next();
    else if (a == "--spool")
      opts.spool_dir = next();
    else if (a == "--listen")
      opts.listen_address = next();
    else if (a == "--cpus")
      opts.cpus = std::stoi(next());
    else if (a == "--mem")
      opts.real_memory_mb = std::stoll(next());
    else if (a == "-Z" || a == "--dynamic")
      opts.dynamic = true;
    else if (a == "--conf")
      opts.dynamic_conf = next();
    else if (a == "--auth-socket")
      auth_socket = next();
    else if (a == "--login")
      login = true;
    else
      return usage();
  }
  spdlog::set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] %v");
  // An agent pod of a NodeSet (docs/operators.md): the operator puts the node's name and
  // definition in its environment, and its key in a Secret the pod reads as DROVER_NODE_KEY.
  std::string env_key;
  if (const char* name = std::getenv("DROVER_NODE_NAME"); name && *name && opts.node.empty()) {
    opts.node = name;
    opts.dynamic = true;
    if (const char* conf = std::getenv("DROVER_NODE_CONF"); conf && opts.dynamic_conf.empty())
      opts.dynamic_conf = conf;
    if (const char* key = std::getenv("DROVER_NODE_KEY"); key && *key && key_file.empty())
      env_key = key;
    while (!env_key.empty() && std::isspace(static_cast<unsigned char>(env_key.back())))
      env_key.pop_back();
    // The operator gives every agent pod a vouching socket where its jobs' processes reach it.
    if (const char* s = std::getenv("DROVER_AUTH_SOCKET"); s && *s && auth_socket.empty())
      auth_socket = s;
  }
  // %n in the spool directory is the node's name, as in SlurmdSpoolDir, so that agents on one
  // host keep apart.
  for (size_t at; (at = opts.spool_dir.find("%n")) != std::string::npos;)
    opts.spool_dir.replace(at, 2, opts.node);
  if (login) {
    if (opts.node.empty() || key_file.empty() || auth_socket.empty()) return usage();
    try {
      return run_login(opts.node, key_file, auth_socket);
    } catch (const std::exception& e) {
      spdlog::critical("{}", e.what());
      return 1;
    }
  }
  if (opts.node.empty() || controller.empty() || (key_file.empty() && env_key.empty()) ||
      opts.spool_dir.empty())
    return usage();
  if (!opts.dynamic_conf.empty() && !opts.dynamic) {
    std::cerr << "droverd: --conf is only valid with -Z\n";
    return 2;
  }
  auto colon = controller.rfind(':');
  if (colon == std::string::npos) return usage();
  opts.controller_host = controller.substr(0, colon);
  opts.controller_port = std::stoi(controller.substr(colon + 1));
  try {
    // Jobs pass through the spool to their own job directory (a script only its user reads);
    // nobody else may list it.
    std::filesystem::create_directories(opts.spool_dir);
    std::filesystem::permissions(opts.spool_dir, std::filesystem::perms::owner_all |
                                                     std::filesystem::perms::group_exec |
                                                     std::filesystem::perms::others_exec);
    opts.key = key_file.empty() ? env_key : drover::net::load_key(key_file);
    std::optional<drover::agent::VouchThread> vouch;
    if (!auth_socket.empty()) vouch.emplace(opts.node, opts.key, auth_socket);
    opts.auth_socket = auth_socket;
    drover::agent::Agent agent(std::move(opts));
    const int rc = agent.run();
    if (!auth_socket.empty()) ::unlink(auth_socket.c_str());
    return rc;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
