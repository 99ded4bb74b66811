#pragma once
#include <map>
#include <string>
#include <vector>

namespace drover::tool {

struct UpOptions {
  std::string state_dir;
  int nodes = 0;         // 0: whatever the state dir's slurm.conf says (1 for a new one)
  int cpus = 0;          // 0: this machine's
  long long mem_mb = 0;  // 0: this machine's
  std::vector<std::string> settings;  // extra slurm.conf lines (Key=Value)
  // Settings of one node (1-based) only, "KEY=V ..." each replacing the generated KEY
  // (CPUs=4 RealMemory=2000): nodes that differ from the rest.
  std::map<int, std::string> node_conf;
  int timeout_s = 30;
  // Each agent in a network namespace of its own with its own address (root only). A state
  // dir made with it keeps it: a later `drover up` brings the namespaces back.
  bool netns = false;
};

// Starts (or resumes) a local cluster: one droverctld and one droverd per node, all in the
// background, state under the state dir. Returns once every agent has registered.
int cluster_up(const UpOptions& opts);
// Stops the daemons recorded in the state dir's pid files and, for a --netns cluster, removes
// its namespaces, veth pairs, bridge and hosts files.
int cluster_down(const std::string& state_dir);
// `drover node-key`: host's key (net/keys.hpp) from the controller's secret in state_dir,
// written to `out` (mode 0600, never over a file) or, with `out` empty, printed.
int node_key_file(const std::string& state_dir, const std::string& host, const std::string& out);

}  // namespace drover::tool
