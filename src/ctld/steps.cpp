// srun's steps: created inside a running allocation, laid out on its nodes, signed for the
// agents, ended by srun; and the end of allocations that have no batch shell.
#include <sys/wait.h>

#include "core/hostlist.hpp"
#include "core/job_env.hpp"
#include "ctld/confine.hpp"
#include "ctld/state_machine.hpp"
#include "ctld/step_layout.hpp"
#include "net/auth.hpp"
#include "net/keys.hpp"
#include "proto/json.hpp"

namespace drover::ctld {

namespace {
constexpr int64_t kCredentialLifetime = 600;  // seconds srun has to reach the agents
}

core::Job* StateMachine::caller_job(uint64_t id, const Caller& who, json& error) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    error = error_reply(proto::Errno::kInvalidJobId);
    return nullptr;
  }
  if (!may_act_on(who, it->second)) {
    error = error_reply(proto::Errno::kAccessDenied);
    return nullptr;
  }
  return &it->second;
}

json StateMachine::step_create(const proto::StepCreateRequest& req, const Caller& who, int64_t now,
                               Effects& fx) {
  json error;
  core::Job* job = caller_job(req.job_id, who, error);
  if (!job) return error;
  if (job->state == core::JobState::Pending) return error_reply(proto::Errno::kJobPending);
  if (job->state != core::JobState::Running || job->completing)
    return error_reply(proto::Errno::kAlreadyDone);

  StepRequest sr;
  sr.ntasks = req.ntasks.value_or(0);
  sr.nodes_min = req.nodes_min.value_or(0);
  sr.nodes_max = req.nodes_max.value_or(0);
  sr.cpus_per_task = std::max(1, req.cpus_per_task.value_or(1));
  sr.ntasks_per_node = req.ntasks_per_node.value_or(0);
  sr.nodelist = req.nodelist.value_or("");
  sr.exclude = req.exclude.value_or("");
  sr.overlap = req.overlap.value_or(false);
  sr.cyclic = req.distribution.value_or("block") == "cyclic";
  sr.mem_mb = req.mem_mb.value_or(0);
  sr.exact = req.exact.value_or(false) || req.cpus_per_task.has_value();
  sr.overcommit = req.overcommit.value_or(false);
  StepLayout layout = layout_step(job->alloc, job->steps, sr);
  if (!layout.error.empty()) {
    // The layout's refusals are Slurm's texts: their number is looked up.
    json r = error_reply(proto::Error::from_message(layout.error));
    r["busy"] = layout.busy;
    r["plain"] = layout.plain;
    return r;
  }
  // Every node must have an agent that srun can reach.
  json nodes = json::array();
  json cred_nodes = json::object();
  for (size_t k = 0; k < layout.alloc.size(); ++k) {
    const core::NodeAlloc& a = layout.alloc[k];
    const core::Node* node = find_node(a.node);
    if (!node || node->launch_addr.empty()) {
      json r = error_reply(proto::Errno::kNodesBusy);  // not reachable yet: retry
      r["busy"] = true;
      return r;
    }
    nodes.push_back({{"name", a.node},
                     {"addr", node->launch_addr},
                     {"tasks", layout.tasks[k]},
                     {"cpus", a.cpus},
                     {"cpu_ids", a.cpu_ids},
                     {"gpu_ids", a.gpu_ids}});
    cred_nodes[a.node] = {
        {"tasks", layout.tasks[k]}, {"cpu_ids", a.cpu_ids}, {"gpu_ids", a.gpu_ids}};
    // A job that asked for memory is limited there to what it holds (the agent's job cgroup).
    const core::JobSpec& js = job->spec;
    if (js.mem_per_node_mb >= 0 || js.mem_per_cpu_mb >= 0 || js.mem_per_gpu_mb >= 0)
      for (const auto& held : job->alloc)
        if (held.node == a.node) cred_nodes[a.node]["job_mem_mb"] = held.mem_mb;
    // The job's cgroups there are confined to what the job holds (the step's CPUs).
    for (const auto& held : job->alloc)
      if (held.node == a.node) {
        core::NodeAlloc mine = held;
        mine.cpu_ids = a.cpu_ids;
        if (auto c = node_confine(config_, mine, node))
          cred_nodes[a.node]["confine"] = c->to_json();
        // A step that asked for memory (srun --mem) is limited to it within the job.
        mine.mem_mb = a.mem_mb;
        if (a.mem_mb > 0)
          if (auto c = node_confine(config_, mine, node); c && (c->mem_hard > 0 || c->memsw > 0))
            cred_nodes[a.node]["step_confine"] = c->to_json();
      }
  }

  core::Step step;
  step.id = job->next_step_id++;
  step.name = req.name.value_or("");
  step.start_time = now;
  step.ntasks = layout.ntasks;
  step.cpus_per_task = sr.cpus_per_task;
  step.overlap = sr.overlap;
  step.distribution = sr.cyclic ? "cyclic" : "block";
  step.alloc = layout.alloc;
  step.command = req.command.value_or("");
  step.srun_host = req.srun_host.value_or("");
  step.srun_pid = req.srun_pid.value_or(0);
  step.time_limit_min = req.time_limit_min.value_or(-1);
  job->steps.push_back(step);
  fx.job_changed(job->id);

  // The credential the agents check: who runs what where, signed (Ed25519) with the
  // controller's key, which agents can check but not use. srun passes it on verbatim; its link
  // to each node is authenticated with that node's step key (net/keys.hpp), which the node
  // derives from its own key and srun gets here.
  const json cred = {
      {"job_id", job->id},     {"step_id", step.id},
      {"run", job->launches},  {"uid", job->uid},
      {"gid", job->gid},       {"user", job->user},
      {"ntasks", step.ntasks}, {"nodelist", core::compress_hostlist(step.node_names())},
      {"nodes", cred_nodes},   {"expires", now + kCredentialLifetime}};
  const std::string cred_text = cred.dump();
  const std::string sig = net::step_sign(cluster_key_, "step-cred|" + cred_text);
  json step_keys = json::object();
  for (const auto& name : step.node_names()) step_keys[name] = step_key(name, sig);

  std::vector<int> tasks_per_node;
  for (const auto& a : layout.alloc) tasks_per_node.push_back(a.tasks);
  return {{"ok", true},
          {"job_id", job->id},
          {"step_id", step.id},
          {"ntasks", step.ntasks},
          {"nodelist", core::compress_hostlist(step.node_names())},
          {"tasks_per_node", core::compress_counts(tasks_per_node)},
          {"nodes", nodes},
          {"cred", cred_text},
          {"sig", sig},
          {"step_keys", std::move(step_keys)},
          {"job_env", allocation_env(*job)},
          {"time_limit_min", job->time_limit_min},
          {"kill_wait", config_.kill_wait_s},
          {"start_time", job->start_time}};
}

std::map<std::string, std::string> StateMachine::allocation_env(const core::Job& job) const {
  auto env =
      core::batch_environment(job, config_.cluster_name, {config_.control_host, config_.port});
  if (!config_.source_path.empty()) env["SLURM_CONF"] = config_.source_path;
  // What belongs to the batch shell or to one task, not to the allocation.
  for (const char* k : {"ENVIRONMENT", "HOSTNAME", "SLURMD_NODENAME", "SLURM_GTIDS",
                        "SLURM_LOCALID", "SLURM_NODEID", "SLURM_PROCID", "SLURM_CPUS_ON_NODE",
                        "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN", "TMPDIR"})
    env.erase(k);
  for (const auto& [k, v] : job.spec.environment)
    if (env.count(k) && env[k] == v) env.erase(k);  // the holder has these already
  return env;
}

json StateMachine::allocation_info(const proto::AllocationInfoRequest& req, const Caller& who,
                                   int64_t now) {
  json error;
  core::Job* job = caller_job(req.job_id, who, error);
  if (!job) return error;
  json r = {{"ok", true},
            {"job_id", job->id},
            {"state", core::job_state_name(job->state)},
            {"reason", job->reason},
            {"completing", job->completing},
            {"now", now}};
  if (job->state == core::JobState::Running) {
    r["nodelist"] = core::compress_hostlist(job->node_names());
    r["job_env"] = allocation_env(*job);
  }
  return r;
}

std::string StateMachine::step_key(const std::string& node, const std::string& cred_sig) const {
  return net::step_key(net::node_key(cluster_key_, node), cred_sig);
}

namespace {
// How a step that ran to its end ended, as Slurm records it: a task killed by a signal makes it
// CANCELLED, a non-zero exit FAILED.
core::JobState step_end_state(const core::Step& s) {
  if (s.exit_signal != 0) return core::JobState::Cancelled;
  return s.exit_code == 0 ? core::JobState::Completed : core::JobState::Failed;
}
}  // namespace

json StateMachine::step_complete(const proto::StepCompleteRequest& req, const Caller& who,
                                 int64_t now, Effects& fx) {
  json error;
  core::Job* job = caller_job(req.job_id, who, error);
  if (!job) return error;
  const uint32_t step_id = req.step_id;
  step_nodes_ended_.erase({job->id, step_id});
  for (auto& s : job->steps) {
    if (s.id != step_id) continue;
    if (s.state == core::JobState::Running) {
      s.end_time = now;
      s.exit_code = req.exit_code.value_or(0);
      s.exit_signal = req.exit_signal.value_or(0);
      if (req.cancelled.value_or(false))
        s.state = core::JobState::Cancelled;
      else if (req.timeout.value_or(false))
        s.state = core::JobState::Timeout;
      else
        s.state = step_end_state(s);
      fx.job_changed(job->id);
    }
    return {{"ok", true}};
  }
  return error_reply(proto::Errno::kInvalidJobId);
}

json StateMachine::allocation_complete(const proto::AllocationCompleteRequest& req,
                                       const Caller& who, int64_t now, Effects& fx) {
  json error;
  core::Job* job = caller_job(req.job_id, who, error);
  if (!job) return error;
  if (!job->spec.interactive) return error_reply(proto::Errno::kError, "Job has a batch script");
  if (job->state == core::JobState::Pending) {
    job->cancelled_by = who.uid;
    end_job(*job, core::JobState::Cancelled, job->reason, now, false, fx);
    return {{"ok", true}};
  }
  if (job->state != core::JobState::Running) return {{"ok", true}};  // ended already
  const int status = req.status.value_or(0);
  finish_exit(*job, status, now, fx);
  send_terminate(*job, now, "", fx);  // anything its steps left behind
  return {{"ok", true}};
}

void StateMachine::agent_step_exited(const std::string& node, const proto::StepExited& msg,
                                     int64_t now, Effects& fx) {
  auto it = jobs_.find(msg.job_id);
  if (it == jobs_.end()) return;
  const uint32_t step_id = msg.step_id;
  for (auto& s : it->second.steps) {
    if (s.id != step_id || s.state != core::JobState::Running) continue;
    auto& ended = step_nodes_ended_[{it->first, step_id}];
    ended.insert(node);
    const int status = msg.status;
    if (WIFSIGNALED(status) && s.exit_signal == 0) s.exit_signal = WTERMSIG(status);
    if (WIFEXITED(status)) s.exit_code = std::max(s.exit_code, WEXITSTATUS(status));
    for (const auto& a : s.alloc)
      if (!ended.count(a.node)) return;
    s.end_time = now;
    s.state = step_end_state(s);
    step_nodes_ended_.erase({it->first, step_id});
    fx.job_changed(it->first);
    return;
  }
}

void StateMachine::step_time_limits(core::Job& job, int64_t now, Effects& fx) {
  for (auto& s : job.steps) {
    if (s.state != core::JobState::Running || s.time_limit_min < 0) continue;
    if (now < s.start_time + s.time_limit_min * 60) continue;
    s.state = core::JobState::Timeout;
    s.end_time = now;
    step_nodes_ended_.erase({job.id, s.id});
    fx.job_changed(job.id);
    for (const auto& a : s.alloc)
      fx.order(a.node, proto::StepSignal{
                           job.id, s.id, SIGTERM, true, true, config_.kill_wait_s,
                           "CANCELLED AT " + core::format_timestamp(now) + " DUE TO TIME LIMIT"});
  }
}

void StateMachine::signal_steps(const core::Job& job, int sig, Effects& fx) const {
  for (const auto& s : job.steps) {
    if (s.state != core::JobState::Running) continue;
    for (const auto& a : s.alloc)
      fx.order(a.node, proto::StepSignal{job.id, s.id, sig, false, false, config_.kill_wait_s, ""});
  }
}

void StateMachine::end_steps(core::Job& job, core::JobState state, int64_t now) {
  for (auto& s : job.steps) {
    if (s.state != core::JobState::Running) continue;
    step_nodes_ended_.erase({job.id, s.id});
    s.state =
        state == core::JobState::Timeout ? core::JobState::Timeout : core::JobState::Cancelled;
    s.end_time = now;
  }
}

}  // namespace drover::ctld
