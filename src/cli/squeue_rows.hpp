#pragma once
// squeue's typed job rows: what the common listing fields (the default, -l and --start
// formats, and -o/-O made of the same fields) read of a job, read from the controller's
// job-list reply without building a json tree (a tree per job was most of squeue's time over
// 100,000 jobs).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/job_info.hpp"

namespace drover::cli {

// One job record of a job-list reply, the fields squeue's common columns, filters, order and
// array joining read. Defaults are those the json readers (job_info.hpp) use for a missing key.
struct JobRow {
  uint64_t id = 0;
  uint64_t array_job_id = 0;
  uint32_t array_task_id = 0;
  uint32_t array_max_running = 0;
  std::string array_pending;
  std::string state;  // as the controller names it; empty: not sent (PENDING)
  bool completing = false;
  std::string reason = "None";
  std::string partition, user, nodelist, sched_nodes;
  uint32_t priority = 0;
  uint32_t uid = 0;
  int64_t start_time = 0;
  int64_t run_time = 0;
  int64_t time_limit_min = -1;
  int alloc_nodes = 0;  // entries of "alloc" (nodes held)
  int alloc_cpus = 0;   // their CPUs
  // spec
  std::string name, account, qos;
  int ntasks = 1;
  int nodes_min = 1;
  int cpus_per_task = 1;

  ArrayFields array() const {
    return {id, array_job_id, array_task_id, array_max_running, array_pending};
  }
};

// A job-list reply ({"ok", "error", "now", "cluster_name", "jobs": [...]}) read into rows.
struct JobList {
  bool ok = false;
  std::string error;
  int64_t now = 0;
  std::string cluster_name;
  std::vector<JobRow> jobs;
};

// Reads `text`; false when it is not a well-formed json document (keys the rows do not hold
// are skipped, whatever their values).
bool read_job_list(std::string_view text, JobList& out);

std::string job_state_long(const JobRow& job);
std::string job_state_short(const JobRow& job);
bool job_active(const JobRow& job);
int job_node_count(const JobRow& job);
int job_cpu_count(const JobRow& job);

}  // namespace drover::cli
