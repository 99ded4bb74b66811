// data_parser v0.0.44's job_info (slurmrestd's /slurm/v0.0.44/jobs, squeue --json, scontrol
// show job --json) from the controller's job view (what `query jobs` answers).
#include "proto/data_parser/job_info.hpp"

#include <algorithm>

#include "core/array_spec.hpp"
#include "proto/data_parser/values.hpp"

namespace drover::proto::data_parser {
namespace {

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

json job_info(const json& view, const std::string& cluster) {
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
      {"cluster", cluster},
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
      {"system_comment", str(view, "system_comment")},
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

}  // namespace drover::proto::data_parser
