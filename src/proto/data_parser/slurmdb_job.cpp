// data_parser v0.0.44's slurmdb job (slurmrestd's /slurmdb/v0.0.44/jobs, sacct --json) from an
// accounting record in the form the controller sends it to sacct (ctld/acct_record_json).
#include "proto/data_parser/slurmdb_job.hpp"

#include "proto/data_parser/values.hpp"

namespace drover::proto::data_parser {
namespace {

constexpr int64_t kNoTask = 0xfffffffe;  // not an array task (store::kAcctNoTask)

json cpu_time(int64_t seconds) { return {{"seconds", seconds}, {"microseconds", 0}}; }

json step_json(const json& job, const json& s) {
  const int64_t start = num(s, "start_time"), end = num(s, "end_time");
  const bool running = end == 0;
  const int64_t elapsed = start == 0 || running ? 0 : end - start;
  const std::string name = str(s, "name"), nodelist = str(s, "nodelist");
  return {
      {"time",
       {{"elapsed", elapsed},
        {"end", time_value(end)},
        {"start", time_value(start)},
        {"suspended", 0},
        {"system", cpu_time(0)},
        {"limit", limit(num(job, "time_limit_min", -1))},
        {"total", cpu_time(0)},
        {"user", cpu_time(0)}}},
      {"exit_code", exit_code(int(num(s, "exit_code")), int(num(s, "exit_signal")), running)},
      {"nodes",
       {{"count", num(s, "nnodes")}, {"range", nodelist}, {"list", json::array({nodelist})}}},
      {"tasks", {{"count", num(s, "ntasks", 1)}}},
      {"pid", ""},
      {"CPU",
       {{"requested_frequency", {{"min", unset()}, {"max", unset()}}},
        {"governor", json::array()}}},
      {"kill_request_user", ""},
      {"state", json::array({str(s, "state")})},
      {"statistics", {{"CPU", {{"actual_frequency", 0}}}, {"energy", {{"consumed", unset()}}}}},
      {"step",
       {{"id", std::to_string(num(job, "job_id")) + "." + name},
        {"name", str(s, "job_name").empty() ? name : str(s, "job_name")},
        {"stderr", ""},
        {"stdin", ""},
        {"stdout", ""},
        {"stderr_expanded", ""},
        {"stdin_expanded", ""},
        {"stdout_expanded", ""}}},
      {"task", {{"distribution", ""}}},
      {"tres",
       {{"requested",
         {{"max", json::array()},
          {"min", json::array()},
          {"average", json::array()},
          {"total", json::array()}}},
        {"consumed",
         {{"max", json::array()},
          {"min", json::array()},
          {"average", json::array()},
          {"total", json::array()}}},
        {"allocated", tres_list(str(s, "alloc_tres"))}}},
  };
}

}  // namespace

json db_job(const json& r, const std::string& cluster) {
  const int64_t submit = num(r, "submit_time"), eligible = num(r, "eligible_time"),
                start = num(r, "start_time"), end = num(r, "end_time");
  const bool ended = end != 0;
  const int64_t elapsed = start == 0 ? 0 : (ended ? end : start) - start;
  json steps = json::array();
  for (const auto& s : r.value("steps", json::array())) steps.push_back(step_json(r, s));
  const int64_t planned = eligible == 0 ? 0 : start != 0 ? start - eligible : 0;
  const int64_t task = num(r, "array_task_id", kNoTask);
  const int code = int(num(r, "exit_code")), sig = int(num(r, "exit_signal"));
  const int64_t priority = num(r, "priority"), mem = num(r, "req_mem_mb");
  const bool mem_per_cpu = r.value("req_mem_per_cpu", false);
  const std::string account = str(r, "account"), user = str(r, "user"), qos = str(r, "qos"),
                    nodelist = str(r, "nodelist");
  return {
      {"account", account},
      {"comment", {{"administrator", ""}, {"job", ""}, {"system", str(r, "system_comment")}}},
      {"allocation_nodes", num(r, "nnodes")},
      {"array",
       {{"job_id", num(r, "array_job_id")},
        {"limits", {{"max", {{"running", {{"tasks", 0}}}}}}},
        {"task_id", task == kNoTask ? unset() : number(task)},
        {"task", ""}}},
      {"association",
       {{"account", account}, {"cluster", cluster}, {"partition", ""}, {"user", user}, {"id", 0}}},
      {"block", ""},
      {"cluster", cluster},
      {"constraints", ""},
      {"container", ""},
      {"derived_exit_code", exit_code(code, sig, !ended)},
      {"time",
       {{"elapsed", elapsed},
        {"eligible", eligible},
        {"end", end},
        {"planned", number(planned)},
        {"start", start},
        {"submission", submit},
        {"suspended", 0},
        {"system", cpu_time(0)},
        {"limit", limit(num(r, "time_limit_min", -1))},
        {"total", cpu_time(0)},
        {"user", cpu_time(0)}}},
      {"exit_code", exit_code(code, sig, !ended)},
      {"extra", ""},
      {"failed_node", ""},
      {"flags", json::array()},
      {"group", str(r, "group")},
      {"het", {{"job_id", 0}, {"job_offset", unset()}}},
      {"job_id", num(r, "job_id")},
      {"name", str(r, "name")},
      {"licenses", ""},
      {"mcs", {{"label", ""}}},
      {"nodes", nodelist.empty() ? "None assigned" : nodelist},
      {"partition", str(r, "partition")},
      {"hold", priority == 0 && !ended},
      {"priority", number(priority)},
      {"qos", qos},
      {"qosreq", qos},
      {"required",
       {{"CPUs", num(r, "req_cpus")},
        {"memory_per_cpu", mem_per_cpu ? number(mem) : unset()},
        {"memory_per_node", mem_per_cpu ? unset() : number(mem)}}},
      {"kill_request_user", ""},
      {"restart_cnt", num(r, "restarts")},
      {"reservation", {{"id", 0}, {"name", ""}, {"requested", ""}}},
      {"script", ""},
      {"segment_size", 0},
      {"stdin_expanded", ""},
      {"stdout_expanded", ""},
      {"stderr_expanded", ""},
      {"stdout", ""},
      {"stderr", ""},
      {"stdin", ""},
      {"state", {{"current", json::array({str(r, "state")})}, {"reason", str(r, "reason")}}},
      {"steps", std::move(steps)},
      {"submit_line", ""},
      {"tres",
       {{"allocated", tres_list(str(r, "alloc_tres"))},
        {"requested", tres_list(str(r, "req_tres"))}}},
      {"used_gres", ""},
      {"user", user},
      {"wckey", {{"wckey", ""}, {"flags", json::array()}}},
      {"working_directory", str(r, "workdir")},
  };
}

}  // namespace drover::proto::data_parser
