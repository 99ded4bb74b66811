#pragma once
// The job list's compact form: what squeue's common listings read of each job, one array of
// values per job under the column names given once, instead of an object with its keys per job
// (a third of the bytes, which both the controller's writing and squeue's reading scale with).
//
// Negotiated by the client: a jobs query with `"form": "rows"` (QueryRequest::form) is answered
//   {"cluster_name", "control_host", "columns": [names], "rows": [[values], ...],
//    "last_backfill", "last_update", "now", "ok": true}
// with "columns" before "rows", each row's values in the columns' order. A controller that does
// not know the member ignores it and answers with "jobs" (objects), which such a client still
// reads; a client that does not ask gets "jobs" as before. A query for one job (job_id) is always
// answered with "jobs". Values have the types and meaning of the job view's keys of the same
// name ("name", "account", "qos", "ntasks", "nodes_min", "cpus_per_task" are the spec's);
// "alloc_nodes" and "alloc_cpus" are the number of the job's allocation entries and the sum of
// their CPUs. A reader maps columns by name and skips those it does not know, so columns may be
// added.
#include <array>
#include <string_view>

namespace drover::proto {

inline constexpr std::string_view kJobRowsForm = "rows";

enum class JobColumn : unsigned char {
  Id,
  ArrayJobId,
  ArrayTaskId,
  ArrayMaxRunning,
  ArrayPending,
  State,
  Completing,
  Reason,
  Partition,
  User,
  Nodelist,
  SchedNodes,
  Priority,
  Uid,
  StartTime,
  RunTime,
  TimeLimitMin,
  AllocNodes,
  AllocCpus,
  Name,
  Account,
  Qos,
  Ntasks,
  NodesMin,
  CpusPerTask,
};

// The columns' names, in JobColumn's order (the order the controller writes them).
inline constexpr std::array<std::string_view, 25> kJobColumnNames = {"id",
                                                                     "array_job_id",
                                                                     "array_task_id",
                                                                     "array_max_running",
                                                                     "array_pending",
                                                                     "state",
                                                                     "completing",
                                                                     "reason",
                                                                     "partition",
                                                                     "user",
                                                                     "nodelist",
                                                                     "sched_nodes",
                                                                     "priority",
                                                                     "uid",
                                                                     "start_time",
                                                                     "run_time",
                                                                     "time_limit_min",
                                                                     "alloc_nodes",
                                                                     "alloc_cpus",
                                                                     "name",
                                                                     "account",
                                                                     "qos",
                                                                     "ntasks",
                                                                     "nodes_min",
                                                                     "cpus_per_task"};
static_assert(kJobColumnNames.size() == static_cast<size_t>(JobColumn::CpusPerTask) + 1);

}  // namespace drover::proto
