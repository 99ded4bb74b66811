#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/job.hpp"

namespace drover::core {

// Slurm's run-length form for per-node counts: {2,2,2,1} -> "2(x3),1".
std::string compress_counts(const std::vector<int>& counts);

// The environment of a batch job's shell: the exported submit environment plus the
// SLURM_* variables the batch step sees. Agent-side values (SLURM_TASK_PID) are added there.
std::map<std::string, std::string> batch_environment(const Job& job,
                                                     const std::string& cluster_name);

}  // namespace drover::core
