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
         "       drover node-key NAME --state-dir DIR [--out FILE]\n"
         "       drover sim TRACE [--nodes N] [--cpus-per-node C]\n"
         "                  [--policy fcfs|easy|conservative|multifactor] [--jobs-csv FILE]\n"
         "\n"
         "--node-conf K: settings of node K only (CPUs=4 RealMemory=2000), each replacing\n"
         "the generated one: a cluster of unlike nodes.\n"
         "--netns (root): every node's agent, and its jobs, in a network namespace of its own\n"
         "(drv-TAG-NODE) with its own address on a bridge (a free /24 of 10.213.0.0/16), node\n"
         "names in its /etc/hosts, so multi-node jobs cross a real network; the state dir\n"
         "remembers it, `drover up` recreates and `drover down` removes the namespaces.\n"
         "node-key NAME: the key of host NAME (a node, or a login host for droverd --login),\n"
         "derived from the controller's secret in DIR, written to FILE (mode 0600) or printed;\n"
         "the host's droverd reads it with --key-file (docs/security.md).\n";
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
  std::string key_host, key_out;
  size_t first_option = 1;
  if (cmd == "node-key") {
    if (args.size() < 2 || args[1].empty() || args[1][0] == '-') return usage();
    key_host = args[1];
    first_option = 2;
  }
  try {
    for (size_t i = first_option; i < args.size(); ++i) {
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
      else if (a == "--out" && cmd == "node-key")
        key_out = value();
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
    if (cmd == "node-key") return drover::tool::node_key_file(up.state_dir, key_host, key_out);
  } catch (const std::exception& e) {
    std::cerr << "drover: " << e.what() << '\n';
    return 1;
  }
  return usage();
}
