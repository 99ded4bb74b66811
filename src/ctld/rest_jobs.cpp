// /slurm/v0.0.44/jobs, job/{id} (GET, DELETE) and job/submit: v0.0.44's job_info built from the
// controller's job view, job_desc_msg turned into the JobSpec sbatch would send, and the
// controller's submit and cancel doing the rest (its rules, its permissions).
#include <algorithm>

#include "core/array_spec.hpp"
#include "core/job.hpp"
#include "core/sbatch_options.hpp"
#include "ctld/rest_handlers.hpp"
#include "ctld/rest_values.hpp"
#include "proto/json.hpp"

namespace drover::ctld::rest {
namespace {

// Slurm's error number for one of the controller's error texts (SLURM_ERROR when unknown).
int errno_for(const std::string& text) {
  using namespace rest_errno;
  for (int n :
       {kInvalidPartitionName, kAccessDenied, kJobScriptMissing, kUserIdMissing, kInvalidJobId,
        kInvalidNodeName, kAlreadyDone, kJobPending, kReservationInvalid, kEnvironmentMissing})
    if (rest_error_text(n) == text) return n;
  return kError;
}

int status_for(int number) {
  switch (number) {
    case rest_errno::kInvalidJobId:
      return 404;
    case rest_errno::kAccessDenied:
    case rest_errno::kUserIdMissing:
      return 403;
    default:
      return 400;
  }
}

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string out;
    for (const auto& v : *it) out += (out.empty() ? "" : ",") + v.get<std::string>();
    return out;
  }
  return it->dump();
}

int64_t num(const json& j, const char* key, int64_t dflt = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : dflt;
}

// The job id of a path ("12", "12_3"); 0 when it is not one.
uint64_t parse_job_id(const std::string& text, bool& array_task) {
  const auto end = text.find_first_not_of("0123456789");
  array_task = end != std::string::npos && text[end] == '_';
  if (end == 0 || (end != std::string::npos && !array_task)) return 0;
  try {
    return std::stoull(text.substr(0, end));
  } catch (const std::exception&) {
    return 0;
  }
}

json job_resources(const json& view) {
  const json& alloc = view.value("alloc", json::array());
  json nodes = json::array();
  int64_t cpus = 0;
  for (std::size_t i = 0; i < alloc.size(); ++i) {
    const json& a = alloc[i];
    cpus += num(a, "cpus");
    nodes.push_back({{"index", i},
                     {"name", str(a, "node")},
                     {"cpus", {{"count", num(a, "cpus")}, {"used", num(a, "cpus")}}},
                     {"memory", {{"used", 0}, {"allocated", num(a, "mem_mb")}}},
                     {"sockets", json::array()}});
  }
  return {{"select_type", json::array({"CPU", "MEMORY"})},
          {"nodes",
           {{"count", alloc.size()},
            {"select_type", json::array({"AVAILABLE"})},
            {"list", str(view, "nodelist")},
            {"whole", view["spec"].value("exclusive", false)},
            {"allocation", std::move(nodes)}}},
          {"cpus", cpus},
          {"threads_per_core", unset()}};
}

}  // namespace

json job_info(const json& view, const Config& config) {
  const json& spec = view.at("spec");
  const std::string state = str(view, "state");
  json job_state = json::array({state});
  if (view.value("completing", false)) job_state.push_back("COMPLETING");
  const bool pending = state == "PENDING";
  const bool finished = !pending && state != "RUNNING" && state != "SUSPENDED";
  const json& alloc = view.value("alloc", json::array());
  int64_t alloc_cpus = 0, alloc_mem = 0;
  for (const auto& a : alloc) {
    alloc_cpus += num(a, "cpus");
    alloc_mem += num(a, "mem_mb");
  }
  const int64_t tasks = num(spec, "ntasks", 1), cpt = num(spec, "cpus_per_task", 1);
  const int64_t cpus = alloc.empty() ? std::max(tasks * cpt, num(spec, "min_cpus")) : alloc_cpus;
  const int64_t node_count = alloc.empty() ? num(spec, "nodes_min", 1) : int64_t(alloc.size());
  const auto task_id = view.value("array_task_id", core::kNoArrayTask);
  const int64_t mem_node = num(spec, "mem_per_node_mb", -1),
                mem_cpu = num(spec, "mem_per_cpu_mb", -1);
  const std::string out_path = str(view, "std_out_path"), err_path = str(view, "std_err_path"),
                    in_path = str(view, "std_in_path");
  std::string tres_req = "cpu=" + std::to_string(cpus) + ",node=" + std::to_string(node_count);
  std::string tres_alloc;
  if (!alloc.empty())
    tres_alloc = "cpu=" + std::to_string(alloc_cpus) + ",mem=" + std::to_string(alloc_mem) +
                 "M,node=" + std::to_string(alloc.size()) +
                 ",billing=" + std::to_string(alloc_cpus);
  const int exit = static_cast<int>(num(view, "exit_code")),
            sig = static_cast<int>(num(view, "exit_signal"));
  const bool held = num(view, "held") != 0;
  json j = {
      {"account", str(spec, "account")},
      {"accrue_time", time_value(num(view, "eligible_time"))},
      {"admin_comment", ""},
      {"allocating_node", str(view, "alloc_node")},
      {"array_job_id", number(num(view, "array_job_id"))},
      {"array_task_id", task_id == core::kNoArrayTask ? unset() : number(int64_t{task_id})},
      {"array_max_tasks", number(num(view, "array_max_running"))},
      {"array_task_string", str(view, "array_pending")},
      {"association_id", 0},
      {"batch_features", ""},
      {"batch_flag", !spec.value("interactive", false)},
      {"batch_host", str(view, "batch_host")},
      {"flags", json::array()},
      {"burst_buffer", ""},
      {"burst_buffer_state", ""},
      {"cluster", config.cluster_name},
      {"cluster_features", ""},
      {"command", str(spec, "command")},
      {"comment", str(spec, "comment")},
      {"container", ""},
      {"container_id", ""},
      {"contiguous", false},
      {"core_spec", 0},
      {"thread_spec", 0},
      {"cores_per_socket", unset()},
      {"billable_tres", alloc.empty() ? unset() : number(double(alloc_cpus))},
      {"cpus_per_task", number(cpt)},
      {"cpu_frequency_minimum", unset()},
      {"cpu_frequency_maximum", unset()},
      {"cpu_frequency_governor", unset()},
      {"cpus_per_tres", ""},
      {"cron", ""},
      {"deadline", time_value(num(spec, "deadline"))},
      {"delay_boot", number(int64_t{0})},
      {"dependency", str(view, "dependency_text")},
      {"derived_exit_code", exit_code(exit, sig, !finished)},
      {"eligible_time", time_value(num(view, "eligible_time"))},
      {"end_time", time_value(num(view, "end_time"))},
      {"excluded_nodes", str(spec, "exclude")},
      {"exit_code", exit_code(exit, sig, !finished)},
      {"extra", ""},
      {"failed_node", ""},
      {"features", str(spec, "constraint")},
      {"federation_origin", ""},
      {"federation_siblings_active", ""},
      {"federation_siblings_viable", ""},
      {"gres_detail", json::array()},
      {"group_id", num(view, "gid")},
      {"group_name", str(view, "group")},
      {"het_job_id", number(int64_t{0})},
      {"het_job_id_set", ""},
      {"het_job_offset", number(int64_t{0})},
      {"job_id", num(view, "id")},
      {"job_resources", alloc.empty() ? json::object() : job_resources(view)},
      {"job_size_str", json::array()},
      {"job_state", std::move(job_state)},
      {"last_sched_evaluation", time_value(num(view, "last_sched_eval"))},
      {"licenses", str(spec, "licenses")},
      {"licenses_allocated", ""},
      {"mail_type", json::array()},
      {"mail_user", str(spec, "mail_user")},
      {"max_cpus", number(int64_t{0})},
      {"max_nodes", number(num(spec, "nodes_max"))},
      {"mcs_label", ""},
      {"memory_per_tres", ""},
      {"name", str(spec, "name")},
      {"network", ""},
      {"nodes", str(view, "nodelist")},
      {"nice", num(view, "nice")},
      {"tasks_per_core", unset()},
      {"tasks_per_tres", unset()},
      {"tasks_per_node",
       num(spec, "ntasks_per_node") > 0 ? number(num(spec, "ntasks_per_node")) : unset()},
      {"tasks_per_socket", unset()},
      {"tasks_per_board", unset()},
      {"cpus", number(cpus)},
      {"node_count", number(node_count)},
      {"tasks", number(tasks)},
      {"partition", str(view, "partition")},
      {"prefer", ""},
      {"memory_per_cpu", mem_cpu >= 0 ? number(mem_cpu) : unset()},
      {"memory_per_node", mem_node >= 0 ? number(mem_node) : unset()},
      {"minimum_cpus_per_node", number(std::max<int64_t>(num(spec, "min_cpus"), cpt))},
      {"minimum_tmp_disk_per_node", number(num(spec, "tmp_disk_mb"))},
      {"preempt_time", unset()},
      {"preemptable_time", unset()},
      {"pre_sus_time", number(int64_t{0})},
      {"hold", held},
      {"priority", number(num(view, "priority"))},
      {"priority_by_partition", json::array()},
      {"profile", json::array({"NOT_SET"})},
      {"qos", str(spec, "qos")},
      {"reboot", false},
      {"required_nodes", str(spec, "nodelist")},
      {"required_switches", 0},
      {"requeue", num(view, "requeue_effective") != 0},
      {"resize_time", unset()},
      {"restart_cnt", num(view, "restarts")},
      {"resv_name", str(spec, "reservation")},
      {"scheduled_nodes", str(view, "sched_nodes")},
      {"segment_size", 0},
      {"selinux_context", ""},
      {"shared", spec.value("exclusive", false) ? json::array({"none"}) : json::array()},
      {"sockets_per_board", 0},
      {"sockets_per_node", unset()},
      {"start_time", time_value(num(view, "start_time"))},
      {"state_description", ""},
      {"state_reason", str(view, "reason")},
      {"standard_input", in_path},
      {"standard_output", out_path},
      {"standard_error", err_path},
      {"stdin_expanded", in_path},
      {"stdout_expanded", out_path},
      {"stderr_expanded", err_path},
      {"submit_time", time_value(num(view, "submit_time"))},
      {"submit_line", ""},
      {"suspend_time", unset()},
      {"system_comment", ""},
      {"time_limit", limit(num(view, "time_limit_min", -1))},
      {"time_minimum", number(int64_t{0})},
      {"threads_per_core", unset()},
      {"tres_bind", ""},
      {"tres_freq", ""},
      {"tres_per_job", str(spec, "gpus").empty() ? "" : "gres/gpu:" + str(spec, "gpus")},
      {"tres_per_node", str(spec, "gres").empty() ? "" : "gres/" + str(spec, "gres")},
      {"tres_per_socket", ""},
      {"tres_per_task",
       str(spec, "gpus_per_task").empty() ? "" : "gres/gpu:" + str(spec, "gpus_per_task")},
      {"tres_req_str", tres_req},
      {"tres_alloc_str", tres_alloc},
      {"user_id", num(view, "uid")},
      {"user_name", str(view, "user")},
      {"maximum_switch_wait_time", 0},
      {"wckey", ""},
      {"current_working_directory", str(spec, "workdir")},
  };
  return j;
}

void get_jobs(Call& call) {
  const json reply = call.ctx.backend.query({{"what", "jobs"}, {"detail", true}});
  call.body["jobs"] = json::array();
  call.body["last_backfill"] = time_value(call.ctx.last_sched_pass);
  call.body["last_update"] = time_value(call.ctx.last_job_change);
  const std::string since = call.param("update_time");
  if (!since.empty()) {
    int64_t t = 0;
    try {
      t = std::stoll(since);
    } catch (const std::exception&) {
      return call.error(400, rest_errno::kRestInvalidQuery, "update_time is not a number: " + since,
                        "update_time");
    }
    if (t >= call.ctx.last_job_change) {
      call.warning("No job changes since update_time[" + since + "]", "get_jobs");
      return;
    }
  }
  for (const auto& v : reply.value("jobs", json::array()))
    call.body["jobs"].push_back(job_info(v, call.ctx.config));
}

void get_job(Call& call, const std::string& id) {
  bool array_task = false;
  const uint64_t job_id = parse_job_id(id, array_task);
  call.body["jobs"] = json::array();
  call.body["last_backfill"] = time_value(call.ctx.last_sched_pass);
  call.body["last_update"] = time_value(call.ctx.last_job_change);
  if (job_id == 0)
    return call.error(400, rest_errno::kInvalidJobId, "Invalid job id: " + id, "job_id");
  if (array_task)
    call.warning(
        "Job array Ids are not currently supported for job searches. Showing all jobs in "
        "array instead.",
        "get_job");
  const json reply =
      call.ctx.backend.query({{"what", "jobs"}, {"detail", true}, {"job_id", job_id}});
  if (!reply.value("ok", false))
    return call.error(404, rest_errno::kInvalidJobId, "Unable to query JobId=" + id, "get_job");
  for (const auto& v : reply.value("jobs", json::array()))
    call.body["jobs"].push_back(job_info(v, call.ctx.config));
}

void delete_job(Call& call, const std::string& id) {
  call.body["status"] = json::array();
  bool array_task = false;
  if (parse_job_id(id, array_task) == 0)
    return call.error(400, rest_errno::kInvalidJobId, "Invalid job id: " + id, "job_id");
  int signal = 9;  // SIGKILL: cancel, as slurmrestd's DELETE without ?signal=
  if (const std::string s = call.param("signal"); !s.empty()) {
    try {
      signal = core::parse_signal_spec(s).signal;
    } catch (const std::exception&) {
      return call.error(400, rest_errno::kRestInvalidQuery, "Unknown signal " + s, "signal");
    }
  }
  // Signals other than KILL go to the batch shell and the steps, as slurmrestd's KILL_FULL_JOB.
  json req = {{"jobs", json::array({id})}, {"signal", signal}, {"full", true}};
  const json reply = call.ctx.backend.cancel(req, call.ctx.who);
  for (const auto& e : reply.value("errors", json::array())) {
    const std::string text = e.value("error", "");
    const int code = errno_for(text);
    if (code == rest_errno::kAlreadyDone) {  // slurmrestd counts this as done
      call.warning("Job was already sent signal " + signal_name(signal), "delete_job");
      continue;
    }
    const std::string ref = e.value("job", id);
    bool task = false;
    const uint64_t failed_id = parse_job_id(ref, task);
    call.body["status"].push_back(
        {{"error", {{"string", rest_error_text(code)}, {"code", code}, {"message", text}}},
         {"step_id", ref},
         {"job_id", failed_id ? number(int64_t(failed_id)) : unset()},
         {"federation", {{"sibling", ""}}}});
    call.error(status_for(code), code, text, "slurm_kill_jobs()");
  }
}

std::string job_spec_from_desc(const json& desc, const std::string& script, json& out) {
  core::JobSpec spec;
  spec.script = script;
  spec.name = str(desc, "name");
  if (const std::string p = str(desc, "partition"); !p.empty()) {
    for (const auto& name : csv(p)) spec.partitions.push_back(name.get<std::string>());
  }
  spec.account = str(desc, "account");
  spec.qos = str(desc, "qos");
  spec.comment = str(desc, "comment");
  spec.dependency = str(desc, "dependency");
  spec.array = str(desc, "array");
  spec.reservation = str(desc, "reservation");
  spec.licenses = str(desc, "licenses");
  spec.constraint = str(desc, "constraints");
  spec.nodelist = str(desc, "required_nodes");
  spec.exclude = str(desc, "excluded_nodes");
  spec.mail_user = str(desc, "mail_user");
  spec.workdir = str(desc, "current_working_directory");
  spec.submit_dir = spec.workdir;
  spec.std_out = str(desc, "standard_output");
  spec.std_err = str(desc, "standard_error");
  spec.std_in = str(desc, "standard_input");
  // Numbers come plain or as {"set", "infinite", "number"}; `infinite` is returned as -1.
  auto value = [&](const char* key) -> std::optional<int64_t> {
    auto it = desc.find(key);
    if (it == desc.end() || it->is_null()) return std::nullopt;
    if (it->is_number_integer()) return it->get<int64_t>();
    if (it->is_object()) {
      if (it->value("infinite", false)) return -1;
      if (it->value("set", false)) return it->value("number", int64_t{0});
      return std::nullopt;
    }
    throw std::invalid_argument(std::string(key) + " is not a number");
  };
  try {
    if (auto v = value("tasks")) {
      spec.ntasks = static_cast<int>(*v);
      spec.ntasks_set = true;
    }
    if (auto v = value("cpus_per_task")) {
      spec.cpus_per_task = static_cast<int>(*v);
      spec.cpus_per_task_set = true;
    }
    if (auto it = desc.find("nodes"); it != desc.end() && it->is_string()) {
      // "2" or "1-4", as sbatch -N.
      const std::string n = it->get<std::string>();
      const auto dash = n.find('-');
      spec.nodes_min = std::stoi(n.substr(0, dash));
      spec.nodes_max = dash == std::string::npos ? spec.nodes_min : std::stoi(n.substr(dash + 1));
      spec.nodes_set = true;
    } else if (auto v = value("nodes")) {
      spec.nodes_min = spec.nodes_max = static_cast<int>(*v);
      spec.nodes_set = true;
    }
    if (auto v = value("minimum_nodes")) {
      spec.nodes_min = static_cast<int>(*v);
      spec.nodes_set = true;
    }
    if (auto v = value("maximum_nodes")) spec.nodes_max = static_cast<int>(*v);
    if (auto v = value("tasks_per_node")) spec.ntasks_per_node = static_cast<int>(*v);
    if (auto v = value("minimum_cpus_per_node")) spec.min_cpus = static_cast<int>(*v);
    if (auto v = value("temporary_disk_per_node")) spec.tmp_disk_mb = *v;
    if (auto v = value("memory_per_node")) spec.mem_per_node_mb = *v < 0 ? 0 : *v;
    if (auto v = value("memory_per_cpu")) spec.mem_per_cpu_mb = *v < 0 ? 0 : *v;
    if (auto v = value("time_limit")) spec.time_limit_min = *v;
    if (auto v = value("begin_time")) spec.begin_time = std::max<int64_t>(*v, 0);
    if (auto v = value("deadline")) spec.deadline = std::max<int64_t>(*v, 0);
    if (auto v = value("nice")) spec.nice = static_cast<int>(*v);
  } catch (const std::exception& e) {
    return std::string("Invalid job description: ") + e.what();
  }
  if (auto it = desc.find("hold"); it != desc.end() && it->is_boolean())
    spec.hold = it->get<bool>();
  if (auto it = desc.find("requeue"); it != desc.end() && it->is_boolean())
    spec.requeue = it->get<bool>() ? 1 : 0;
  if (auto it = desc.find("argv"); it != desc.end() && it->is_array())
    for (const auto& a : *it)
      if (a.is_string()) spec.argv.push_back(a.get<std::string>());
  // TRES requests ("gres/gpu:2") as sbatch's --gres / --gpus / --gpus-per-task.
  auto gres_of = [](std::string t) {
    std::string out;
    for (auto& item : csv(t)) {
      std::string s = item.get<std::string>();
      if (s.rfind("gres/", 0) == 0) s.erase(0, 5);
      std::replace(s.begin(), s.end(), '=', ':');
      out += (out.empty() ? "" : ",") + s;
    }
    return out;
  };
  spec.gres = gres_of(str(desc, "tres_per_node"));
  if (std::string g = gres_of(str(desc, "tres_per_job")); g.rfind("gpu:", 0) == 0)
    spec.gpus = g.substr(4);
  if (std::string g = gres_of(str(desc, "tres_per_task")); g.rfind("gpu:", 0) == 0)
    spec.gpus_per_task = g.substr(4);
  // The environment: ["K=V", ...] as Slurm takes it (an object is accepted too).
  if (auto it = desc.find("environment"); it != desc.end()) {
    if (it->is_array()) {
      for (const auto& kv : *it) {
        if (!kv.is_string()) continue;
        const std::string s = kv.get<std::string>();
        const auto eq = s.find('=');
        if (eq != std::string::npos && eq > 0) spec.environment[s.substr(0, eq)] = s.substr(eq + 1);
      }
    } else if (it->is_object()) {
      for (const auto& [k, v] : it->items())
        if (v.is_string()) spec.environment[k] = v.get<std::string>();
    }
  }
  if (spec.environment.empty()) return rest_error_text(rest_errno::kEnvironmentMissing);
  spec.submit_host = "localhost";
  out = spec;
  return "";
}

void submit_job(Call& call) {
  call.body["job_id"] = 0;
  call.body["step_id"] = "batch";
  call.body["job_submit_user_msg"] = "";
  const json body = json::parse(call.req.body, nullptr, false);
  if (!body.is_object())
    return call.error(400, rest_errno::kRestFailParsing, "Request body is not a JSON object",
                      "job/submit");
  if (body.contains("jobs"))
    return call.error(400, rest_errno::kRestInvalidQuery, "Heterogeneous jobs are not supported",
                      "jobs");
  const json desc = body.value("job", json::object());
  if (!desc.is_object())
    return call.error(400, rest_errno::kRestFailParsing, "job is not an object", "job");
  std::string script = body.contains("script") && body["script"].is_string()
                           ? body["script"].get<std::string>()
                           : str(desc, "script");
  if (script.empty())
    return call.error(400, rest_errno::kJobScriptMissing, "Batch job script empty or missing",
                      "script");
  json spec;
  if (std::string err = job_spec_from_desc(desc, script, spec); !err.empty())
    return call.error(
        400, errno_for(err) == rest_errno::kError ? rest_errno::kRestFailParsing : errno_for(err),
        err, "job");
  const json reply = call.ctx.backend.submit({{"spec", spec}}, call.ctx.who);
  if (!reply.value("ok", false)) {
    std::string text = reply.value("error", "Batch job submission failed");
    const int number = errno_for(text);
    if (reply.contains("detail")) text += ": " + reply.value("detail", "");
    return call.error(status_for(number), number, text, "slurm_submit_batch_job()");
  }
  call.body["job_id"] = reply.value("job_id", uint64_t{0});
}

}  // namespace drover::ctld::rest
