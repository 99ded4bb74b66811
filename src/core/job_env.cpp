#include "core/job_env.hpp"

#include "core/hostlist.hpp"

namespace drover::core {

std::string compress_counts(const std::vector<int>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t j = i;
    while (j < counts.size() && counts[j] == counts[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

std::map<std::string, std::string> batch_environment(const Job& job,
                                                     const std::string& cluster_name) {
  std::map<std::string, std::string> env = job.spec.environment;
  std::vector<int> cpus, tasks;
  for (const auto& a : job.alloc) {
    cpus.push_back(a.cpus);
    tasks.push_back(a.tasks);
  }
  const std::string nodelist = compress_hostlist(job.node_names());
  const std::string id = std::to_string(job.id);
  const int ntasks = job.spec.ntasks;
  auto set = [&env](const std::string& k, const std::string& v) { env[k] = v; };
  set("ENVIRONMENT", "BATCH");
  set("SLURM_JOB_ID", id);
  set("SLURM_JOBID", id);
  set("SLURM_JOB_NAME", job.spec.name);
  set("SLURM_JOB_NODELIST", nodelist);
  set("SLURM_NODELIST", nodelist);
  set("SLURM_JOB_NUM_NODES", std::to_string(job.alloc.size()));
  set("SLURM_NNODES", std::to_string(job.alloc.size()));
  set("SLURM_JOB_CPUS_PER_NODE", compress_counts(cpus));
  set("SLURM_JOB_PARTITION", job.partition);
  set("SLURM_JOB_USER", job.user);
  set("SLURM_JOB_UID", std::to_string(job.uid));
  set("SLURM_JOB_GID", std::to_string(job.gid));
  set("SLURM_CLUSTER_NAME", cluster_name);
  set("SLURM_SUBMIT_DIR", job.spec.workdir);
  set("SLURM_SUBMIT_HOST", job.spec.submit_host);
  set("SLURM_CPUS_ON_NODE", cpus.empty() ? "0" : std::to_string(cpus.front()));
  set("SLURM_NODEID", "0");
  set("SLURM_PROCID", "0");
  set("SLURM_LOCALID", "0");
  set("SLURM_GTIDS", "0");
  set("SLURM_PRIO_PROCESS", "0");
  set("SLURMD_NODENAME", job.batch_host);
  set("SLURM_TOPOLOGY_ADDR", job.batch_host);
  set("SLURM_TOPOLOGY_ADDR_PATTERN", "node");
  set("SLURM_JOB_QOS", job.spec.qos.empty() ? "normal" : job.spec.qos);
  if (!job.spec.account.empty()) set("SLURM_JOB_ACCOUNT", job.spec.account);
  // Task counts are only exported when the user asked for tasks or nodes, as Slurm does.
  if (job.spec.ntasks_set || job.spec.nodes_set) {
    set("SLURM_NTASKS", std::to_string(ntasks));
    set("SLURM_NPROCS", std::to_string(ntasks));
    set("SLURM_TASKS_PER_NODE", compress_counts(tasks));
  } else {
    set("SLURM_TASKS_PER_NODE", compress_counts(tasks));
  }
  if (job.spec.cpus_per_task_set)
    set("SLURM_CPUS_PER_TASK", std::to_string(job.spec.cpus_per_task));
  if (job.spec.mem_per_node_mb >= 0)
    set("SLURM_MEM_PER_NODE", std::to_string(job.spec.mem_per_node_mb));
  if (job.spec.mem_per_cpu_mb >= 0)
    set("SLURM_MEM_PER_CPU", std::to_string(job.spec.mem_per_cpu_mb));
  if (job.spec.ntasks_per_node > 0)
    set("SLURM_NTASKS_PER_NODE", std::to_string(job.spec.ntasks_per_node));
  if (!job.spec.comment.empty()) set("SLURM_JOB_COMMENT", job.spec.comment);
  return env;
}

}  // namespace drover::core
