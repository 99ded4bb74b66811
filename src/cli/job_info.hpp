#pragma once
// Shared views of the controller's job records for squeue, scontrol and scancel.
#include <nlohmann/json.hpp>
#include <string>

namespace drover::cli {

using nlohmann::json;

// "PD", "R", "CG" (a job whose processes are still being cleaned up), "CD", ...
std::string job_state_short(const json& job);
// "PENDING", "RUNNING", "COMPLETING", ...
std::string job_state_long(const json& job);
// Whether squeue shows the job without -t (pending, running, suspended, completing).
bool job_active(const json& job);
// Nodes the job is on, or the requested minimum for pending jobs.
int job_node_count(const json& job);
int job_cpu_count(const json& job);
// Memory the job has or will have, summed over nodes, in MB (for TRES).
int64_t job_mem_mb(const json& job);

}  // namespace drover::cli
