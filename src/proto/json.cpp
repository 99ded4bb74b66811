#include "proto/json.hpp"

#include "proto/json_text.hpp"

namespace drover::core {

// Fields are listed once per type; `get` tolerates missing keys so older journals load.
// The job spec's small fields; the script and environment (kilobytes) are handled apart so
// that queries can leave them out.
#define DROVER_FIELDS_JOBSPEC_SMALL(X)                                                          \
  X(name)                                                                                       \
  X(partitions)                                                                                 \
  X(ntasks)                                                                                     \
  X(ntasks_set)                                                                                 \
  X(nodes_min)                                                                                  \
  X(nodes_max) X(nodes_set) X(cpus_per_task) X(cpus_per_task_set) X(ntasks_per_node)            \
      X(mem_per_node_mb) X(mem_per_cpu_mb) X(time_limit_min) X(exclusive) X(workdir) X(std_out) \
          X(std_err) X(std_in) X(argv) X(submit_host) X(submit_sid) X(command) X(comment)       \
              X(min_cpus) X(tmp_disk_mb) X(account) X(qos) X(array) X(dependency) X(begin_time) \
                  X(deadline) X(hold) X(nice) X(requeue) X(kill_on_invalid_dep) X(signal)       \
                      X(nodelist) X(exclude) X(constraint) X(gres) X(gpus) X(gpus_per_node)     \
                          X(gpus_per_task) X(reservation) X(licenses) X(mail_type) X(mail_user) \
                              X(open_mode) X(submit_dir) X(submit_nice) X(get_user_env)         \
                                  X(mem_per_gpu_mb) X(default_name) X(interactive) X(no_kill)
#define DROVER_FIELDS_JOBSPEC(X) DROVER_FIELDS_JOBSPEC_SMALL(X) X(script) X(environment)

#define DROVER_FIELDS_ALLOC(X) X(node) X(cpus) X(mem_mb) X(tasks) X(gres) X(cpu_ids) X(gpu_ids)

#define DROVER_FIELDS_STEP(X)                                                                 \
  X(id)                                                                                       \
  X(name)                                                                                     \
  X(start_time) X(end_time) X(exit_code) X(exit_signal) X(ntasks) X(cpus_per_task) X(overlap) \
      X(distribution) X(alloc) X(command) X(srun_host) X(srun_pid) X(time_limit_min)          \
          X(cancelled_by)

#define DROVER_FIELDS_JOB_NOSPEC(X)                                                                \
  X(id)                                                                                            \
  X(uid)                                                                                           \
  X(gid)                                                                                           \
  X(user)                                                                                          \
  X(group)                                                                                         \
  X(partition) X(completing) X(reason) X(submit_time) X(eligible_time) X(start_time) X(end_time)   \
      X(last_sched_eval) X(time_limit_min) X(priority) X(exit_code) X(exit_signal) X(cancelled_by) \
          X(restarts) X(launches) X(alloc) X(batch_host) X(sched_nodes) X(payload_id)              \
              X(array_job_id) X(array_task_id) X(array_pending) X(array_max_running) X(held)       \
                  X(dependency) X(nice) X(warning_sent) X(steps) X(next_step_id)                   \
                      X(batch_max_rss_kb) X(system_comment)
#define DROVER_FIELDS_JOB(X) DROVER_FIELDS_JOB_NOSPEC(X) X(spec)

#define DROVER_FIELDS_NODE(X)                                                                     \
  X(name)                                                                                         \
  X(cpus)                                                                                         \
  X(sockets)                                                                                      \
  X(cores_per_socket)                                                                             \
  X(threads_per_core)                                                                             \
  X(real_memory_mb)                                                                               \
  X(gres) X(features) X(active_features) X(address) X(launch_addr) X(registered) X(down) X(drain) \
      X(not_responding) X(reason) X(reason_uid) X(reason_time) X(boot_time) X(agent_start_time)   \
          X(last_heartbeat) X(cpu_load) X(free_mem_mb) X(alloc_cpus) X(alloc_mem_mb)              \
              X(running_jobs) X(gres_used)

#define DROVER_PUT(f) j[#f] = v.f;
#define DROVER_GET(f) \
  if (auto it = j.find(#f); it != j.end()) it->get_to(v.f);

void to_json(nlohmann::json& j, const GresCount& v) {
  j = {{"name", v.name}, {"type", v.type}, {"count", v.count}};
}
void from_json(const nlohmann::json& j, GresCount& v) {
  v.name = j.value("name", "");
  v.type = j.value("type", "");
  v.count = j.value("count", int64_t{0});
}

void to_json(nlohmann::json& j, const IndexSet& v) { j = v.format_ranges(); }
void from_json(const nlohmann::json& j, IndexSet& v) { v = IndexSet::parse(j.get<std::string>()); }

#define DROVER_FIELDS_DEP_ENTRY(X) X(job_id) X(array_task) X(delay_min)
void to_json(nlohmann::json& j, const DepEntry& v) {
  DROVER_FIELDS_DEP_ENTRY(DROVER_PUT)
  j["type"] = static_cast<int>(v.type);
  j["state"] = static_cast<int>(v.state);
}
void from_json(const nlohmann::json& j, DepEntry& v) {
  DROVER_FIELDS_DEP_ENTRY(DROVER_GET)
  v.type = static_cast<DepType>(j.value("type", 0));
  v.state = static_cast<DepState>(j.value("state", 0));
}
void to_json(nlohmann::json& j, const Dependency& v) {
  j = {{"any", v.any}, {"entries", v.entries}};
}
void from_json(const nlohmann::json& j, Dependency& v) {
  v.any = j.value("any", false);
  if (auto it = j.find("entries"); it != j.end()) it->get_to(v.entries);
}

void to_json(nlohmann::json& j, const JobSpec& v) { DROVER_FIELDS_JOBSPEC(DROVER_PUT) }
void from_json(const nlohmann::json& j, JobSpec& v) { DROVER_FIELDS_JOBSPEC(DROVER_GET) }
void to_json(nlohmann::json& j, const NodeAlloc& v) { DROVER_FIELDS_ALLOC(DROVER_PUT) }
void from_json(const nlohmann::json& j, NodeAlloc& v) { DROVER_FIELDS_ALLOC(DROVER_GET) }

void to_json(nlohmann::json& j, const Step& v) {
  DROVER_FIELDS_STEP(DROVER_PUT)
  j["state"] = job_state_name(v.state);
}
void from_json(const nlohmann::json& j, Step& v) {
  DROVER_FIELDS_STEP(DROVER_GET)
  if (auto it = j.find("state"); it != j.end())
    v.state = parse_job_state(it->get<std::string>()).value_or(JobState::Running);
}

namespace {
void spec_summary_json(nlohmann::json& j, const JobSpec& v) {
  DROVER_FIELDS_JOBSPEC_SMALL(DROVER_PUT)
}
}  // namespace

void job_summary_json(nlohmann::json& j, const Job& v) {
  DROVER_FIELDS_JOB_NOSPEC(DROVER_PUT)
  spec_summary_json(j["spec"], v.spec);
  j["state"] = job_state_name(v.state);
}

#define DROVER_TEXT(f) w.put(#f, v.f);

namespace {
void spec_summary_text(std::string& out, const JobSpec& v, const std::vector<std::string>* only) {
  proto::JsonObjectText w(out, only);
  DROVER_FIELDS_JOBSPEC_SMALL(DROVER_TEXT)
}
}  // namespace
#define DROVER_TEXT_BUT_STEPS(f) \
  if constexpr (std::string_view(#f) != "steps") w.put(#f, v.f);

// clang-format off
void job_summary_text(proto::JsonObjectText& w, const Job& v,
                      const std::vector<std::string>* spec_only) {
  DROVER_FIELDS_JOB_NOSPEC(DROVER_TEXT_BUT_STEPS)
  spec_summary_text(w.key("spec"), v.spec, spec_only);
  w.put("state", job_state_name(v.state));
}
// clang-format on

void to_json(nlohmann::json& j, const Job& v) {
  DROVER_FIELDS_JOB(DROVER_PUT)
  j["state"] = job_state_name(v.state);
}
void from_json(const nlohmann::json& j, Job& v) {
  DROVER_FIELDS_JOB(DROVER_GET)
  if (auto it = j.find("state"); it != j.end())
    v.state = parse_job_state(it->get<std::string>()).value_or(JobState::Pending);
}

void to_json(nlohmann::json& j, const Node& v) { DROVER_FIELDS_NODE(DROVER_PUT) }
void from_json(const nlohmann::json& j, Node& v) { DROVER_FIELDS_NODE(DROVER_GET) }

}  // namespace drover::core
