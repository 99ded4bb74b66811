#pragma once
// Shared views of the controller's job records for squeue, scontrol and scancel.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/array_spec.hpp"

namespace drover::cli {

using nlohmann::json;

// A record's array fields, for the readers below that need only those (squeue's typed rows and
// json records share them). `array_pending` must outlive it.
struct ArrayFields {
  uint64_t id = 0;
  uint64_t array_job_id = 0;
  uint32_t array_task_id = 0;
  uint32_t array_max_running = 0;
  std::string_view array_pending;
};
std::string job_display_id(const ArrayFields& job);
std::string array_task_text(const ArrayFields& job);
std::string array_task_field(const ArrayFields& job);
bool job_matches_ref(const ArrayFields& job, const core::JobRef& ref);

// The state columns from the state's name and the completing flag.
std::string job_state_short(std::string_view state, bool completing);
bool job_active(std::string_view state, bool completing);

// "PD", "R", "CG" (a job whose processes are still being cleaned up), "CD", ...
std::string job_state_short(const json& job);
// "PENDING", "RUNNING", "COMPLETING", ...
std::string job_state_long(const json& job);
// Whether squeue shows the job without -t (pending, running, suspended, completing).
bool job_active(const json& job);
// Nodes the job is on, or the requested minimum for pending jobs.
int job_node_count(const json& job);
int job_cpu_count(const json& job);
// squeue's JOBID for a record: "36" for a plain job, "36_5" for an array task, "36_[5-9%2]"
// for an array's pending remainder.
std::string job_display_id(const json& job);
// The array task part alone: "5", "[5-9%2]", or "N/A" for a plain job.
std::string array_task_text(const json& job);
// What ArrayTaskId= shows: "5", "5-9%2".
std::string array_task_field(const json& job);
// Whether a job reference ("36", a task's own id, "36_5", "36_[1-3]") names this record; for
// an array's pending remainder, whether any of its tasks is named.
bool job_matches_ref(const json& job, const core::JobRef& ref);
// Memory the job has or will have, summed over nodes, in MB (for TRES).
int64_t job_mem_mb(const json& job);

}  // namespace drover::cli
