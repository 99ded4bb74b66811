#include "ctld/acct_record.hpp"

#include "core/hostlist.hpp"
#include "core/memsize.hpp"

namespace drover::ctld {

std::string acct_tres(int cpus, int64_t mem_mb, int nodes, int64_t gpus) {
  std::string s = "billing=" + std::to_string(cpus) + ",cpu=" + std::to_string(cpus);
  if (gpus > 0) s += ",gres/gpu=" + std::to_string(gpus);
  if (mem_mb > 0) s += ",mem=" + core::format_mem_mb(mem_mb);
  s += ",node=" + std::to_string(nodes);
  return s;
}

namespace {

// States in which the controller, not the batch shell, ended the job.
bool ended_by_controller(core::JobState s) {
  using S = core::JobState;
  return s == S::Cancelled || s == S::Timeout || s == S::Preempted || s == S::Deadline ||
         s == S::NodeFail || s == S::BootFail;
}

// A step's TRES: the job's form without billing, which Slurm charges to the allocation (and
// its extern step) only.
std::string step_tres(int cpus, int64_t mem_mb, int nodes, int64_t gpus) {
  std::string s = acct_tres(cpus, mem_mb, nodes, gpus);
  return s.substr(s.find(',') + 1);
}

int64_t gpus_of(const std::vector<core::GresCount>& gres) {
  int64_t n = 0;
  for (const auto& g : gres)
    if (g.name == "gpu") n += g.count;
  return n;
}

}  // namespace

store::JobRecord acct_record(const core::Job& job) {
  store::JobRecord r;
  const core::JobSpec& spec = job.spec;
  r.job_id = job.id;
  r.array_job_id = job.array_job_id;
  r.array_task_id = job.array_job_id ? job.array_task_id : store::kAcctNoTask;
  r.name = spec.name;
  r.user = job.user;
  r.group = job.group;
  r.uid = job.uid;
  r.gid = job.gid;
  r.account = spec.account;
  r.qos = spec.qos;
  r.partition = job.partition;
  r.submit_time = job.submit_time;
  r.eligible_time = job.eligible_time;
  r.start_time = job.start_time;
  r.end_time = job.end_time;
  r.state = std::string(core::job_state_name(job.state));
  r.reason = job.reason;
  r.system_comment = job.system_comment;
  const bool by_controller = ended_by_controller(job.state);
  // A job that has not ended (say requeued, which keeps its last run's status for scontrol)
  // has no exit code in accounting yet.
  const bool own_exit = core::is_finished(job.state) && !by_controller;
  r.exit_code = own_exit ? job.exit_code : 0;
  r.exit_signal = own_exit ? job.exit_signal : 0;
  if (job.state == core::JobState::Cancelled && job.cancelled_by != 0xffffffff)
    r.cancelled_by = job.cancelled_by;
  r.req_cpus = std::max(1, spec.ntasks) * std::max(1, spec.cpus_per_task);
  r.req_nodes = std::max(1, spec.nodes_min);
  // A job that never started without a limit of its own has none resolved yet, as in Slurm.
  r.time_limit_min = job.start_time == core::kNoTime && spec.time_limit_min == core::kTimeNotSet
                         ? store::kAcctPartitionLimit
                         : job.time_limit_min;
  r.restarts = job.restarts;
  r.priority = job.priority;
  r.workdir = spec.workdir;

  const int alloc_cpus = job.alloc_cpus();
  const int64_t alloc_mem = job.alloc_mem_mb();
  int64_t alloc_gpus = 0;
  for (const auto& a : job.alloc) alloc_gpus += gpus_of(a.gres);
  int64_t req_mem = 0;
  if (spec.mem_per_node_mb > 0)
    req_mem = spec.mem_per_node_mb * r.req_nodes;
  else if (spec.mem_per_cpu_mb > 0)
    req_mem = spec.mem_per_cpu_mb * std::max(r.req_cpus, alloc_cpus);
  else
    req_mem = alloc_mem;  // the default the controller applied
  r.req_mem_mb = req_mem;
  r.req_mem_per_cpu = spec.mem_per_cpu_mb > 0;
  r.req_tres = acct_tres(r.req_cpus, req_mem, r.req_nodes, alloc_gpus);
  if (!job.alloc.empty()) {
    r.alloc_cpus = alloc_cpus;
    r.nnodes = static_cast<int>(job.alloc.size());
    r.nodelist = core::compress_hostlist(job.node_names());
    r.alloc_tres = acct_tres(alloc_cpus, alloc_mem, r.nnodes, alloc_gpus);
  } else {
    r.nnodes = r.req_nodes;
  }

  if (job.start_time != core::kNoTime && !job.alloc.empty() && !spec.interactive) {
    store::StepRecord b;
    b.name = "batch";
    b.job_name = "batch";
    b.ntasks = 1;
    b.start_time = job.start_time;
    b.end_time = core::is_finished(job.state) && !job.completing ? job.end_time : 0;
    b.nodelist = job.batch_host.empty() ? job.alloc.front().node : job.batch_host.str();
    b.nnodes = 1;
    int64_t mem = 0, gpus = 0;
    for (const auto& a : job.alloc)
      if (a.node == b.nodelist) {
        b.ncpus = a.cpus;
        mem = a.mem_mb;
        gpus = gpus_of(a.gres);
      }
    b.alloc_tres = step_tres(b.ncpus, mem, 1, gpus);
    if (!core::is_finished(job.state)) {
      b.state = "RUNNING";
    } else if (by_controller) {
      b.state = job.state == core::JobState::NodeFail || job.state == core::JobState::BootFail
                    ? std::string(core::job_state_name(job.state))
                    : "CANCELLED";
      b.exit_code = job.exit_code;
      b.exit_signal = job.exit_signal;
      if (b.end_time == 0 && !job.completing) b.end_time = job.end_time;
    } else {
      // A shell killed by a signal ends its step CANCELLED (the job is FAILED), as in Slurm;
      // an OOM kill (0:125) ends it OUT_OF_MEMORY.
      b.state = job.exit_signal != 0 && job.state != core::JobState::OutOfMemory
                    ? "CANCELLED"
                    : std::string(core::job_state_name(job.state));
      b.exit_code = job.exit_code;
      b.exit_signal = job.exit_signal;
    }
    if (core::is_finished(job.state) && job.completing) b.state = "RUNNING";
    b.max_rss_kb = job.batch_max_rss_kb;
    r.steps.push_back(std::move(b));
  }
  for (const core::Step& s : job.steps) r.steps.push_back(acct_step(job, s));
  return r;
}

store::StepRecord acct_step(const core::Job& job, const core::Step& s) {
  store::StepRecord r;
  r.name = std::to_string(s.id);
  r.job_name = s.name;
  r.state = std::string(core::job_state_name(s.state));
  r.start_time = s.start_time;
  r.end_time = s.state == core::JobState::Running ? 0 : s.end_time;
  r.exit_code = s.exit_code;
  r.exit_signal = s.exit_signal;
  r.nodelist = core::compress_hostlist(s.node_names());
  r.nnodes = static_cast<int>(s.alloc.size());
  r.ntasks = s.ntasks;
  int64_t mem = 0, gpus = 0;
  for (const auto& a : s.alloc) {
    r.ncpus += a.cpus;
    mem += step_mem_mb(job, a);
    gpus += gpus_of(a.gres);
  }
  r.alloc_tres = step_tres(r.ncpus, mem, r.nnodes, gpus);
  return r;
}

int64_t step_mem_mb(const core::Job& job, const core::NodeAlloc& step_node) {
  if (step_node.mem_mb > 0) return step_node.mem_mb;
  for (const auto& a : job.alloc)
    if (a.node == step_node.node) return a.mem_mb;
  return 0;
}

store::JobFilter acct_filter(const proto::QueryRequest& req, uint32_t caller_uid) {
  store::JobFilter f;
  f.job_ids = req.job_ids.value_or(std::vector<uint64_t>{});
  f.uids = req.uids.value_or(std::vector<uint32_t>{});
  if (!req.uids && !req.all_users.value_or(false)) f.uids.push_back(caller_uid);
  f.gids = req.gids.value_or(std::vector<uint32_t>{});
  f.states = req.states.value_or(std::vector<std::string>{});
  f.partitions = req.partitions.value_or(std::vector<std::string>{});
  f.accounts = req.accounts.value_or(std::vector<std::string>{});
  f.nodes = req.nodes.value_or(std::vector<std::string>{});
  if (req.start) f.window_start = *req.start;
  if (req.end) f.window_end = *req.end;
  f.include_ineligible = req.include_ineligible.value_or(false);
  return f;
}

}  // namespace drover::ctld
