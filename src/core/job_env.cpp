#include "core/job_env.hpp"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "core/array_spec.hpp"
#include "core/error.hpp"
#include "core/hostlist.hpp"

namespace drover::core {
namespace {

// Slurm 22.05's protocol version and the cons_tres select plugin's id, as they appear in
// SLURM_WORKING_CLUSTER.
constexpr int kProtocolVersion = 9728;
constexpr int kSelectPluginId = 109;

// SLURM_ARRAY_TASK_STEP: Slurm takes the number after the first ':' of the --array text
// ("0-4:2,5-9:3" -> 2, "1,4-10:2" -> 2), 1 when there is none ("1,3,5" -> 1).
uint32_t array_step(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos) return 1;
  uint64_t v = 0;
  bool any = false;
  for (size_t i = colon + 1; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    v = std::min<uint64_t>(v * 10 + static_cast<uint64_t>(text[i] - '0'), UINT32_MAX);
    any = true;
  }
  return any && v > 0 ? static_cast<uint32_t>(v) : 1;
}

}  // namespace

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

std::vector<int> batch_tasks_per_node(const Job& job) {
  const size_t n = job.alloc.size();
  const int cpt = std::max(1, job.spec.cpus_per_task);
  std::vector<int> tasks(n, 0);
  if (n == 0) return tasks;
  if (job.spec.ntasks_per_node > 0) {
    std::fill(tasks.begin(), tasks.end(), job.spec.ntasks_per_node);
    return tasks;
  }
  if (!job.spec.ntasks_set) {
    for (size_t i = 0; i < n; ++i) tasks[i] = std::max(1, job.alloc[i].cpus / cpt);
    return tasks;
  }
  int remaining = std::max(job.spec.ntasks, 0);
  for (size_t i = 0; i < n && remaining > 0; ++i, --remaining) tasks[i] = 1;
  for (size_t i = 0; i < n && remaining > 0; ++i) {
    int add = std::min(remaining, std::max(0, job.alloc[i].cpus / cpt - tasks[i]));
    tasks[i] += add;
    remaining -= add;
  }
  for (size_t i = 0; remaining > 0; i = (i + 1) % n, --remaining) tasks[i] += 1;
  return tasks;
}

std::map<std::string, std::string> batch_environment(const Job& job,
                                                     const std::string& cluster_name,
                                                     const BatchEnvSite& site) {
  std::map<std::string, std::string> env = job.spec.environment;
  auto set = [&env](const std::string& k, const std::string& v) { env[k] = v; };

  std::vector<int> cpus;
  int cpus_on_node = 0;
  for (const auto& a : job.alloc) {
    cpus.push_back(a.cpus);
    if (a.node == job.batch_host) cpus_on_node = a.cpus;
  }
  if (cpus_on_node == 0 && !cpus.empty()) cpus_on_node = cpus.front();
  const std::string nodelist = compress_hostlist(job.node_names());
  const std::string nnodes = std::to_string(job.alloc.size());
  const std::string id = std::to_string(job.id);

  set("ENVIRONMENT", "BATCH");
  set("HOSTNAME", job.batch_host);
  set("SLURMD_NODENAME", job.batch_host);
  set("SLURM_CLUSTER_NAME", cluster_name);
  set("SLURM_CPUS_ON_NODE", std::to_string(cpus_on_node));
  set("SLURM_GTIDS", "0");
  set("SLURM_JOB_ID", id);
  set("SLURM_JOBID", id);
  set("SLURM_JOB_CPUS_PER_NODE", compress_counts(cpus));
  set("SLURM_JOB_GID", std::to_string(job.gid));
  if (!job.spec.default_name) set("SLURM_JOB_NAME", job.spec.name);
  set("SLURM_JOB_NODELIST", nodelist);
  set("SLURM_NODELIST", nodelist);
  set("SLURM_JOB_NUM_NODES", nnodes);
  set("SLURM_NNODES", nnodes);
  set("SLURM_JOB_PARTITION", job.partition);
  set("SLURM_JOB_UID", std::to_string(job.uid));
  set("SLURM_JOB_USER", job.user);
  set("SLURM_LOCALID", "0");
  set("SLURM_NODEID", "0");
  set("SLURM_PROCID", "0");
  set("SLURM_NODE_ALIASES", "(null)");
  // GPUs on the batch node (the first of the allocation), as slurmd reports them: their
  // number and (as Slurm 22.05 without device cgroups) their indices on the node, so that a
  // batch script that uses them without srun sees only its own.
  if (!job.alloc.empty()) {
    int64_t gpus = 0;
    for (const auto& g : job.alloc.front().gres)
      if (g.name == "gpu") gpus += g.count;
    if (gpus > 0) set("SLURM_GPUS_ON_NODE", std::to_string(gpus));
    std::string ids;
    for (auto g : job.alloc.front().gpu_ids) ids += (ids.empty() ? "" : ",") + std::to_string(g);
    if (!ids.empty()) {
      set("CUDA_VISIBLE_DEVICES", ids);
      set("GPU_DEVICE_ORDINAL", ids);
      set("SLURM_JOB_GPUS", ids);
    }
  }
  // The GPU options as given (Slurm sets these only for --gpus* and --mem-per-gpu).
  if (!job.spec.gpus.empty()) set("SLURM_GPUS", job.spec.gpus);
  if (!job.spec.gpus_per_node.empty()) set("SLURM_GPUS_PER_NODE", job.spec.gpus_per_node);
  if (!job.spec.gpus_per_task.empty()) set("SLURM_GPUS_PER_TASK", job.spec.gpus_per_task);
  if (job.spec.mem_per_gpu_mb >= 0)
    set("SLURM_MEM_PER_GPU", std::to_string(job.spec.mem_per_gpu_mb));
  set("SLURM_PRIO_PROCESS", std::to_string(job.spec.submit_nice));
  set("SLURM_SUBMIT_DIR", job.spec.submit_dir.empty() ? job.spec.workdir : job.spec.submit_dir);
  set("SLURM_SUBMIT_HOST", job.spec.submit_host);
  set("SLURM_TASKS_PER_NODE", compress_counts(batch_tasks_per_node(job)));
  set("SLURM_TOPOLOGY_ADDR", job.batch_host);
  set("SLURM_TOPOLOGY_ADDR_PATTERN", "node");
  if (!site.controller_host.empty())
    set("SLURM_WORKING_CLUSTER",
        cluster_name + ":" + site.controller_host + ":" + std::to_string(site.controller_port) +
            ":" + std::to_string(kProtocolVersion) + ":" + std::to_string(kSelectPluginId));
  env.emplace("TMPDIR", "/tmp");

  // Set only when the option was given.
  if (job.spec.ntasks_set || job.spec.ntasks_per_node > 0) {
    const int ntasks = job.spec.ntasks_set
                           ? job.spec.ntasks
                           : job.spec.ntasks_per_node * static_cast<int>(job.alloc.size());
    set("SLURM_NTASKS", std::to_string(ntasks));
    set("SLURM_NPROCS", std::to_string(ntasks));
  }
  if (job.spec.ntasks_per_node > 0)
    set("SLURM_NTASKS_PER_NODE", std::to_string(job.spec.ntasks_per_node));
  // Without -c Slurm still rewrites an exported SLURM_CPUS_PER_TASK (nested sbatch) to the
  // job's value.
  if (job.spec.cpus_per_task_set || env.count("SLURM_CPUS_PER_TASK"))
    set("SLURM_CPUS_PER_TASK", std::to_string(job.spec.cpus_per_task));
  if (job.spec.mem_per_node_mb > 0)
    set("SLURM_MEM_PER_NODE", std::to_string(job.spec.mem_per_node_mb));
  if (job.spec.mem_per_cpu_mb > 0)
    set("SLURM_MEM_PER_CPU", std::to_string(job.spec.mem_per_cpu_mb));
  if (!job.spec.account.empty()) set("SLURM_JOB_ACCOUNT", job.spec.account);
  if (!job.spec.dependency.empty()) set("SLURM_JOB_DEPENDENCY", job.spec.dependency);
  if (job.spec.open_mode == "append") set("SLURM_OPEN_MODE", "a");
  if (job.spec.open_mode == "truncate") set("SLURM_OPEN_MODE", "t");
  if (job.restarts > 0) set("SLURM_RESTART_COUNT", std::to_string(job.restarts));

  if (job.array_job_id != 0 && job.array_task_id != kNoArrayTask) {
    set("SLURM_ARRAY_JOB_ID", std::to_string(job.array_job_id));
    set("SLURM_ARRAY_TASK_ID", std::to_string(job.array_task_id));
    try {
      const ArraySpec spec = parse_array_spec(job.spec.array, UINT32_MAX);
      if (!spec.tasks.empty()) {
        set("SLURM_ARRAY_TASK_COUNT", std::to_string(spec.tasks.size()));
        set("SLURM_ARRAY_TASK_MAX", std::to_string(spec.tasks.max()));
        set("SLURM_ARRAY_TASK_MIN", std::to_string(spec.tasks.min()));
        set("SLURM_ARRAY_TASK_STEP", std::to_string(array_step(job.spec.array)));
      }
    } catch (const ParseError&) {
      // The controller accepted the spec; a text it cannot re-read leaves these out.
    }
  }
  return env;
}

}  // namespace drover::core
