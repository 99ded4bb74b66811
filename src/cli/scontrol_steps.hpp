#pragma once
// Running job steps as Slurm 22.05 shows them: `scontrol show step[s] [ID]` and `squeue -s`.
// Pure functions of the controller's job query reply (each job view carries its running srun
// steps under "steps"), so tests run them against canned replies.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/report_cmds.hpp"
#include "core/array_spec.hpp"

namespace drover::cli {

inline constexpr uint32_t kBatchStepId = 0xfffffffb;  // Slurm's SLURM_BATCH_SCRIPT
inline constexpr uint32_t kNoStepId = 0xfffffffe;     // Slurm's NO_VAL: no step named

struct StepView {
  uint64_t job_id = 0;
  uint64_t array_job_id = 0;  // 0: not an array task
  uint32_t array_task_id = 0;
  uint32_t step_id = 0;  // kBatchStepId for the batch shell
  std::string name, partition, user, cluster;
  uint32_t uid = 0;
  int64_t start_time = 0;
  int64_t time_limit_min = -1;  // -1: UNLIMITED (a step's own --time, never the job's)
  std::string nodelist;
  int nnodes = 0, cpus = 0, ntasks = 0;
  std::string tres;  // "cpu=4,mem=2000M,node=2"; "(null)" for the batch step
  std::string dist;  // "Block", "Cyclic"; empty for the batch step (no Dist=)
  std::string srun_host;
  int64_t srun_pid = 0;
  // "7.0", "7.batch", "7_3.0" (an array task's steps are named by the array's id).
  std::string id_text() const;
};

// The running steps of the jobs in a query reply: each running batch job's batch step (Slurm
// lists N.batch; there is no N.extern without PrologFlags=Contain), then srun's steps by
// number; jobs in id order. Allocations (salloc, srun's own) have no batch step.
std::vector<StepView> running_steps(const json& reply);

// One step as scontrol prints it: seven lines (three-space indent) and a blank line, or with
// -o one line.
std::string format_step(const StepView& step, bool one_liner);

// scontrol show step[s] [ID] from the reply to {"what": "jobs"} (with "job_id" when ID names
// one). ID is read as Slurm 22.05 reads it, with strtol: "5" (every step of job 5), "5.0",
// "5_2.0" (an array task), a non-number for every job, and "5.batch" as 5.0.
CommandResult scontrol_show_steps(const std::string& id, const json& reply, bool one_liner);
// The job id that query should name (0: all jobs).
uint64_t step_query_job_id(const std::string& id);

// squeue -s.
struct StepRef {
  uint64_t job_id = 0;
  std::optional<uint32_t> array_task;
  uint32_t step_id = 0;
};
// --steps=LIST ("7.0,8_1.2"). On a malformed item: squeue's message ("squeue: error: Invalid
// job_step id: 7.??") and false.
bool parse_step_list(const std::string& text, std::vector<StepRef>& out, std::string& error);

struct StepListOptions {
  std::string format;        // -o; empty: "%.15i %.8j %.9P %.8u %.9M %N"
  std::string named_format;  // -O
  bool header = true;
  std::string sort;  // -S; empty: partition, then job and step id
  std::vector<StepRef> steps;
  std::vector<core::JobRef> jobs;
  std::set<std::string> users, partitions;
  std::vector<std::string> nodes;  // -w, expanded
};
// The table (errors about the format in `err`).
CommandResult squeue_steps(const json& reply, const StepListOptions& o);

}  // namespace drover::cli
