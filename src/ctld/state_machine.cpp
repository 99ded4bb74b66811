#include "ctld/state_machine.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <unordered_set>

#include "core/constraint.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/job_env.hpp"
#include "core/output_pattern.hpp"
#include "core/sbatch_options.hpp"
#include "core/text.hpp"
#include "core/version.hpp"
#include "ctld/acct_record.hpp"
#include "ctld/config_report.hpp"
#include "ctld/confine.hpp"
#include "proto/job_list.hpp"
#include "proto/json.hpp"
#include "proto/json_text.hpp"

namespace drover::ctld {

namespace {

// The reason of a job waiting for resources while nodes of its partition power up (Slurm has
// none: its jobs wait CONFIGURING on the nodes, where drover's wait pending for them).
const std::string kReasonNodesPoweringUp = "NodesPoweringUp";

// A job no node of the partition can ever hold, and which of its requests is why.
json unavailable(const std::string& detail) {
  return proto::ErrorReply{.error = proto::Error(proto::Errno::kRequestedNodeConfigUnavailable),
                           .detail = detail}
      .to_json();
}

std::string resolve_path(const std::string& path, const std::string& workdir) {
  if (path.empty() || path.front() == '/') return path;
  return workdir + "/" + path;
}

}  // namespace

StateMachine::StateMachine(Config config, std::unique_ptr<sched::Scheduler> scheduler)
    : config_(std::move(config)), scheduler_(std::move(scheduler)) {
  for (const auto& nc : config_.conf.nodes) nodes_.add(node_from_conf(nc));
  std::vector<Partition> parts;
  for (const auto& pc : config_.conf.partitions) parts.push_back(partition_from_conf(pc));
  partitions_ = PartitionTable(std::move(parts));
  if (config_.limits) {
    acct_.set_tree(config_.limits->fairshare_tree());
    core::AcctData data = core::acct_data_from_dump(config_.limits->dump());
    data.cluster = config_.cluster_name;
    acct_.load(std::move(data));
  }
}

Partition StateMachine::partition_from_conf(const core::PartitionConf& pc) const {
  Partition p;
  p.name = pc.name;
  p.is_default = pc.is_default;
  p.state = pc.state;
  // DRAIN still runs what is queued; DOWN and INACTIVE run nothing.
  if (pc.state == "DOWN") p.not_running_reason = "PartitionDown";
  if (pc.state == "INACTIVE") p.not_running_reason = "PartitionInactive";
  p.max_time_min = pc.max_time_min;
  p.default_time_min = pc.default_time_min;
  p.max_nodes = pc.max_nodes;
  if (auto it = pc.other.find("PreemptMode"); it != pc.other.end())
    p.preempt_mode = parse_preempt_mode(it->second, "partition " + pc.name);
  if (auto it = pc.other.find("GraceTime"); it != pc.other.end())
    p.grace_time_s = std::atoll(it->second.c_str());
  p.conf = pc;
  for (const auto& name : pc.nodes)
    if (const NodeId id = nodes_.find(name); id != kNoNode) p.nodes.push_back(id);
  return p;
}

void StateMachine::restore(uint64_t next_job_id, std::vector<core::Job> jobs, int64_t now) {
  start_time_ = now;
  jobs_.set_next_id(next_job_id);
  for (auto& n : nodes_) n.last_heartbeat = now;  // silence counts from the restart
  for (auto& job : jobs) {
    if (holds_resources(job)) {
      for (const auto& a : job.alloc) {
        if (core::Node* n = nodes_.get(a.node)) n->charge(a);
      }
    }
    if (job.priority != 0)
      lowest_priority_ = static_cast<uint32_t>(std::clamp<int64_t>(
          std::min<int64_t>(lowest_priority_, int64_t{job.priority} + job.nice), 1, 0xffff0000LL));
    jobs_.insert(std::move(job));
  }
}

void StateMachine::restore_submit_ids(const std::map<std::string, json>& records) {
  for (const auto& [key, r] : records)
    jobs_.submit_ids().put_journaled(key,
                                     {r.value("job_id", uint64_t{0}), r.value("at", int64_t{0})});
}

bool StateMachine::is_operator(const Caller& who) const {
  return who.uid == 0 || who.uid == config_.slurm_user_uid || who.uid == kK8sOperatorUid;
}

const Partition* StateMachine::find_partition(const std::string& name) const {
  return partitions_.find(name);
}

const core::Job* StateMachine::find_job(uint64_t id) const { return jobs_.get(id); }

std::vector<std::pair<std::string, const std::vector<NodeId>*>> StateMachine::partition_nodes()
    const {
  std::vector<std::pair<std::string, const std::vector<NodeId>*>> out;
  for (const auto& p : partitions_) out.emplace_back(p.name, &p.nodes);
  return out;
}

const core::Node* StateMachine::find_node(const std::string& name) const {
  return nodes_.get(name);
}

void StateMachine::add_running(sched::ClusterView& v) const {
  for (uint64_t id : jobs_.active())
    if (const core::Job* job = jobs_.get(id); job && holds_resources(*job))
      v.running.push_back(job);
}

sched::ClusterView StateMachine::view(bool with_running) const {
  sched::ClusterView v;
  v.nodes = nodes_.by_id();
  for (const auto& p : partitions_)
    v.partitions.push_back({p.name, p.nodes, p.not_running_reason, p.max_time_min, p.max_nodes,
                            p.conf.priority_tier, p.preempt_mode, p.grace_time_s});
  if (with_running) add_running(v);
  v.params = config_.sched_params;
  v.preemption = config_.preemption;
  v.limits = config_.limits.get();
  for (const auto& [name, r] : reservations_) {
    sched::ReservationView rv{r.name, r.start, r.end, {}, (r.flags & core::kResvFlex) != 0};
    for (const auto& n : r.nodes)
      if (const NodeId id = nodes_.find(n); id != kNoNode) rv.nodes.push_back(id);
    v.reservations.push_back(std::move(rv));
  }
  v.def_mem_per_cpu_mb = config_.def_mem_per_cpu_mb;
  v.def_mem_per_node_mb = config_.def_mem_per_node_mb;
  return v;
}

json StateMachine::submit(const proto::SubmitRequest& req, const Caller& who, int64_t now,
                          Effects& fx) {
  const bool test_only = req.test_only.value_or(false);
  // A retry of a submission already made (its reply was lost) gets the same job back.
  std::string request_id;
  if (req.request_id && !test_only) {
    request_id = *req.request_id;
    if (auto first = jobs_.submit_ids().find(who.uid, request_id))
      return proto::SubmitReply{.job_id = first->job_id, .retried = true}.to_json();
  }
  core::JobSpec spec = req.spec;
  if (spec.interactive)
    spec.script.clear();  // salloc / srun: an allocation, nothing to launch
  else if (spec.script.rfind("#!", 0) != 0)
    return error_reply(proto::Errno::kJobScriptMissing, "Batch script is empty or lacks #!");
  // Slurm's limit (and errno) for scripts; sbatch refuses a NUL byte itself, checked again here.
  if (static_cast<int64_t>(spec.script.size()) > config_.max_script_size)
    return error_reply(proto::Errno::kPathnameTooLong, kTooLong);
  if (spec.script.find('\0') != std::string::npos)
    return error_reply(proto::Errno::kError, "Batch script contains a NULL character");
  for (const core::IString* text : {&spec.name, &spec.comment, &spec.mail_user})
    if (text->size() > kMaxTextField) return error_reply(proto::Errno::kPathnameTooLong, kTooLong);
  if (spec.workdir.empty() || spec.workdir.front() != '/')
    return error_reply(proto::Errno::kError, "Invalid working directory");
  if (spec.ntasks < 1) return error_reply(proto::Errno::kError, "Invalid number of tasks");
  if (spec.cpus_per_task < 1) return error_reply(proto::Errno::kError, "Invalid --cpus-per-task");
  if (spec.nodes_min < 1 || (spec.nodes_max > 0 && spec.nodes_max < spec.nodes_min))
    return error_reply(proto::Errno::kInvalidNodeCount);
  if (spec.name.empty()) spec.name = "sbatch";

  const Partition* part = nullptr;
  if (spec.partitions.empty()) {
    part = partitions_.default_partition();
    if (part == nullptr) return error_reply(proto::Errno::kDefaultPartitionNotSet);
  } else {
    for (const auto& name : spec.partitions)
      if (find_partition(name) == nullptr) {
        return proto::ErrorReply{.error = proto::Error(proto::Errno::kInvalidPartitionName),
                                 .bad_partition = name}
            .to_json();
      }
    part = find_partition(spec.partitions.front());
  }
  if (part->conf.root_only && who.uid != 0) return error_reply(proto::Errno::kAccessDenied);

  if (spec.nice < 0 && !is_operator(who)) return error_reply(proto::Errno::kInvalidNice);
  int max_node_cpus = 0;  // the partition's biggest node
  for (NodeId idx : part->nodes) max_node_cpus = std::max(max_node_cpus, nodes_.get(idx)->cpus);
  // Slurm shows (and plans with) the fewest nodes the tasks can fit on.
  if (!spec.nodes_set) {
    const int per_node = std::max(1, std::max(1, max_node_cpus) / std::max(1, spec.cpus_per_task));
    spec.nodes_min = std::max(1, (spec.ntasks + per_node - 1) / per_node);
  }
  // GRES: names must be among GresTypes; sbatch reports these itself (no "submission failed").
  {
    auto gres_error = [](const std::string& first_line) {
      proto::ErrorReply r{.error = proto::Error(proto::Errno::kInvalidGres), .local = true};
      if (!first_line.empty()) r.detail = first_line;
      return r.to_json();
    };
    const bool any_gpu =
        !spec.gpus.empty() || !spec.gpus_per_node.empty() || !spec.gpus_per_task.empty();
    try {
      std::vector<core::GresCount> asked;
      if (!spec.gres.empty()) asked = core::parse_gres_list(spec.gres);
      for (const auto* g : {&spec.gpus, &spec.gpus_per_node, &spec.gpus_per_task})
        if (!g->empty()) asked.push_back(core::parse_gpu_count(*g));
      for (const auto& g : asked)
        if (std::find(config_.gres_types.begin(), config_.gres_types.end(), g.name) ==
            config_.gres_types.end())
          return gres_error("");
      bool gpu_asked = any_gpu;
      for (const auto& g : asked) gpu_asked = gpu_asked || g.name == "gpu";
      // Every node of a --gpus job takes one of them at least.
      if (!spec.gpus.empty() && spec.nodes_set &&
          core::parse_gpu_count(spec.gpus).count < spec.nodes_min)
        return gres_error("Failed to validate job spec, --gpus < -N");
      if (spec.mem_per_gpu_mb >= 0 && !gpu_asked)
        return gres_error("Requested mem_per_tres=gres:gpu:" + std::to_string(spec.mem_per_gpu_mb) +
                          " but did not request any GPU.");
    } catch (const core::ParseError&) {
      return gres_error("");
    }
    // --gpus=N over nodes of M GPUs: Slurm plans at least N/M nodes.
    if (!spec.gpus.empty() && !spec.nodes_set) {
      int64_t per_node_max = 0;
      for (NodeId idx : part->nodes) {
        int64_t n = 0;
        for (const auto& g : nodes_.get(idx)->gres_total)
          if (g.name == "gpu") n += g.count;
        per_node_max = std::max(per_node_max, n);
      }
      const int64_t want = core::parse_gpu_count(spec.gpus).count;
      if (per_node_max > 0)
        spec.nodes_min =
            std::max<int64_t>(spec.nodes_min, (want + per_node_max - 1) / per_node_max);
    }
  }
  // What could ever fit is judged on idle nodes: the running jobs (a walk over every job,
  // which made each submission slower as the queue grew) are added only for --test-only.
  sched::ClusterView v = view(false);
  if (part->state == "DRAIN" || part->state == "INACTIVE")
    return error_reply(proto::Errno::kPartitionNotAvail);
  if (auto e = part_limits_error(spec, *part)) return error_reply(*e);
  sched::PartitionView pv{part->name,         part->nodes,     part->not_running_reason,
                          part->max_time_min, part->max_nodes, part->conf.priority_tier};
  if (spec.tmp_disk_mb > 0) {
    // --tmp more than any of the partition's nodes has (TmpDisk, 0 unless configured).
    int64_t most = 0;
    for (NodeId i : part->nodes) most = std::max(most, nodes_.get(i)->tmp_disk_mb);
    if (spec.tmp_disk_mb > most)
      return unavailable("Temporary disk specification can not be satisfied");
  }
  // As Slurm: a memory request no node can satisfy is refused; other requests that cannot
  // fit today are accepted and wait (nodes may be added or enlarged).
  if (!sched::can_ever_fit(spec, pv, v)) {
    if (spec.cpus_per_task > max_node_cpus)
      return unavailable("CPU count per node can not be satisfied");
    core::JobSpec no_mem = spec;
    no_mem.mem_per_node_mb = 1;
    no_mem.mem_per_cpu_mb = -1;
    if (sched::can_ever_fit(no_mem, pv, v)) {
      proto::ErrorReply r{.error = proto::Error(proto::Errno::kRequestedNodeConfigUnavailable)};
      // Slurm explains only a per-node --mem; --mem-per-cpu gets the bare refusal.
      if (spec.mem_per_cpu_mb < 0) r.detail = "Memory specification can not be satisfied";
      return r.to_json();
    }
    // More GPUs (or other GRES) than the nodes have is refused too.
    if (spec.asks_for_gres()) {
      core::JobSpec no_gres = spec;
      no_gres.gres.clear();
      no_gres.gpus.clear();
      no_gres.gpus_per_node.clear();
      no_gres.gpus_per_task.clear();
      no_gres.mem_per_gpu_mb = -1;
      sched::PartitionView wide = pv;
      wide.max_nodes = -1;
      if (!sched::can_ever_fit(spec, wide, v) && sched::can_ever_fit(no_gres, pv, v))
        return error_reply(proto::Errno::kRequestedNodeConfigUnavailable);
    }
  }
  // Options the controller checks against its own state and configuration.
  core::ArraySpec array;
  if (!spec.array.empty()) {
    try {
      array = core::parse_array_spec(spec.array, config_.max_array_size);
    } catch (const core::ParseError& e) {
      return error_reply(proto::Error::from_message(e.what()));  // the parser's: Slurm's texts
    }
  }
  core::Dependency dependency;
  if (!spec.dependency.empty()) {
    // Unknown job ids are accepted, as Slurm 22.05 does (such an entry counts as met).
    try {
      dependency = core::parse_dependency(spec.dependency, config_.max_array_size);
    } catch (const core::ParseError& e) {
      return error_reply(proto::Error::from_message(e.what()));  // the parser's: Slurm's texts
    }
  }
  for (const auto* list : {&spec.nodelist, &spec.exclude}) {
    if (list->empty()) continue;
    try {
      for (const auto& name : core::expand_hostlist(*list))
        if (!nodes_.contains(name)) return error_reply(proto::Errno::kInvalidNodeName);
    } catch (const core::ParseError&) {
      return error_reply(proto::Errno::kInvalidNodeName);
    }
  }
  if (!spec.constraint.empty()) {
    try {
      core::Constraint c = core::Constraint::parse(spec.constraint);
      for (const auto& f : c.features()) {
        bool known = false;
        for (NodeId idx : part->nodes)
          for (const auto& nf : nodes_.get(idx)->features) known = known || nf == f;
        if (!known) return error_reply(proto::Errno::kInvalidFeature);
      }
    } catch (const core::ParseError&) {
      return error_reply(proto::Errno::kInvalidFeature);
    }
  }
  if (auto err = reservation_access(spec, who.user)) return error_reply(*err);
  // No licenses can exist yet, so any named one is invalid, as in Slurm.
  if (!spec.licenses.empty()) return error_reply(proto::Errno::kInvalidLicenses);
  if (spec.deadline != 0 && spec.deadline <= now)
    return error_reply(proto::Errno::kInvalidTimeLimit);
  if (spec.deadline != 0 && spec.begin_time != 0 && spec.deadline < spec.begin_time)
    return error_reply(proto::Errno::kError, "Incompatible begin and deadline time specification");

  if (std::string err =
          admit(spec, who, *part, array.tasks.empty() ? 1 : array.tasks.size(), test_only);
      !err.empty())
    return error_reply(proto::Error::from_message(err));  // the limits' refusals: Slurm's texts

  if (test_only) return test_only_plan(std::move(spec), *part, who, now, fx);

  core::Job job;
  job.id = jobs_.take_id();
  fx.journal(journal::NextJobId{});
  job.uid = who.uid;
  job.gid = who.gid;
  job.user = who.user;
  job.group = who.group;
  job.partition = part->name;
  job.submit_time = now;
  // Known once the job first may run (Slurm shows "Unknown" until then); --begin sets it.
  job.eligible_time = spec.begin_time;
  job.time_limit_min = spec.time_limit_min;
  if (job.time_limit_min == core::kTimeNotSet)
    job.time_limit_min = part->default_time_min >= 0 ? part->default_time_min : part->max_time_min;
  job.nice = spec.nice;
  job.held = spec.hold ? core::kHeldUser : 0;
  job.dependency = std::move(dependency);
  if (!array.tasks.empty()) {  // "--array=," names no task: an ordinary job, as in Slurm
    job.array_job_id = job.id;
    job.array_pending = std::move(array.tasks);
    job.array_max_running = array.max_running;
  }
  // The script and environment (kilobytes) go to the journal with this batch and stay out
  // of memory; the launch message gets them back from there.
  fx.journal(journal::Payload{job.id, json{{"script", std::move(spec.script)},
                                           {"environment", std::move(spec.environment)}}});
  spec.script.clear();
  spec.environment.clear();
  job.payload_id = job.id;
  job.spec = std::move(spec);
  // Every accepted job takes a step of the priority counter, held ones too (then 0).
  job.priority = initial_priority(job, now);
  if (job.held) job.priority = 0;
  const uint64_t id = jobs_.insert(std::move(job)).id;
  jobs_.note_new_pending(id);
  fx.job_changed(id);
  fx.notify(notice::Reschedule{});
  if (!request_id.empty()) {
    jobs_.submit_ids().put(who.uid, request_id, {id, now});
    fx.journal(journal::SubmitId{SubmitIds::journal_key(who.uid, request_id),
                                 {{"job_id", id}, {"at", now}}});
  }
  return proto::SubmitReply{.job_id = id}.to_json();
}

json StateMachine::cancel(const proto::CancelRequest& req, const Caller& who, int64_t now,
                          Effects& fx) {
  const int signal = req.signal.value_or(0);
  std::vector<Target> targets;
  if (req.jobs && !req.jobs->empty()) {
    targets = resolve_all(*req.jobs, false, fx);
  } else if (req.steps && !req.steps->empty()) {
    // Steps only.
  } else {
    // Filters only: every active job that matches all of them.
    Target all;
    for (auto& [id, job] : jobs_) {
      if (is_finished(job.state)) continue;
      if (req.uid && job.uid != *req.uid) continue;
      if (req.name && job.spec.name != *req.name) continue;
      if (req.partition && job.partition != *req.partition) continue;
      if (req.states) {
        bool match = false;
        for (const auto& st : *req.states)
          if (core::parse_job_state(st) == job.state) match = true;
        if (!match) continue;
      }
      all.jobs.push_back(&job);
    }
    targets.push_back(std::move(all));
  }
  std::vector<proto::JobError> errors;
  size_t matched = 0;
  // Steps ("36.0"): their tasks are stopped; the job goes on.
  for (const auto& ref : req.steps.value_or(std::vector<proto::StepRef>{})) {
    const std::string& text = ref.ref;
    auto it = jobs_.find(ref.job_id);
    core::Step* step = nullptr;
    if (it != jobs_.end())
      for (auto& st : it->second.steps)
        if (st.id == ref.step_id) step = &st;
    if (!step) {
      errors.push_back(job_error(text, proto::Errno::kInvalidJobId));
      continue;
    }
    ++matched;
    if (!may_act_on(who, it->second)) {
      errors.push_back(job_error(text, proto::Errno::kAccessDenied));
      continue;
    }
    if (step->state != core::JobState::Running) {
      errors.push_back(job_error(text, proto::Errno::kAlreadyDone));
      continue;
    }
    const bool kill = signal == 0 || signal == 9;
    if (kill) {
      step->state = core::JobState::Cancelled;
      step->cancelled_by = who.uid;
      step->end_time = now;
      fx.job_changed(it->first);
    }
    for (const auto& a : step->alloc)
      fx.order(a.node,
               proto::StepSignal{
                   .job_id = it->first,
                   .step_id = step->id,
                   .signal = kill ? SIGKILL : signal,
                   .terminate = kill,
                   .graceful = false,
                   .kill_wait = config_.kill_wait_s,
                   .step_notice = kill ? "CANCELLED AT " + core::format_timestamp(now) : ""});
  }
  for (auto& t : targets) {
    if (t.error) errors.push_back(job_error(t.ref, *t.error));
    if (t.remainder) {
      // Pending tasks cancelled alone simply leave the array (Slurm keeps no record of them);
      // the last one left takes the remainder record with it.
      core::Job& rem = *t.remainder;
      if (!may_act_on(who, rem)) {
        errors.push_back(job_error(t.ref, proto::Errno::kAccessDenied));
      } else if (signal == 0 || signal == 9) {
        for (const auto& r : t.remainder_tasks.ranges())
          for (uint64_t i = r.first; i <= r.last; i += r.step) {
            ++matched;
            if (rem.array_pending.size() == 1) {
              rem.array_task_id = static_cast<uint32_t>(i);
              rem.array_pending = {};
              rem.cancelled_by = who.uid;
              end_job(rem, core::JobState::Cancelled, rem.reason, now, false, fx);
            } else {
              rem.array_pending.erase(static_cast<uint32_t>(i));
            }
          }
        fx.job_changed(rem.id);
        acct_.forget_submit_usage();
      } else {
        errors.push_back(job_error(t.ref, proto::Errno::kJobPending));
      }
    }
    for (core::Job* jp : t.jobs) {
      core::Job& job = *jp;
      ++matched;
      const std::string ref = t.ref.empty() ? std::to_string(job.id) : t.ref;
      if (!may_act_on(who, job)) {
        errors.push_back(job_error(ref, proto::Errno::kAccessDenied));
        continue;
      }
      if (is_finished(job.state)) {
        // Cancelling a whole array quietly skips its finished tasks.
        if (t.jobs.size() == 1) errors.push_back(job_error(ref, proto::Errno::kAlreadyDone));
        continue;
      }
      if (signal != 0 && signal != 9) {
        if (job.state == core::JobState::Pending) {
          errors.push_back(job_error(ref, proto::Errno::kJobPending));
          continue;
        }
        // As Slurm's scancel: the job's steps by default, the batch shell alone with --batch,
        // the batch shell's processes and the steps with --full.
        const bool batch = req.batch.value_or(false), full = req.full.value_or(false);
        if ((batch || full) && !job.batch_host.empty() && !job.spec.interactive)
          fx.order(job.batch_host, proto::Signal{job.id, signal, batch && !full});
        if (!batch || full) signal_steps(job, signal, fx);
        continue;
      }
      job.cancelled_by = who.uid;
      bool running = job.state == core::JobState::Running;
      // A pending job keeps its pending reason, as in Slurm.
      end_job(job, core::JobState::Cancelled, running ? "None" : job.reason, now, running, fx);
      if (running) send_terminate(job, now, "", fx);
    }
  }
  return proto::JobsReply{.errors = std::move(errors), .matched = matched}.to_json();
}

void StateMachine::release(core::Job& job) {
  full_pass_needed_ = true;
  launched_to_.erase(job.id);
  for (const auto& a : job.alloc) {
    if (core::Node* n = nodes_.get(a.node)) n->discharge(a);
  }
}

void StateMachine::processes_gone(core::Job& job) {
  const bool held = holds_resources(job);
  jobs_.set_completing(job, false);
  if (held) release(job);
  if (job.state == core::JobState::Pending) {  // requeued: it waits for a new allocation
    job.alloc.clear();
    job.batch_host.clear();
  }
}

void StateMachine::end_job(core::Job& job, core::JobState state, const std::string& reason,
                           int64_t now, bool completing, Effects& fx) {
  bool held = holds_resources(job);
  if (held && job.state == core::JobState::Running) charge_usage(job, now, fx);
  acct_.forget_submit_usage();
  jobs_.set_state(job, state);
  job.reason = reason;
  job.end_time = now;
  // An allocation without a batch shell has no exit to wait for.
  jobs_.set_completing(job, completing && !job.spec.interactive);
  end_steps(job, state, now);
  if (held && !holds_resources(job)) release(job);
  scheduler_->plans().forget(job.id);  // it left the queue, if it was in it
  fx.job_changed(job.id);
  fx.notify(notice::Reschedule{});
}

std::string StateMachine::cancel_notice(const core::Job& job, int64_t now,
                                        const std::string& why) const {
  return "*** JOB " + std::to_string(job.id) + " ON " + job.batch_host + " CANCELLED AT " +
         core::format_timestamp(now) + why + " ***";
}

void StateMachine::send_terminate(const core::Job& job, int64_t now, const std::string& why,
                                  Effects& fx, int64_t kill_wait) {
  // The batch host ends the batch shell and its steps' tasks; the other nodes their tasks.
  for (const auto& a : job.alloc)
    fx.order(
        a.node,
        proto::Terminate{
            job.id, kill_wait < 0 ? config_.kill_wait_s : kill_wait,
            a.node == job.batch_host ? cancel_notice(job, now, why) : std::string(),
            // What each step's processes there tell their srun: "*** STEP N.S ON node ... ***".
            "CANCELLED AT " + core::format_timestamp(now) + why});
}

void StateMachine::finish_exit(core::Job& job, int status, int64_t now, Effects& fx,
                               int64_t oom_kills) {
  if (oom_kills > 0 && job.state == core::JobState::Running) {
    // The agent's cgroup saw an OOM kill: OUT_OF_MEMORY with Slurm's 0:125 (SIG_OOM).
    job.exit_code = 0;
    job.exit_signal = 125;
    end_job(job, core::JobState::OutOfMemory, "OutOfMemory", now, false, fx);
    return;
  }
  if (WIFEXITED(status)) {
    job.exit_code = WEXITSTATUS(status);
    job.exit_signal = 0;
  } else if (WIFSIGNALED(status)) {
    job.exit_code = 0;
    job.exit_signal = WTERMSIG(status);
  }
  if (job.state == core::JobState::Running) {
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    // Slurm 22.05 reports a batch shell killed by a signal as JobLaunchFailure.
    const char* reason = ok ? "None" : WIFSIGNALED(status) ? "JobLaunchFailure" : "NonZeroExitCode";
    end_job(job, ok ? core::JobState::Completed : core::JobState::Failed, reason, now, false, fx);
  } else {
    // Already cancelled or timed out: keep that state and its end time.
    processes_gone(job);
    fx.job_changed(job.id);
    fx.notify(notice::Reschedule{});
  }
}

json StateMachine::agent_register(const std::string& node_name, const proto::Register& msg,
                                  int64_t now, Effects& fx) {
  NodeId id = nodes_.find(node_name);
  if (id == kNoNode) {
    if (auto why = register_dynamic(node_name, msg, fx)) return error_reply(*why);
    id = nodes_.find(node_name);
  }
  core::Node& node = *nodes_.get(id);
  // A node created by scontrol State=FUTURE (or CLOUD: powered down) is in service once its
  // agent registers.
  nodes_.set_powering_up(id, false);
  if (nodes_.future(id)) {
    nodes_.set_future(id, false);
    fx.journal(journal::Node{node_name});
  }
  full_pass_needed_ = true;
  node.registered = true;
  node.not_responding = false;
  if (node.down && node.reason == "Not responding") {
    node.down = false;
    node.reason.clear();
  }
  node.agent_start_time = now;
  node.boot_time = msg.boot_time.value_or(now);
  node.last_heartbeat = now;
  node.address = msg.address;
  // Where srun reaches the agent: what it listens on, or (a wildcard) where it is seen from.
  node.launch_addr = msg.launch_addr;
  if (node.launch_addr.rfind("0.0.0.0:", 0) == 0) {
    const auto colon = node.address.rfind(':');
    node.launch_addr = node.address.substr(0, colon) + node.launch_addr.substr(7);
  }
  node.cpu_load = msg.cpu_load.value_or(-1.0);
  node.free_mem_mb = msg.free_mem.value_or(-1);
  const std::string& instance = msg.instance;
  agent_instance_[node_name] = instance;

  // What the agent runs and has finished, each with the run of the job it belongs to (an
  // entry without one is taken as the current run).
  std::map<uint64_t, std::optional<uint32_t>> agent_running;
  std::set<uint64_t> agent_finished;
  for (const auto& r : msg.running) agent_running[r.job_id] = r.run;
  for (const auto& f : msg.finished) {
    if (current_run(f.job_id, f.run)) agent_finished.insert(f.job_id);
    agent_exited(node_name, f, now, fx);
  }
  auto runs_current = [&](uint64_t id) {
    auto it = agent_running.find(id);
    if (it == agent_running.end()) return false;
    auto jt = jobs_.find(id);
    return !it->second || (jt != jobs_.end() && jt->second.launches == *it->second);
  };
  // Reconcile: jobs we believe run there but the agent does not know never started (the
  // launch was lost) or vanished with an agent restart: requeue them so they run once.
  // Such a job is charged to the node: a node holding nothing (a node joining) skips the
  // walk over every job.
  for (uint64_t id : jobs_.active_ids()) {
    if (node.running_jobs == 0) break;
    core::Job* found = jobs_.get(id);
    if (found == nullptr) continue;
    core::Job& job = *found;
    if (job.batch_host != node_name || !holds_resources(job) || job.spec.interactive) continue;
    if (runs_current(id) || agent_finished.count(id)) continue;
    if (job.completing) {
      processes_gone(job);
    } else if (auto sent = launched_to_.find(id); !instance.empty() && sent != launched_to_.end() &&
                                                  sent->second == instance &&
                                                  !agent_running.count(id)) {
      // This agent process was sent the launch, perhaps after it wrote this registration (a
      // connection that dropped with the launch on its way, or one that crossed it): sent
      // again, the launch runs the job if it never arrived, and is ignored (or answered with
      // how the run ended) if it did: launches are idempotent per run.
      proto::Launch again = launch_message(job);
      again.resent = true;
      fx.order(node_name, again);
      continue;
    } else if (!requeue_allowed(job) && !agent_running.count(id)) {
      // Its processes died with an earlier agent process (or were never started): a job that
      // may not run twice ends NODE_FAIL, as Slurm ends a job missing from its node.
      fx.notify(notice::Warning{"job " + std::to_string(id) + ": its agent on " + node_name +
                                " does not know launch " + std::to_string(job.launches) +
                                "; NODE_FAIL (no requeue)"});
      end_job(job, core::JobState::NodeFail, "NodeDown", now, false, fx);
    } else {
      fx.notify(notice::Warning{"job " + std::to_string(id) + ": its agent on " + node_name +
                                " does not know launch " + std::to_string(job.launches) +
                                "; requeued"});
      release(job);
      jobs_.set_state(job, core::JobState::Pending);
      job.alloc.clear();
      job.batch_host.clear();
      job.start_time = core::kNoTime;
      job.restarts += 1;
      job.reason = "None";
      if (agent_running.count(id)) {
        // It still runs an earlier run, which is stopped: the new run waits, as after a requeue.
        jobs_.set_eligible_time(job, now + config_.requeue_delay_s);
        job.reason = "BeginTime";
      }
    }
    fx.job_changed(id);
    fx.notify(notice::Reschedule{});
  }
  // Processes the agent runs that should not be running any more are killed.
  for (const auto& [id, run] : agent_running) {
    auto jt = jobs_.find(id);
    bool wanted = jt != jobs_.end() && jt->second.batch_host == node_name &&
                  jt->second.state == core::JobState::Running && runs_current(id);
    if (!wanted)
      fx.order(node_name, proto::Terminate{id, config_.kill_wait_s, std::nullopt, std::nullopt});
  }
  fx.notify(notice::Reschedule{});
  return {{"ok", true}};
}

void StateMachine::agent_heartbeat(const std::string& node_name, const proto::Heartbeat& msg,
                                   int64_t now) {
  core::Node* found = nodes_.get(node_name);
  if (found == nullptr) return;
  core::Node& node = *found;
  node.last_heartbeat = now;
  node.not_responding = false;
  node.cpu_load = msg.cpu_load.value_or(node.cpu_load);
  node.free_mem_mb = msg.free_mem.value_or(node.free_mem_mb);
}

void StateMachine::agent_disconnected(const std::string& node_name, int64_t /*now*/) {
  if (core::Node* n = nodes_.get(node_name)) n->not_responding = true;
  full_pass_needed_ = true;  // plans that counted on the node are made again
}

void StateMachine::agent_exited(const std::string& node, const proto::JobExited& msg, int64_t now,
                                Effects& fx) {
  // A copy: the caller may pass the job's own batch_host, which the exit clears (and an
  // interned text may go with it).
  const std::string node_name = node;
  const uint64_t id = msg.job_id;
  auto it = jobs_.find(id);
  // A report of an earlier run (the job was requeued since) ends nothing.
  if (it != jobs_.end() && it->second.batch_host == node_name && holds_resources(it->second) &&
      current_run(id, msg.run)) {
    if (msg.max_rss) it->second.batch_max_rss_kb = *msg.max_rss / 1024;
    finish_exit(it->second, msg.status, now, fx, msg.oom_kills);
  }
  // Acknowledged after the journal commit, so the agent forgets the exit only once it is durable.
  fx.order(node_name, proto::ExitAck{id, msg.run});
}

bool StateMachine::current_run(uint64_t id, std::optional<uint32_t> run) const {
  auto it = jobs_.find(id);
  return it != jobs_.end() && (!run || *run == it->second.launches);
}

void StateMachine::act_on_due(int64_t now, Effects& fx) {
  // A --deadline passed or an eligible time (--begin, a requeue's delay) reached: the job
  // table's time indexes name them, so neither waits for the next full pass nor needs a walk
  // of the queue. Each pass calls it first, so an eligible time a pass sets to `now` is not
  // indexed.
  const JobTable::Due due = jobs_.take_due(now);
  for (uint64_t id : due.expired)
    if (core::Job* job = jobs_.get(id);
        job && job->state == core::JobState::Pending && !job->completing)
      end_job(*job, core::JobState::Deadline, "DeadLine", now, false, fx);
  if (due.begun.empty()) return;
  const std::unordered_set<uint64_t> noted(jobs_.new_pending().begin(), jobs_.new_pending().end());
  for (uint64_t id : due.begun)
    if (!noted.count(id) && jobs_.contains(id)) jobs_.note_new_pending(id);
}

void StateMachine::tick(int64_t now, Effects& fx, bool full_pass) {
  // A periodic full pass keeps every pending reason and expected start current.
  if (full_pass) full_pass_needed_ = true;
  advance_reservations(now, fx);
  // Only running jobs have limits to reach (a copy of the index: ending a job changes it).
  for (uint64_t id : jobs_.active_ids()) {
    core::Job* found = jobs_.get(id);
    if (found == nullptr) continue;
    core::Job& job = *found;
    if (job.state == core::JobState::Running && !job.completing) step_time_limits(job, now, fx);
    if (job.state != core::JobState::Running || job.completing || job.time_limit_min < 0) continue;
    const int64_t end = job.start_time + job.time_limit_min * 60;
    if (now >= end) {
      end_job(job, core::JobState::Timeout, "TimeLimit", now, true, fx);
      send_terminate(job, now, " DUE TO TIME LIMIT", fx);
      continue;
    }
    // --signal: a warning signal some time before the limit. Without "B:" Slurm sends it to
    // the job's steps only, never the batch shell.
    if (!job.spec.signal.empty() && !job.warning_sent) {
      try {
        core::SignalSpec sig = core::parse_signal_spec(job.spec.signal);
        if (now >= end - sig.seconds) {
          job.warning_sent = true;
          fx.job_changed(id);
          if (sig.batch_only)
            fx.order(job.batch_host, proto::Signal{id, sig.signal, true});
          else
            signal_steps(job, sig.signal, fx);
        }
      } catch (const core::ParseError&) {
        job.warning_sent = true;
      }
    }
  }
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it) {
    core::Node& node = *it;
    // A FUTURE node has no agent yet: nothing to miss (Slurm does not ping it).
    if (nodes_.future(it.id())) continue;
    // Two heartbeats missed: not responding (as a failed ping in Slurm), no new work there.
    if (node.registered && !node.not_responding &&
        now - node.last_heartbeat > 2 * config_.heartbeat_interval_s()) {
      node.not_responding = true;
      full_pass_needed_ = true;
    }
    if (node.down || now - node.last_heartbeat <= config_.slurmd_timeout_s) continue;
    node.down = true;
    node.not_responding = true;
    node.reason = "Not responding";
    node.reason_time = now;
    fail_jobs_on(node, now, fx);
  }
  act_on_due(now, fx);
  std::set<std::string> forgotten;
  jobs_.forget_submit_ids(now, forgotten);
  for (const auto& key : forgotten) fx.journal(journal::SubmitIdGone{key});
  if (config_.min_job_age_s > 0) {
    // Only finished jobs go: the finished index, copied as erasing changes it.
    std::vector<uint64_t> old;
    for (uint64_t id : jobs_.finished())
      if (const core::Job* job = jobs_.get(id);
          job && !job->completing && job->end_time + config_.min_job_age_s <= now)
        old.push_back(id);
    for (uint64_t id : old) {
      fx.journal(journal::JobGone{id});
      const auto erased = jobs_.erase(jobs_.find(id));
      if (erased.unreferenced_payload != 0)
        fx.journal(journal::PayloadGone{erased.unreferenced_payload});
    }
  }
}

json StateMachine::test_only_plan(core::JobSpec spec, const Partition& part, const Caller& who,
                                  int64_t now, Effects& fx) {
  // The engine plans the job as the next pass would: the running jobs, the reservations and
  // every pending job that pass would offer it, with this one last in the queue. As Slurm,
  // the answer is for its first partition and ignores that partition's state and time limit
  // (a job is not refused for them, it waits), so the job goes to a copy of the partition
  // without them.
  sched::ClusterView v = view();
  static const std::string kTestPartition = "\x01test-only";
  sched::PartitionView tp{kTestPartition,         part.nodes, "", -1, part.max_nodes,
                          part.conf.priority_tier};
  v.partitions.push_back(tp);
  for (const auto& [id, other] : jobs_) {
    if (other.state != core::JobState::Pending || other.completing || other.held != 0 ||
        !other.dependency.empty() ||
        (other.eligible_time != core::kNoTime && other.eligible_time > now))
      continue;
    v.pending.push_back(&other);
    if (!other.array_pending.empty())
      v.start_limit[other.id] =
          static_cast<int>(std::min<uint64_t>(other.array_pending.size(), 1u << 16));
  }
  // Slurm uses up a job id for the answer.
  core::Job job;
  job.id = jobs_.take_id();
  fx.journal(journal::NextJobId{});
  job.uid = who.uid;
  job.gid = who.gid;
  job.user = who.user;
  job.group = who.group;
  job.partition = kTestPartition;
  job.submit_time = now;
  job.time_limit_min = spec.time_limit_min;
  if (job.time_limit_min == core::kTimeNotSet)
    job.time_limit_min = part.default_time_min >= 0 ? part.default_time_min : part.max_time_min;
  job.priority = 0;  // behind every job already queued
  const int64_t begin = spec.begin_time;
  spec.partitions.clear();
  job.spec = std::move(spec);
  v.pending.push_back(&job);
  // Reaches as far as it must: no window, budget or deadline cuts this job's plan short.
  v.params.bf_window_s = 0;
  v.params.bf_max_job_test = 0;
  v.params.bf_max_job_user = 0;
  v.params.work_budget = 0;
  // sched/builtin plans nothing ahead; the answer is then backfill's estimate for this job.
  if (v.params.policy == sched::Policy::Fifo) v.params.policy = sched::Policy::Easy;
  // The engine records the plans it makes: a question must not change them.
  sched::PlanMemory plans_before = scheduler_->plans();
  const sched::Decisions d = scheduler_->schedule(v, now);
  scheduler_->plans() = std::move(plans_before);

  int64_t start = core::kNoTime;
  std::vector<std::string> names;
  int cpus = 0;
  for (const auto& s : d.starts)
    if (s.job_id == job.id) {
      start = now;
      for (const auto& a : s.alloc) {
        names.push_back(a.node);
        cpus += a.cpus;
      }
    }
  for (const auto& p : d.planned)
    if (p.job_id == job.id && start == core::kNoTime) {
      start = p.start_time;
      names = p.nodes;
      for (const auto& share : p.shares)
        cpus += static_cast<int>(std::max<uint32_t>(1, share.tasks)) *
                std::max(1, job.spec.cpus_per_task);
    }
  if (start == core::kNoTime) {
    // Limits say why; anything else means it can never run on these nodes.
    for (const auto& r : d.reasons)
      if (r.job_id == job.id && (r.reason.rfind("QOS", 0) == 0 || r.reason.rfind("Assoc", 0) == 0))
        return error_reply(proto::Error::from_message(r.reason));
    return error_reply(proto::Errno::kRequestedNodeConfigUnavailable);
  }
  return proto::SubmitReply{.job_id = job.id,
                            .test_only = true,
                            .start = std::max(start, begin),
                            .cpus = cpus,
                            .nodes = core::compress_hostlist(names),
                            .partition = part.name}
      .to_json();
}

size_t StateMachine::planned_jobs() const { return scheduler_->plans().size(); }

void StateMachine::schedule(int64_t now, Effects& fx, std::function<bool()> out_of_time) {
  act_on_due(now, fx);
  sched::ClusterView v = view();
  v.out_of_time = std::move(out_of_time);
  last_pass_not_considered_ = 0;
  std::vector<core::Job*> candidates;
  if (full_pass_needed_) {
    std::vector<core::Job*> remainders;
    for (auto& [id, job] : jobs_)
      if (job.state == core::JobState::Pending && !job.array_pending.empty() &&
          !job.dependency.empty())
        remainders.push_back(&job);
    for (core::Job* r : remainders) split_correlated_tasks(*r, now, fx);
    for (auto& [id, job] : jobs_)
      if (job.state == core::JobState::Pending && !job.completing) candidates.push_back(&job);
  } else {
    // Only new (lowest priority) jobs: a FIFO pass behind the partitions already blocked
    // cannot start anything ahead of a planned job; the next full pass plans them.
    v.blocked_partitions = blocked_partitions_;
    v.params.policy = sched::Policy::Fifo;
    for (uint64_t id : jobs_.new_pending())
      if (auto it = jobs_.find(id); it != jobs_.end() &&
                                    it->second.state == core::JobState::Pending &&
                                    !it->second.completing)
        candidates.push_back(&it->second);
  }
  const bool full_pass = full_pass_needed_;
  full_pass_needed_ = false;
  v.whole_queue = full_pass;
  jobs_.clear_new_pending();
  if (full_pass) update_priorities(now);
  // Held, not yet eligible or dependent jobs are not offered to the engine at all: they do
  // not hold up the jobs behind them.
  std::set<std::pair<uint32_t, std::string>> singletons_seen;
  for (core::Job* job : candidates) {
    std::string why = eligibility(*job, now, fx, singletons_seen);
    if (job->state != core::JobState::Pending) continue;  // e.g. cancelled: dependency never met
    if (!why.empty()) {
      job->reason = why;
      continue;
    }
    if (job->eligible_time == core::kNoTime) {
      const Partition* p = find_partition(job->partition);
      if (p && p->not_running_reason.empty()) {
        jobs_.set_eligible_time(*job, now);
        fx.job_changed(job->id);
      }
    }
    v.pending.push_back(job);
    if (!job->array_pending.empty()) {
      int limit = static_cast<int>(std::min<uint64_t>(job->array_pending.size(), 1u << 16));
      if (job->array_max_running > 0)
        limit = std::min(limit, static_cast<int>(job->array_max_running) -
                                    running_array_tasks(job->array_job_id));
      v.start_limit[job->id] = limit;
    }
  }
  if (v.pending.empty()) return;
  sched::Decisions d = scheduler_->schedule(v, now);
  blocked_partitions_ = std::move(d.blocked_partitions);
  last_pass_not_considered_ = d.not_considered.size();
  // Jobs a pass cut short by bf_max_time did not reach keep the plan an earlier pass made.
  const std::unordered_set<uint64_t> not_considered(d.not_considered.begin(),
                                                    d.not_considered.end());
  for (const auto& start : d.starts) {
    auto it = jobs_.find(start.job_id);
    if (it == jobs_.end()) continue;
    core::Job* job = &it->second;
    if (!job->array_pending.empty()) job = &split_array_task(*job, job->array_pending.min(), fx);
    start_job(*job, start, now, fx);
  }
  for (const auto& p : d.preempted) preempt_job(p, now, fx);
  // Partitions with powered-down nodes being started: their jobs waiting for resources say so.
  std::set<std::string> powering_up;
  for (auto it = nodes_.begin(); it != nodes_.end(); ++it)
    if (nodes_.powering_up(it.id()) && !it->registered)
      for (const auto& name : partitions_.holding(it.id())) powering_up.insert(name);
  for (const auto& r : d.reasons) {
    auto it = jobs_.find(r.job_id);
    if (it == jobs_.end() || it->second.state != core::JobState::Pending) continue;
    const std::string& reason = r.reason == "Resources" && powering_up.count(it->second.partition)
                                    ? kReasonNodesPoweringUp
                                    : r.reason;
    if (it->second.reason != reason) plan_changed_.push_back(r.job_id);
    it->second.reason = reason;  // recomputed every pass: not worth a journal write
    it->second.last_sched_eval = now;
    // A full pass plans every job it can: the others have no expected start (any more; the
    // engine forgot their plans too).
    if (full_pass && !not_considered.count(r.job_id)) {
      if (it->second.start_time != core::kNoTime || !it->second.sched_nodes.empty())
        plan_changed_.push_back(r.job_id);
      it->second.start_time = core::kNoTime;
      it->second.sched_nodes.clear();
    }
  }
  // Expected starts, as Slurm's backfill shows them: StartTime and SchedNodes of a pending
  // job (squeue --start). Like reasons, recomputed each full pass and not journaled; the
  // placement itself stays in the engine's plan memory.
  for (const auto& plan : d.planned) {
    auto it = jobs_.find(plan.job_id);
    if (it == jobs_.end() || it->second.state != core::JobState::Pending) continue;
    std::string planned_nodes = core::compress_hostlist(plan.nodes);
    if (it->second.start_time != plan.start_time || it->second.sched_nodes.str() != planned_nodes)
      plan_changed_.push_back(plan.job_id);
    it->second.start_time = plan.start_time;
    it->second.sched_nodes = std::move(planned_nodes);
  }
}

void StateMachine::start_job(core::Job& job, const sched::Start& start, int64_t now, Effects& fx) {
  jobs_.set_state(job, core::JobState::Running);
  job.reason = "None";
  job.partition = start.partition;
  job.start_time = now;
  job.sched_nodes.clear();
  scheduler_->plans().forget(job.id);  // it left the queue
  job.last_sched_eval = now;
  job.end_time = core::kNoTime;
  job.launches += 1;
  job.alloc = start.alloc;
  job.batch_host = job.alloc.front().node;
  for (const auto& a : job.alloc) {
    nodes_.get(a.node)->charge(a);
  }
  job.steps.clear();
  job.next_step_id = 0;
  fx.job_changed(job.id);
  if (!job.spec.interactive) {
    fx.order(job.batch_host, launch_message(job));
    if (auto it = agent_instance_.find(job.batch_host); it != agent_instance_.end())
      launched_to_[job.id] = it->second;
  }
}

namespace {
core::PatternContext pattern_context(const core::Job& job) {
  core::PatternContext ctx;
  ctx.job_id = job.id;
  ctx.array_job_id = job.array_job_id != 0 ? job.array_job_id : job.id;
  if (job.array_job_id != 0 && job.array_task_id != core::kNoArrayTask)
    ctx.array_task_id = job.array_task_id;
  ctx.job_name = job.spec.name;
  ctx.user = job.user;
  ctx.first_node = job.batch_host;
  return ctx;
}

struct StdPaths {
  std::string out, err, in;
};

StdPaths std_paths(const core::Job& job, bool for_display = false) {
  core::PatternContext ctx = pattern_context(job);
  auto expand = [&](const std::string& p) {
    return for_display ? core::expand_output_pattern_for_display(p, ctx)
                       : core::expand_output_pattern(p, ctx);
  };
  std::string out_pattern = job.spec.std_out.empty()
                                ? core::default_output_pattern(job.array_job_id != 0)
                                : job.spec.std_out.str();
  std::string err_pattern = job.spec.std_err.empty() ? out_pattern : job.spec.std_err.str();
  std::string in_pattern = job.spec.std_in.empty() ? "/dev/null" : job.spec.std_in;
  return {resolve_path(expand(out_pattern), job.spec.workdir),
          resolve_path(expand(err_pattern), job.spec.workdir),
          resolve_path(expand(in_pattern), job.spec.workdir)};
}

// The memory the job holds on its batch node when it asked for memory (--mem, --mem-per-cpu,
// --mem-per-gpu), which the agent makes its limit there; 0: no limit.
int64_t launch_mem_mb(const core::Job& job) {
  const core::JobSpec& s = job.spec;
  if (s.mem_per_node_mb < 0 && s.mem_per_cpu_mb < 0 && s.mem_per_gpu_mb < 0) return 0;
  for (const auto& a : job.alloc)
    if (a.node == job.batch_host) return a.mem_mb;
  return 0;
}
}  // namespace

std::string job_output_path(const core::Job& job, bool stderr_stream) {
  const StdPaths paths = std_paths(job);
  return stderr_stream ? paths.err : paths.out;
}

proto::Launch StateMachine::launch_message(const core::Job& job) const {
  StdPaths paths = std_paths(job);
  auto env =
      core::batch_environment(job, config_.cluster_name, {config_.control_host, config_.port});
  // As slurmd does: commands run inside the job find the cluster through SLURM_CONF.
  if (!config_.source_path.empty()) env["SLURM_CONF"] = config_.source_path;
  proto::Launch l;
  l.job_id = job.id;
  l.run = job.launches;
  l.uid = job.uid;
  l.gid = job.gid;
  l.user = job.user;
  l.script = job.spec.script;
  // The server fills in the script and the submitted environment (under what this adds).
  l.payload_id = job.payload_id;
  l.argv = job.spec.argv;
  l.env = std::move(env);
  l.get_user_env = job.spec.get_user_env;
  l.workdir = job.spec.workdir;
  // A requeued job appends to what its earlier runs wrote, as Slurm does.
  l.open_mode = job.restarts > 0 && job.spec.open_mode.empty() ? "append" : job.spec.open_mode;
  l.std_out = paths.out;
  l.std_err = paths.err;
  l.std_in = paths.in;
  // What it holds on the batch node is its memory limit there, when it asked for memory.
  l.mem_mb = launch_mem_mb(job);
  for (const auto& a : job.alloc)
    if (a.node == job.batch_host) l.confine = node_confine(config_, a, find_node(a.node));
  return l;
}

json StateMachine::job_view(const core::Job& job, int64_t now, bool detail) const {
  json j;
  core::job_summary_json(j, job);
  job_view_extras(job, now, detail, [&](std::string_view key, auto&& value) {
    j[std::string(key)] = std::forward<decltype(value)>(value);
  });
  return j;
}

namespace {
// job_view_extras' writer for a job written as text: only the keys asked for are computed.
struct TextPut {
  proto::JsonObjectText& w;
  template <class T>
  void operator()(std::string_view key, const T& value) const {
    w.put(key, value);
  }
  bool wants(std::string_view key) const { return w.wants(key); }
};
template <class Put>
bool wants(const Put& put, std::string_view key) {
  if constexpr (requires { put.wants(key); })
    return put.wants(key);
  else
    return true;
}
}  // namespace

void StateMachine::job_view_text(std::string& out, const core::Job& job, int64_t now, bool detail,
                                 const KeyFilter& only) const {
  proto::JsonObjectText w(out, only.keys ? &*only.keys : nullptr);
  core::job_summary_text(w, job, only.spec_keys ? &*only.spec_keys : nullptr);
  job_view_extras(job, now, detail, TextPut{w});
}

// What a job's view adds to its own fields (job_view and job_view_text write the same).
template <class Put>
void StateMachine::job_view_extras(const core::Job& job, int64_t now, bool detail,
                                   Put&& put) const {
  auto want = [&](std::string_view key) { return wants(put, key); };
  if (detail) {
    StdPaths paths = std_paths(job, true);
    put("std_out_path", paths.out);
    put("std_err_path", paths.err);
    put("std_in_path", paths.in);
  }
  int64_t run = 0;
  if (job.start_time != core::kNoTime)
    run = (job.end_time != core::kNoTime ? job.end_time : now) - job.start_time;
  put("run_time", std::max<int64_t>(run, 0));
  if (want("nodelist")) put("nodelist", core::compress_hostlist(job.node_names()));
  // Slurm's DerivedExitCode: the largest wait status among the job's srun steps.
  int derived = 0;
  for (const auto& s : job.steps)
    derived = std::max(derived, (s.exit_code << 8) | (s.exit_signal & 0x7f));
  put("derived_exit_code", derived >> 8);
  put("derived_exit_signal", derived & 0x7f);
  if (want("dependency_text"))
    put("dependency_text", core::format_dependency(
                               job.dependency, [this](uint64_t id) { return jobs_.is_array(id); }));
  if (want("requeue_effective")) put("requeue_effective", requeue_allowed(job) ? 1 : 0);
  put("alloc_node", "localhost");  // how Slurm names a client on this host (loopback)
  if (job.alloc.empty() && want("default_mem_mb")) {
    // What a pending job without a memory request will get: the defaults, else whole nodes.
    int64_t per_node = config_.def_mem_per_node_mb;
    if (config_.def_mem_per_cpu_mb > 0)
      per_node = config_.def_mem_per_cpu_mb * job.spec.cpus_per_task *
                 std::max(1, job.spec.ntasks / std::max(1, job.spec.nodes_min));
    if (per_node <= 0)
      if (const Partition* p = find_partition(job.partition))
        for (NodeId idx : p->nodes) per_node = std::max(per_node, nodes_.get(idx)->real_memory_mb);
    put("default_mem_mb", per_node * job.spec.nodes_min);
  }
  // Running srun steps, as squeue -s and scontrol show step list them (ended ones are sacct's).
  if (!want("steps")) return;
  json steps = json::array();
  for (const auto& s : job.steps) {
    if (s.state != core::JobState::Running) continue;
    int cpus = 0;
    int64_t mem = 0, gpus = 0;
    for (const auto& a : s.alloc) {
      cpus += a.cpus;
      mem += step_mem_mb(job, a);
      for (const auto& g : a.gres) gpus += g.name == "gpu" ? g.count : 0;
    }
    steps.push_back({{"id", s.id},
                     {"name", s.name},
                     {"state", core::job_state_name(s.state)},
                     {"start_time", s.start_time},
                     {"time_limit_min", s.time_limit_min},
                     {"nodelist", core::compress_hostlist(s.node_names())},
                     {"nnodes", s.alloc.size()},
                     {"ntasks", s.ntasks},
                     {"cpus", cpus},
                     {"mem_mb", mem},
                     {"gpus", gpus},
                     {"distribution", s.distribution},
                     {"srun_host", s.srun_host},
                     {"srun_pid", s.srun_pid},
                     {"command", s.command}});
  }
  put("steps", std::move(steps));
}

json StateMachine::node_view(const core::Node& node) const {
  json j = node;
  j["state_long"] = node.state_long(true);
  j["state_short"] = node.state_short();
  j["tmp_disk_mb"] = node.tmp_disk_mb;
  // What slurm.conf says of the node (the controller's node table follows its order).
  const NodeId self = nodes_.find(node.name);
  const auto& confs = config_.conf.nodes;
  if (self != kNoNode && static_cast<size_t>(self) < confs.size() &&
      confs[static_cast<size_t>(self)].name == node.name) {
    const core::NodeConf& nc = confs[static_cast<size_t>(self)];
    j["hostname"] = nc.node_hostname;
    j["weight"] = nc.weight;
    j["port"] = nc.port > 0 ? nc.port : config_.conf.get_int("SlurmdPort", 6818);
  }
  // The agent's release, known once it has registered (Slurm's slurmd version).
  j["version"] = node.registered ? std::string(core::kSlurmVersion) : std::string();
  json parts = json::array();
  for (const auto& name : partitions_.holding(self)) parts.push_back(name);
  j["partitions"] = parts;
  if (nodes_.dynamic(self)) j["dynamic"] = true;
  if (nodes_.cloud(self) && !node.registered) {
    // Slurm's power saving: powered down ("~") until its start is asked for, then powering
    // up ("#") until its agent registers.
    const bool up = nodes_.powering_up(self);
    const std::string base = node.down ? "down" : node.drain ? "drain" : "idle";
    j["state_short"] = base + (up ? "#" : "~");
    j["state_long"] = core::to_upper(base == "drain" ? "idle+drain" : base) + "+CLOUD+" +
                      (up ? "POWERING_UP" : "POWERED_DOWN");
    j["powered_down"] = !up;
    j["powering_up"] = up;
  } else if (nodes_.future(self)) {
    j["state_long"] = "FUTURE";
    j["state_short"] = "futr";
    j["future"] = true;
  }
  return j;
}

json StateMachine::partition_view(const Partition& p) const {
  std::vector<std::string> names;
  int cpus = 0;
  int64_t mem = 0;
  for (NodeId id : p.nodes) {
    const core::Node& n = *nodes_.get(id);
    names.push_back(n.name);
    cpus += n.cpus;
    mem += n.real_memory_mb;
  }
  const auto& c = p.conf;
  // Settings the controller keeps as written; ALL (or nothing) means anyone or anything.
  auto setting = [&](const char* key) {
    auto it = c.other.find(key);
    return it == c.other.end() || core::to_upper(it->second) == "ALL" ? std::string() : it->second;
  };
  json allow_groups = json::array();
  for (const auto& g : core::split_list(setting("AllowGroups"), ',')) allow_groups.push_back(g);
  const std::string max_cpus_text = setting("MaxCPUsPerNode");
  const int64_t max_cpus = max_cpus_text.empty() || core::to_upper(max_cpus_text) == "UNLIMITED"
                               ? -1
                               : std::atoll(max_cpus_text.c_str());
  return {{"name", p.name},
          {"nodes", names},
          {"nodelist", core::compress_hostlist(names)},
          {"is_default", p.is_default},
          {"state", p.state},
          {"max_time_min", p.max_time_min},
          {"default_time_min", p.default_time_min},
          {"max_nodes", c.max_nodes},
          {"min_nodes", c.min_nodes},
          {"priority_tier", c.priority_tier},
          {"priority_job_factor", c.priority_job_factor},
          {"allow_accounts", c.allow_accounts},
          {"allow_qos", c.allow_qos},
          {"over_subscribe", c.over_subscribe},
          {"root_only", c.root_only},
          {"hidden", c.hidden},
          {"allow_groups", allow_groups},
          {"alloc_nodes", setting("AllocNodes")},
          {"max_cpus_per_node", max_cpus},
          {"preempt_mode", preempt_mode_name(p.preempt_mode.value_or(config_.preemption.mode))},
          // The cluster's DefMemPerCPU/DefMemPerNode (partitions have none of their own yet).
          {"def_mem_per_cpu_mb", config_.def_mem_per_cpu_mb},
          {"def_mem_per_node_mb", config_.def_mem_per_node_mb},
          {"total_cpus", cpus},
          {"total_mem_mb", mem},
          {"total_nodes", names.size()}};
}

std::string StateMachine::query_text(const proto::QueryRequest& req, int64_t now,
                                     const json& job_list_extras) const {
  const bool jobs_list = req.what == "jobs";
  if (!jobs_list || req.job_id) {
    json reply = query(req, now);
    if (jobs_list && reply.value("ok", false) && job_list_extras.is_object())
      reply.update(job_list_extras);
    return reply.dump();
  }
  const bool detail = req.detail.value_or(true);
  const bool active_only = req.active_only.value_or(false);
  // "keys" / "spec_keys": a client that reads only some fields of each job (squeue's common
  // formats) gets only those; "spec" and "id" are always there.
  KeyFilter only;
  auto wanted = [&](const std::optional<std::vector<std::string>>& given,
                    std::initializer_list<const char*> always) {
    std::optional<std::vector<std::string>> keys;
    if (given) {
      keys = *given;
      for (const char* k : always) keys->push_back(k);
      std::sort(keys->begin(), keys->end());
    }
    return keys;
  };
  only.keys = wanted(req.keys, {"id", "spec"});
  only.spec_keys = wanted(req.spec_keys, {});
  // "users", "partitions", "names", "accounts", "qos": only the jobs whose field is one of
  // these (squeue -u, -p, -n, -A, -q), so that `squeue -u` over a million jobs is answered with
  // that user's alone.
  const auto users = wanted(req.users, {}), partitions = wanted(req.partitions, {}),
             names = wanted(req.names, {}), accounts = wanted(req.accounts, {}),
             qos = wanted(req.qos, {});
  auto in = [](const std::optional<std::vector<std::string>>& set, std::string_view value) {
    return !set || std::binary_search(set->begin(), set->end(), value);
  };
  // query()'s reply as dump() writes it, but each job written as text directly (its keys
  // in their own order): building each job's json tree was most of the cost. Or the compact
  // form (proto/job_list.hpp) when the client asks for it.
  const bool rows = req.form && *req.form == proto::kJobRowsForm;
  std::string out = "{\"cluster_name\":" + json(config_.cluster_name).dump() +
                    ",\"control_host\":" + json(config_.control_host).dump();
  if (rows) {
    out += ",\"columns\":[";
    for (size_t i = 0; i < proto::kJobColumnNames.size(); ++i) {
      if (i) out += ',';
      proto::JsonObjectText::write(out, proto::kJobColumnNames[i]);
    }
    out += "],\"rows\":[";
  } else {
    out += ",\"jobs\":[";
  }
  bool first = true;
  for (const auto& [id, job] : jobs_) {
    if (active_only && core::is_finished(job.state) && !job.completing) continue;
    if (!in(users, job.user) || !in(partitions, job.partition) || !in(names, job.spec.name) ||
        !in(accounts, job.spec.account) || !in(qos, job.spec.qos))
      continue;
    if (!first) out += ',';
    const size_t before = out.size();
    if (rows)
      job_row_text(out, job, now);
    else
      job_view_text(out, job, now, detail, only);
    // Room for the rest at the first job's size: growing a reply of tens of MB by doubling
    // copied it several times over on the state thread. (Not for a narrowed list: few jobs.)
    const bool narrowed = users || partitions || names || accounts || qos;
    if (first && !narrowed)
      out.reserve(out.size() + (out.size() - before + 1) * (jobs_.size() + 1) * 5 / 4);
    first = false;
  }
  out += "]";
  // The extras' keys ("last_backfill", "last_update") sort between "jobs" and "now".
  if (job_list_extras.is_object())
    for (const auto& [key, value] : job_list_extras.items())
      out += "," + json(key).dump() + ":" + value.dump();
  out += ",\"now\":" + json(now).dump() + ",\"ok\":true}";
  return out;
}

json StateMachine::query(const proto::QueryRequest& req, int64_t now) const {
  const std::string& what = req.what;
  json reply = {{"ok", true},
                {"now", now},
                {"cluster_name", config_.cluster_name},
                {"control_host", config_.control_host}};
  if (what == "jobs") {
    const bool detail = req.detail.value_or(true);
    json jobs = json::array();
    if (req.job_id) {
      // A job, or every record of the array with that id.
      const uint64_t id = *req.job_id;
      if (const auto members = jobs_.array_records(id); !members.empty()) {
        for (uint64_t member : members)
          if (auto it = jobs_.find(member); it != jobs_.end())
            jobs.push_back(job_view(it->second, now, detail));
      } else if (auto it = jobs_.find(id); it != jobs_.end()) {
        jobs.push_back(job_view(it->second, now, detail));
      }
      if (jobs.empty()) return error_reply(proto::Errno::kInvalidJobId);
    } else {
      // squeue asks for active jobs only; skipping the rest here saves encoding them.
      const bool active_only = req.active_only.value_or(false);
      for (const auto& [id, job] : jobs_)
        if (!active_only || !core::is_finished(job.state) || job.completing)
          jobs.push_back(job_view(job, now, detail));
    }
    reply["jobs"] = std::move(jobs);
  } else if (what == "nodes") {
    json nodes = json::array();
    // FUTURE nodes only when asked for (scontrol -F), as Slurm lists them.
    const bool future = req.future.value_or(false);
    for (auto it = nodes_.begin(); it != nodes_.end(); ++it)
      if (future || !nodes_.future(it.id()) || nodes_.cloud(it.id()))
        nodes.push_back(node_view(*it));
    reply["nodes"] = std::move(nodes);
  } else if (what == "partitions") {
    json parts = json::array();
    for (const auto& p : partitions_) parts.push_back(partition_view(p));
    reply["partitions"] = std::move(parts);
  } else if (what == "priority_factors" || what == "shares") {
    reply.update(what == "shares" ? shares_report(req, now) : priority_factors_report(req, now));
  } else if (what == "reservations") {
    json list = json::array();
    for (const auto& [name, r] : reservations_) list.push_back(reservation_view(r, now));
    reply["reservations"] = std::move(list);
  } else if (what == "config") {
    const ConfigReport report = config_report(
        config_, {start_time_, jobs_.next_id(), std::max(nodes_.size(), max_node_count()),
                  std::string(core::kSlurmVersion)});
    reply["config"] = {{"main", report.main}, {"mpi", report.mpi}};
  } else if (what == "ping") {
    // slurm.conf's nodes (what `drover up` starts agents for and waits on); dynamic ones apart.
    int registered = 0, dynamic_registered = 0;
    for (auto it = nodes_.begin(); it != nodes_.end(); ++it)
      (nodes_.dynamic(it.id()) ? dynamic_registered : registered) +=
          it->registered && !it->down ? 1 : 0;
    reply["nodes_registered"] = registered;
    reply["nodes_total"] = nodes_.size() - nodes_.dynamic_count();
    reply["dynamic_nodes_registered"] = dynamic_registered;
    reply["dynamic_nodes_total"] = nodes_.dynamic_count();
  } else {
    return error_reply(proto::Errno::kError, "Unknown query");
  }
  return reply;
}

}  // namespace drover::ctld
