// /slurm/v0.0.44/jobs, job/{id} (GET, DELETE) and job/submit: v0.0.44's job_info built from the
// controller's job view (proto/data_parser/job_info.*), job_desc_msg turned into the JobSpec sbatch
// would send, and the controller's submit and cancel doing the rest (its rules, its permissions).
#include <algorithm>

#include "core/array_spec.hpp"
#include "core/job.hpp"
#include "core/sbatch_options.hpp"
#include "ctld/rest_handlers.hpp"
#include "proto/data_parser/job_info.hpp"
#include "proto/data_parser/values.hpp"
#include "proto/decode.hpp"
#include "proto/json.hpp"

namespace drover::ctld::rest {

using namespace proto::data_parser;

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

}  // namespace

void get_jobs(Call& call) {
  const json reply = call.ctx.backend.query({.what = "jobs", .detail = true});
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
    call.body["jobs"].push_back(job_info(v, call.ctx.config.cluster_name));
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
  const json reply = call.ctx.backend.query({.what = "jobs", .job_id = job_id, .detail = true});
  if (!reply.value("ok", false))
    return call.error(404, rest_errno::kInvalidJobId, "Unable to query JobId=" + id, "get_job");
  for (const auto& v : reply.value("jobs", json::array()))
    call.body["jobs"].push_back(job_info(v, call.ctx.config.cluster_name));
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
  const json reply = call.ctx.backend.cancel(
      {.jobs = std::vector<std::string>{id}, .signal = signal, .full = true}, call.ctx.who);
  for (const auto& e : reply.value("errors", json::array())) {
    const proto::Error error = proto::Error::from_entry(e);
    const std::string& text = error.message;
    const int code = static_cast<int>(error.code);
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
  json body;
  try {
    body = proto::decode_object(call.req.body);  // nesting bounded too
  } catch (const proto::BadMessage&) {
    return call.error(400, rest_errno::kRestFailParsing, "Request body is not a JSON object",
                      "job/submit");
  }
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
  // Drover's own: a client that retries after a lost reply names its submission, and the
  // retry gets the job the first attempt created.
  std::optional<proto::SubmitRequest> request = proto::SubmitRequest::from_parts(
      spec, body.contains("request_id") ? &body["request_id"] : nullptr);
  const json reply = request ? call.ctx.backend.submit(*request, call.ctx.who)
                             : proto::SubmitRequest::invalid().reply();
  if (!reply.value("ok", false)) {
    const proto::Error error = *proto::Error::from_reply(reply);
    std::string text = error.message.empty() ? "Batch job submission failed" : error.message;
    const int number = static_cast<int>(error.code);
    if (reply.contains("detail")) text += ": " + reply.value("detail", "");
    return call.error(status_for(number), number, text, "slurm_submit_batch_job()");
  }
  call.body["job_id"] = reply.value("job_id", uint64_t{0});
}

}  // namespace drover::ctld::rest
