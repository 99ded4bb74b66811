// data_parser v0.0.44's node, partition_info and reservation_info from the controller's
// views (what `query nodes|partitions|reservations` answers).
#include "proto/data_parser/cluster.hpp"

#include <cmath>

#include "core/memsize.hpp"
#include "proto/data_parser/values.hpp"

namespace drover::proto::data_parser {

json node_states(const json& node) {
  json states = json::array();
  const std::string state_long = str(node, "state_long");
  for (std::size_t start = 0; start <= state_long.size();) {
    auto plus = state_long.find('+', start);
    if (plus == std::string::npos) plus = state_long.size();
    if (plus > start) states.push_back(state_long.substr(start, plus - start));
    start = plus + 1;
  }
  return states;
}

std::string gres_used_text(const json& node) {
  std::string out;
  for (const auto& g : node.value("gres_used", json::array())) {
    std::string item = g.value("name", "");
    if (!g.value("type", "").empty()) item += ":" + g.value("type", "");
    item += ":" + std::to_string(g.value("count", int64_t{0}));
    out += (out.empty() ? "" : ",") + item;
  }
  return out;
}

int64_t cpu_load_hundredths(const json& node) {
  const double load = node.value("cpu_load", -1.0);
  return load < 0 ? 0 : static_cast<int64_t>(std::lround(load * 100));
}

json node_info(const json& n) {
  const int64_t cpus = num(n, "cpus"), alloc_cpus = num(n, "alloc_cpus");
  const int64_t mem = num(n, "real_memory_mb"), alloc_mem = num(n, "alloc_mem_mb");
  const int64_t free_mem = num(n, "free_mem_mb", -1);
  std::string tres = "cpu=" + std::to_string(cpus) + ",mem=" + core::format_mem_mb(mem) +
                     ",billing=" + std::to_string(cpus);
  std::string tres_used;
  if (alloc_cpus > 0)
    tres_used = "cpu=" + std::to_string(alloc_cpus) + ",mem=" + core::format_mem_mb(alloc_mem);
  const std::string address = str(n, "address").empty() ? str(n, "name") : str(n, "address");
  return {
      {"architecture", ""},
      {"burstbuffer_network_address", ""},
      {"boards", 1},
      {"boot_time", time_value(num(n, "boot_time"))},
      {"tls_cert_last_renewal", unset()},
      {"cert_flags", json::array()},
      {"cluster_name", ""},
      {"cores", num(n, "cores_per_socket", 1)},
      {"specialized_cores", 0},
      {"cpu_binding", 0},
      {"cpu_load", cpu_load_hundredths(n)},
      {"free_mem", free_mem < 0 ? unset() : number(free_mem)},
      {"cpus", cpus},
      {"effective_cpus", cpus},
      {"specialized_cpus", ""},
      {"energy",
       {{"average_watts", 0},
        {"base_consumed_energy", 0},
        {"consumed_energy", 0},
        {"current_watts", unset()},
        {"previous_consumed_energy", 0},
        {"last_collected", 0}}},
      {"extra", ""},
      {"features", n.value("features", json::array())},
      {"active_features", n.value("active_features", json::array())},
      {"gpu_spec", ""},
      {"gres", str(n, "gres")},
      {"gres_drained", "N/A"},
      {"gres_used", gres_used_text(n)},
      {"instance_id", ""},
      {"instance_type", ""},
      {"last_busy", unset()},
      {"mcs_label", ""},
      {"specialized_memory", 0},
      {"name", str(n, "name")},
      {"next_state_after_reboot", json::array({"INVALID"})},
      {"address", address},
      {"hostname", str(n, "name")},
      {"state", node_states(n)},
      {"operating_system", ""},
      {"owner", ""},
      {"partitions", n.value("partitions", json::array())},
      {"port", 0},
      {"real_memory", mem},
      {"res_cores_per_gpu", 0},
      {"comment", ""},
      {"reason", str(n, "reason")},
      {"reason_changed_at", time_value(num(n, "reason_time"))},
      {"reason_set_by_user", ""},
      {"resume_after", unset()},
      {"reservation", ""},
      {"alloc_memory", alloc_mem},
      {"alloc_cpus", alloc_cpus},
      {"alloc_idle_cpus", cpus - alloc_cpus},
      {"tres_used", tres_used},
      {"tres_weighted", 0.0},
      {"slurmd_start_time", time_value(num(n, "agent_start_time"))},
      {"sockets", num(n, "sockets", 1)},
      {"threads", num(n, "threads_per_core", 1)},
      {"temporary_disk", num(n, "tmp_disk_mb")},
      {"weight", 1},
      {"topology", ""},
      {"tres", tres},
      {"version", "25.11.0"},
  };
}

json partition_info(const json& p, const std::string& cluster) {
  const int64_t def_mem_cpu = num(p, "def_mem_per_cpu_mb"),
                def_mem_node = num(p, "def_mem_per_node_mb");
  const int64_t max_time = num(p, "max_time_min", -1), def_time = num(p, "default_time_min", -1);
  const int64_t max_nodes = num(p, "max_nodes", -1);
  const int64_t total_cpus = num(p, "total_cpus"), total_mem = num(p, "total_mem_mb");
  return {
      {"nodes",
       {{"allowed_allocation", ""},
        {"configured", str(p, "nodelist")},
        {"total", num(p, "total_nodes")}}},
      {"accounts", {{"allowed", str(p, "allow_accounts")}, {"deny", ""}}},
      {"groups", {{"allowed", ""}}},
      {"qos", {{"allowed", str(p, "allow_qos")}, {"deny", ""}, {"assigned", ""}}},
      {"alternate", ""},
      {"tres",
       {{"billing_weights", ""},
        {"configured",
         "cpu=" + std::to_string(total_cpus) + ",mem=" + core::format_mem_mb(total_mem) + ",node=" +
             std::to_string(num(p, "total_nodes")) + ",billing=" + std::to_string(total_cpus)}}},
      {"cluster", cluster},
      {"select_type", json::array()},
      {"cpus", {{"task_binding", 0}, {"total", total_cpus}}},
      {"defaults",
       {{"memory_per_cpu", def_mem_cpu > 0 ? def_mem_cpu : def_mem_node},
        {"partition_memory_per_cpu", def_mem_cpu > 0 ? number(def_mem_cpu) : unset()},
        {"partition_memory_per_node", def_mem_node > 0 ? number(def_mem_node) : unset()},
        {"time", def_time < 0 ? unset() : number(def_time)},
        {"job", ""}}},
      {"grace_time", 0},
      {"maximums",
       {{"cpus_per_node", unset()},
        {"cpus_per_socket", unset()},
        {"memory_per_cpu", 0},
        {"partition_memory_per_cpu", unset()},
        {"partition_memory_per_node", unset()},
        {"nodes", max_nodes < 0 ? infinite() : number(max_nodes)},
        {"shares", 1},
        {"oversubscribe", {{"jobs", 1}, {"flags", json::array()}}},
        {"time", limit(max_time)},
        {"over_time_limit", unset()}}},
      {"minimums", {{"nodes", num(p, "min_nodes", 1)}}},
      {"name", str(p, "name")},
      {"node_sets", ""},
      {"priority",
       {{"job_factor", num(p, "priority_job_factor", 1)}, {"tier", num(p, "priority_tier", 1)}}},
      {"timeouts", {{"resume", unset()}, {"suspend", unset()}}},
      {"topology", ""},
      {"partition", {{"state", json::array({str(p, "state").empty() ? "UP" : str(p, "state")})}}},
      {"suspend_time", unset()},
  };
}

json reservation_info(const json& r) {
  return {
      {"accounts", str(r, "accounts")},
      {"burst_buffer", ""},
      {"core_count", num(r, "core_cnt")},
      {"core_specializations", json::array()},
      {"end_time", time_value(num(r, "end"))},
      {"features", ""},
      {"flags", csv(str(r, "flags"))},
      {"groups", ""},
      {"licenses", ""},
      {"max_start_delay", 0},
      {"name", str(r, "name")},
      {"node_count", num(r, "node_cnt")},
      {"node_list", str(r, "nodes")},
      {"partition", str(r, "partition")},
      {"purge_completed", {{"time", unset()}}},
      {"start_time", time_value(num(r, "start"))},
      {"tres", "cpu=" + std::to_string(num(r, "cpus"))},
      {"users", str(r, "users")},
  };
}

}  // namespace drover::proto::data_parser
