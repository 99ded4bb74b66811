// droverd: the node agent.
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <filesystem>
#include <iostream>

#include "agent/agent.hpp"
#include "agent/stepd.hpp"
#include "net/auth.hpp"

namespace {
int usage() {
  std::cerr << "usage: droverd --node NAME --controller HOST:PORT --key-file FILE --spool DIR\n"
               "               [--listen ADDR] [--cpus N] [--mem MB]\n";
  return 2;
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
  std::string key_file, controller;
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
    else
      return usage();
  }
  if (opts.node.empty() || controller.empty() || key_file.empty() || opts.spool_dir.empty())
    return usage();
  auto colon = controller.rfind(':');
  if (colon == std::string::npos) return usage();
  opts.controller_host = controller.substr(0, colon);
  opts.controller_port = std::stoi(controller.substr(colon + 1));
  spdlog::set_pattern("[%Y-%m-%dT%H:%M:%S.%e] [%l] %v");
  try {
    // Jobs pass through the spool to their own job directory (a script only its user reads);
    // nobody else may list it.
    std::filesystem::create_directories(opts.spool_dir);
    std::filesystem::permissions(opts.spool_dir, std::filesystem::perms::owner_all |
                                                     std::filesystem::perms::group_exec |
                                                     std::filesystem::perms::others_exec);
    opts.key = drover::net::load_or_create_key(key_file);
    drover::agent::Agent agent(std::move(opts));
    return agent.run();
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
