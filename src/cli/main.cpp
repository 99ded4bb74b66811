// One binary, many names: installed as sbatch, squeue, ... in drover's own bin directory.
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/format.hpp"

int main(int argc, char** argv) {
  using Entry = int (*)(const std::vector<std::string>&);
  static const std::map<std::string, Entry> kCommands = {
      {"sbatch", drover::cli::sbatch_main},     {"squeue", drover::cli::squeue_main},
      {"sinfo", drover::cli::sinfo_main},       {"scancel", drover::cli::scancel_main},
      {"scontrol", drover::cli::scontrol_main}, {"sprio", drover::cli::sprio_main},
      {"sshare", drover::cli::sshare_main},     {"sacct", drover::cli::sacct_main},
      {"srun", drover::cli::srun_main},         {"salloc", drover::cli::salloc_main},
      {"sacctmgr", drover::cli::sacctmgr_main}, {"sreport", drover::cli::sreport_main},
  };
  std::string name = argv[0];
  if (auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
  int first = 1;
  if (!kCommands.count(name) && argc > 1 && kCommands.count(argv[1])) {
    name = argv[1];  // "drover-cmd squeue ..." form
    first = 2;
  }
  auto it = kCommands.find(name);
  if (it == kCommands.end()) {
    std::cerr << "drover-cmd: run as one of:";
    for (const auto& [n, f] : kCommands) std::cerr << ' ' << n;
    std::cerr << '\n';
    return 2;
  }
  // What the listing commands print is other users' text too (job names, comments, reasons):
  // no control character of it reaches the terminal raw. sbatch/srun/salloc pass their jobs'
  // own output and environment through, untouched.
  static const std::set<std::string> kListings = {
      "squeue", "sinfo", "scontrol", "sacct", "sprio", "sshare", "sacctmgr", "sreport", "scancel"};
  std::optional<drover::cli::TerminalGuard> guard;
  if (kListings.count(name)) guard.emplace();
  return it->second(std::vector<std::string>(argv + first, argv + argc));
}
