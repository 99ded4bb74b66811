// /slurm/v0.0.44/ ping, diag, nodes, node/{name}, partitions, partition/{name}, reservations,
// reservation/{name} and shares, in v0.0.44's shapes, from the controller's queries.
#include <cmath>

#include "core/gres.hpp"
#include "core/memsize.hpp"
#include "ctld/rest_handlers.hpp"
#include "ctld/rest_values.hpp"

namespace drover::ctld::rest {
namespace {

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string out;
    for (const auto& v : *it)
      out += (out.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
    return out;
  }
  return it->dump();
}

int64_t num(const json& j, const char* key, int64_t dflt = 0) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : dflt;
}

// "gpu:a100:2" from the controller's GRES counts.
std::string gres_text(const json& counts) {
  std::string out;
  for (const auto& g : counts) {
    std::string item = g.value("name", "");
    if (!g.value("type", "").empty()) item += ":" + g.value("type", "");
    item += ":" + std::to_string(g.value("count", int64_t{0}));
    out += (out.empty() ? "" : ",") + item;
  }
  return out;
}

// A double the controller sent (JSON has no infinity: "inf" stands for it).
json float_value(const json& v) {
  if (v.is_number()) return number(v.get<double>());
  if (v.is_string() && v.get<std::string>() == "inf") return infinite();
  return unset();
}

json node_json(const json& n) {
  std::vector<std::string> state;
  const std::string state_long = str(n, "state_long");
  for (std::size_t start = 0; start <= state_long.size();) {
    auto plus = state_long.find('+', start);
    if (plus == std::string::npos) plus = state_long.size();
    if (plus > start) state.push_back(state_long.substr(start, plus - start));
    start = plus + 1;
  }
  const int64_t cpus = num(n, "cpus"), alloc_cpus = num(n, "alloc_cpus");
  const int64_t mem = num(n, "real_memory_mb"), alloc_mem = num(n, "alloc_mem_mb");
  const int64_t free_mem = num(n, "free_mem_mb", -1);
  const double load = n.value("cpu_load", -1.0);
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
      {"cpu_load", load < 0 ? 0 : static_cast<int64_t>(std::lround(load * 100))},
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
      {"active_features", n.value("features", json::array())},
      {"gpu_spec", ""},
      {"gres", str(n, "gres")},
      {"gres_drained", "N/A"},
      {"gres_used", gres_text(n.value("gres_used", json::array()))},
      {"instance_id", ""},
      {"instance_type", ""},
      {"last_busy", unset()},
      {"mcs_label", ""},
      {"specialized_memory", 0},
      {"name", str(n, "name")},
      {"next_state_after_reboot", json::array({"INVALID"})},
      {"address", address},
      {"hostname", str(n, "name")},
      {"state", state},
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

json partition_json(const json& p, const Config& config) {
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
      {"cluster", config.cluster_name},
      {"select_type", json::array()},
      {"cpus", {{"task_binding", 0}, {"total", total_cpus}}},
      {"defaults",
       {{"memory_per_cpu",
         config.def_mem_per_cpu_mb > 0 ? config.def_mem_per_cpu_mb : config.def_mem_per_node_mb},
        {"partition_memory_per_cpu",
         config.def_mem_per_cpu_mb > 0 ? number(config.def_mem_per_cpu_mb) : unset()},
        {"partition_memory_per_node",
         config.def_mem_per_node_mb > 0 ? number(config.def_mem_per_node_mb) : unset()},
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

json reservation_json(const json& r) {
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

// Lists `key` from a query; with `name`, only that entry (404 when there is none).
void list_named(Call& call, const char* what, const char* key, const std::string& name,
                int missing_errno, json (*convert)(const json&, const Config&)) {
  const json reply = call.ctx.backend.query({{"what", what}});
  json& out = call.body[key] = json::array();
  call.body["last_update"] = time_value(call.ctx.now);
  for (const auto& item : reply.value(what, json::array()))
    if (name.empty() || item.value("name", "") == name)
      out.push_back(convert(item, call.ctx.config));
  if (!name.empty() && out.empty())
    call.error(404, missing_errno, std::string("Unable to find ") + key + " " + name, what);
}

}  // namespace

void get_ping(Call& call) {
  const json reply = call.ctx.backend.query({{"what", "ping"}});
  call.body["pings"] = json::array({{{"hostname", call.ctx.config.control_host},
                                     {"pinged", "UP"},
                                     {"responding", reply.value("ok", false)},
                                     {"latency", 0},
                                     {"mode", "primary"},
                                     {"primary", true}}});
}

void get_diag(Call& call) {
  const SchedStats s = call.ctx.backend.sched_stats();
  const json jobs = call.ctx.backend.query({{"what", "jobs"}, {"detail", false}});
  int64_t pending = 0, running = 0, completed = 0, cancelled = 0, failed = 0;
  for (const auto& j : jobs.value("jobs", json::array())) {
    const std::string st = j.value("state", "");
    pending += st == "PENDING";
    running += st == "RUNNING";
    completed += st == "COMPLETED";
    cancelled += st == "CANCELLED";
    failed += st == "FAILED" || st == "TIMEOUT" || st == "NODE_FAIL" || st == "OUT_OF_MEMORY";
  }
  auto us = [](double seconds) { return static_cast<int64_t>(std::llround(seconds * 1e6)); };
  const int64_t cycles = static_cast<int64_t>(s.cycles);
  const double uptime_min = std::max<double>(1, double(call.ctx.now - call.ctx.started) / 60);
  call.body["statistics"] = {
      {"parts_packed", 1},
      {"req_time", time_value(call.ctx.now)},
      {"req_time_start", time_value(call.ctx.started)},
      {"server_thread_count", 1},
      {"agent_queue_size", 0},
      {"agent_count", 0},
      {"agent_thread_count", 0},
      {"dbd_agent_queue_size", 0},
      {"gettimeofday_latency", 0},
      {"schedule_cycle_max", us(s.max_s)},
      {"schedule_cycle_last", us(s.last_s)},
      {"schedule_cycle_sum", us(s.total_s)},
      {"schedule_cycle_total", cycles},
      {"schedule_cycle_mean", cycles ? us(s.total_s) / cycles : 0},
      {"schedule_cycle_mean_depth", 0},
      {"schedule_cycle_per_minute", static_cast<int64_t>(double(cycles) / uptime_min)},
      {"schedule_cycle_depth", 0},
      {"schedule_exit",
       {{"end_job_queue", cycles},
        {"default_queue_depth", 0},
        {"max_job_start", 0},
        {"max_rpc_cnt", 0},
        {"max_sched_time", 0},
        {"licenses", 0}}},
      {"schedule_queue_length", static_cast<int64_t>(s.last_backlog)},
      {"jobs_submitted", static_cast<int64_t>(s.jobs_submitted)},
      {"jobs_started", static_cast<int64_t>(s.jobs_started)},
      {"jobs_completed", completed},
      {"jobs_canceled", cancelled},
      {"jobs_failed", failed},
      {"jobs_pending", pending},
      {"jobs_running", running},
      {"job_states_ts", time_value(call.ctx.now)},
      {"bf_backfilled_jobs", 0},
      {"bf_last_backfilled_jobs", 0},
      {"bf_backfilled_het_jobs", 0},
      {"bf_cycle_counter", 0},
      {"bf_cycle_mean", 0},
      {"bf_depth_mean", 0},
      {"bf_depth_mean_try", 0},
      {"bf_cycle_sum", 0},
      {"bf_cycle_last", 0},
      {"bf_cycle_max", 0},
      {"bf_exit",
       {{"end_job_queue", 0},
        {"bf_max_job_start", 0},
        {"bf_max_job_test", 0},
        {"bf_max_time", 0},
        {"bf_node_space_size", 0},
        {"state_changed", 0}}},
      {"bf_last_depth", 0},
      {"bf_last_depth_try", 0},
      {"bf_depth_sum", 0},
      {"bf_depth_try_sum", 0},
      {"bf_queue_len", 0},
      {"bf_queue_len_mean", 0},
      {"bf_queue_len_sum", 0},
      {"bf_table_size", 0},
      {"bf_table_size_sum", 0},
      {"bf_table_size_mean", 0},
      {"bf_when_last_cycle", time_value(call.ctx.last_sched_pass)},
      {"bf_active", false},
      {"rpcs_by_message_type", json::array()},
      {"rpcs_by_user", json::array()},
      {"pending_rpcs", json::array()},
      {"pending_rpcs_by_hostlist", json::array()},
  };
}

void get_nodes(Call& call, const std::string& name) {
  list_named(call, "nodes", "nodes", name, rest_errno::kInvalidNodeName,
             [](const json& n, const Config&) { return node_json(n); });
}

void get_partitions(Call& call, const std::string& name) {
  list_named(call, "partitions", "partitions", name, rest_errno::kInvalidPartitionName,
             partition_json);
}

void get_reservations(Call& call, const std::string& name) {
  list_named(call, "reservations", "reservations", name, rest_errno::kReservationInvalid,
             [](const json& r, const Config&) { return reservation_json(r); });
}

void get_shares(Call& call) {
  json req = {{"what", "shares"}};
  // ?users=a,b&accounts=x as Slurm's shares query takes them.
  for (const char* key : {"users", "accounts"})
    if (const std::string v = call.param(key); !v.empty()) req[key] = csv(v);
  const json reply = call.ctx.backend.query(req);
  const json names = reply.value("tres_names", json::array());
  json shares = json::array();
  int64_t total = 0;
  for (const auto& r : reply.value("rows", json::array())) {
    const bool user = !r.value("user", "").empty();
    const json raw = r.value("raw_shares", json());
    if (raw.is_number()) total += raw.get<int64_t>();
    json usage = json::array(), run = json::array(), grp = json::array();
    const json raw_tres = r.value("grp_tres_raw", json::array());
    const json run_tres = r.value("tres_run_mins", json::array());
    for (std::size_t t = 0; t < names.size(); ++t) {
      usage.push_back({{"name", names[t]}, {"value", t < raw_tres.size() ? raw_tres[t] : json(0)}});
      run.push_back({{"name", names[t]},
                     {"value", number(t < run_tres.size() ? run_tres[t].get<int64_t>() * 60 : 0)}});
      grp.push_back({{"name", names[t]}, {"value", unset()}});
    }
    shares.push_back({
        {"id", r.value("id", 0)},
        {"cluster", call.ctx.config.cluster_name},
        {"name", user ? r.value("user", "") : r.value("account", "")},
        {"parent", user ? r.value("account", "") : r.value("parent", "")},
        {"partition", ""},
        {"shares_normalized", float_value(r.value("norm_shares", json()))},
        {"shares", raw.is_number() ? number(raw.get<int64_t>()) : unset()},
        {"tres", {{"run_seconds", run}, {"group_minutes", grp}, {"usage", usage}}},
        {"effective_usage", float_value(r.value("effective_usage", json()))},
        {"usage_normalized", float_value(r.value("norm_usage", json()))},
        {"usage", static_cast<int64_t>(r.value("raw_usage", 0.0))},
        {"fairshare",
         {{"factor", float_value(r.value("fairshare", json()))},
          {"level", float_value(r.value("level_fs", json()))}}},
        {"type", json::array({user ? "USER" : "ASSOCIATION"})},
    });
  }
  call.body["shares"] = {{"shares", std::move(shares)}, {"total_shares", total}};
}

}  // namespace drover::ctld::rest
