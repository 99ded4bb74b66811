#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ctld/config.hpp"

namespace drover::ctld {

// scontrol show config: the controller's configuration as Slurm 22.05 lists it, key by key in
// Slurm's order. Keys drover acts on show the values it uses (defaults applied); other keys show
// what slurm.conf sets (in Slurm's units: "30 sec", "0 min", ...) or Slurm's default.
struct ConfigFacts {
  int64_t boot_time = 0;
  uint64_t next_job_id = 1;
  size_t node_count = 0;  // MaxNodeCount: as set, or the nodes there are when more
  std::string version;    // SLURM_VERSION
};

using ConfigLines = std::vector<std::pair<std::string, std::string>>;

struct ConfigReport {
  ConfigLines main;  // "Configuration data as of ..." section
  ConfigLines mpi;   // "MPI Plugins Configuration:" section
};

ConfigReport config_report(const Config& config, const ConfigFacts& facts);

}  // namespace drover::ctld
