#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/job.hpp"

namespace drover::core {

// Slurm's run-length form for per-node counts: {2,2,2,1} -> "2(x3),1".
std::string compress_counts(const std::vector<int>& counts);

// Where the controller is, for SLURM_WORKING_CLUSTER ("cluster:host:port:9728:109", as
// Slurm 22.05 writes it: protocol version 9728, select plugin id 109 = cons_tres). An empty
// host leaves the variable out.
struct BatchEnvSite {
  std::string controller_host;  // SlurmctldHost (the first), as sbatch's host sees it
  int controller_port = 0;      // SlurmctldPort
};

// SLURM_TASKS_PER_NODE's counts for the batch step, from the allocation as Slurm 22.05 lays
// the tasks out: with --ntasks-per-node, that many on every node; with -n, one per node and
// then node by node up to each node's CPUs / cpus-per-task (any rest, with overcommit, round
// robin); with neither, each node's CPUs / cpus-per-task (at least 1).
std::vector<int> batch_tasks_per_node(const Job& job);

// The environment of a batch job's shell, as real Slurm 22.05's batch shell has it: the
// exported submit environment (job.spec.environment, see export_env.hpp) with the batch
// variables set over it. Always: ENVIRONMENT=BATCH, HOSTNAME and SLURMD_NODENAME (the batch
// node), SLURM_CLUSTER_NAME, SLURM_CPUS_ON_NODE, SLURM_GTIDS=0, SLURM_JOB_ID/SLURM_JOBID,
// SLURM_JOB_CPUS_PER_NODE, SLURM_JOB_GID, SLURM_JOB_NAME, SLURM_JOB_NODELIST/SLURM_NODELIST,
// SLURM_JOB_NUM_NODES/SLURM_NNODES, SLURM_JOB_PARTITION, SLURM_JOB_UID, SLURM_JOB_USER,
// SLURM_LOCALID=0, SLURM_NODEID=0, SLURM_PROCID=0, SLURM_NODE_ALIASES=(null),
// SLURM_PRIO_PROCESS=0, SLURM_SUBMIT_DIR, SLURM_SUBMIT_HOST, SLURM_TASKS_PER_NODE,
// SLURM_TOPOLOGY_ADDR (the batch node), SLURM_TOPOLOGY_ADDR_PATTERN=node,
// SLURM_WORKING_CLUSTER (when site has a host), and TMPDIR=/tmp unless exported.
// Only when asked for: SLURM_NTASKS/SLURM_NPROCS (-n or --ntasks-per-node),
// SLURM_NTASKS_PER_NODE, SLURM_CPUS_PER_TASK (-c), SLURM_MEM_PER_NODE / SLURM_MEM_PER_CPU
// (non-zero --mem / --mem-per-cpu), SLURM_JOB_ACCOUNT (-A), SLURM_JOB_DEPENDENCY (-d, as
// written), SLURM_OPEN_MODE (a|t), SLURM_RESTART_COUNT (after a requeue), SLURM_ARRAY_*.
// Not set by 22.05 (without accounting): SLURM_JOB_QOS, SLURM_JOB_COMMENT, SLURM_JOB_GROUP,
// SLURM_JOB_START_TIME, SLURM_JOB_END_TIME. Exported SLURM_* variables that are not
// overwritten stay (a nested sbatch's SLURM_NTASKS leaks into the child, as in Slurm).
// Agent-side values (SLURM_TASK_PID, the login environment for SLURM_GET_USER_ENV=1) are
// added there.
std::map<std::string, std::string> batch_environment(const Job& job,
                                                     const std::string& cluster_name,
                                                     const BatchEnvSite& site = {});

}  // namespace drover::core
