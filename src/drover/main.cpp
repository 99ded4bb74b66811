// drover: the admin and developer tool.
#include <iostream>
#include <string>
#include <vector>

#include "drover/local_cluster.hpp"
#include "sim/cli.hpp"

namespace {
int usage() {
  std::cerr
      << "usage: drover up --state-dir DIR [--nodes N] [--cpus C] [--mem MB] [--set Key=Value]...\n"
         "                 [--node-conf K 'KEY=V ...'] [--netns] [--timeout S]\n"
         "       drover down --state-dir DIR\n"
         "       drover sim TRACE [--nodes N] [--cpus-per-node C]\n"
         "                  [--policy fcfs|easy|conservative|multifactor] [--jobs-csv FILE]\n"
         "\n"
         "--node-conf K: settings of node K only (CPUs=4 RealMemory=2000), each replacing\n"
         "the generated one: a cluster of unlike nodes.\n"
         "--netns (root): every node's agent, and its jobs, in a network namespace of its own\n"
         "(drv-TAG-NODE) with its own address on a bridge (a free /24 of 10.213.0.0/16), node\n"
         "names in its /etc/hosts, so multi-node jobs cross a real network; the state dir\n"
         "remembers it, `drover up` recreates and `drover down` removes the namespaces.\n";
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage();
  const std::string cmd = args[0];
  if (cmd == "sim")
    return drover::sim::sim_main(std::vector<std::string>(args.begin() + 1, args.end()), std::cout,
                                 std::cerr);
  drover::tool::UpOptions up;
  try {
    for (size_t i = 1; i < args.size(); ++i) {
      const std::string& a = args[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
        return args[++i];
      };
      if (a == "--state-dir")
        up.state_dir = value();
      else if (a == "--nodes")
        up.nodes = std::stoi(value());
      else if (a == "--cpus")
        up.cpus = std::stoi(value());
      else if (a == "--mem")
        up.mem_mb = std::stoll(value());
      else if (a == "--set")
        up.settings.push_back(value());
      else if (a == "--node-conf") {
        const int k = std::stoi(value());
        up.node_conf[k] = value();
      } else if (a == "--netns")
        up.netns = true;
      else if (a == "--timeout")
        up.timeout_s = std::stoi(value());
      else
        throw std::invalid_argument("unknown option " + a);
    }
  } catch (const std::exception& e) {
    std::cerr << "drover: " << e.what() << '\n';
    return usage();
  }
  if (up.state_dir.empty()) return usage();
  try {
    if (cmd == "up") return drover::tool::cluster_up(up);
    if (cmd == "down") return drover::tool::cluster_down(up.state_dir);
  } catch (const std::exception& e) {
    std::cerr << "drover: " << e.what() << '\n';
    return 1;
  }
  return usage();
}
