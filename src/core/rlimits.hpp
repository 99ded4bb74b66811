#pragma once
// Resource limits a job's tasks inherit from the submitting shell (Slurm's
// PropagateResourceLimits, PropagateResourceLimitsExcept and --propagate). The submitting
// command sends each as SLURM_RLIMIT_<NAME>=<soft limit> in the job's environment; the node
// applies them to the tasks and takes them out of the environment.
#include <string>
#include <vector>

namespace drover::core {

struct RlimitName {
  const char* name;  // Slurm's: AS, CORE, CPU, DATA, FSIZE, MEMLOCK, NOFILE, NPROC, RSS, STACK
  int resource;      // RLIMIT_*
};
const std::vector<RlimitName>& rlimit_names();

// "ALL", "NONE" or a comma list of names (upper case, as Slurm takes them): the resources
// named, in rlimit_names() order. Throws ParseError("Bad rlimit name: X") for anything else.
std::vector<int> parse_rlimit_list(const std::string& list);

// What slurm.conf propagates: PropagateResourceLimits (ALL when unset) less
// PropagateResourceLimitsExcept. Throws ParseError as parse_rlimit_list.
std::vector<int> conf_rlimits(const std::string& propagate, const std::string& except);

// "SLURM_RLIMIT_<NAME>" for a resource ("" if it has no name here).
std::string rlimit_env_name(int resource);

}  // namespace drover::core
