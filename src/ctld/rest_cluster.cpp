// /slurm/v0.0.44/ ping, diag, nodes, node/{name}, partitions, partition/{name}, reservations,
// reservation/{name} and shares, in v0.0.44's shapes (proto/data_parser/cluster.*), from the
// controller's queries.
#include <cmath>
#include <functional>

#include "ctld/rest_handlers.hpp"
#include "proto/data_parser/cluster.hpp"
#include "proto/data_parser/values.hpp"

namespace drover::ctld::rest {

using namespace proto::data_parser;

namespace {

// A double the controller sent (JSON has no infinity: "inf" stands for it).
json float_value(const json& v) {
  if (v.is_number()) return number(v.get<double>());
  if (v.is_string() && v.get<std::string>() == "inf") return infinite();
  return unset();
}

// Lists `key` from a query; with `name`, only that entry (404 when there is none).
void list_named(Call& call, const char* what, const char* key, const std::string& name,
                int missing_errno, const std::function<json(const json&)>& convert) {
  const json reply = call.ctx.backend.query({.what = what});
  json& out = call.body[key] = json::array();
  call.body["last_update"] = time_value(call.ctx.now);
  for (const auto& item : reply.value(what, json::array()))
    if (name.empty() || item.value("name", "") == name) out.push_back(convert(item));
  if (!name.empty() && out.empty())
    call.error(404, missing_errno, std::string("Unable to find ") + key + " " + name, what);
}

}  // namespace

void get_ping(Call& call) {
  const json reply = call.ctx.backend.query({.what = "ping"});
  call.body["pings"] = json::array({{{"hostname", call.ctx.config.control_host},
                                     {"pinged", "UP"},
                                     {"responding", reply.value("ok", false)},
                                     {"latency", 0},
                                     {"mode", "primary"},
                                     {"primary", true}}});
}

void get_diag(Call& call) {
  const SchedStats s = call.ctx.backend.sched_stats();
  const json jobs = call.ctx.backend.query({.what = "jobs", .detail = false});
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
        {"bf_max_time", static_cast<int64_t>(s.passes_out_of_time)},
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
  list_named(call, "nodes", "nodes", name, rest_errno::kInvalidNodeName, node_info);
}

void get_partitions(Call& call, const std::string& name) {
  list_named(call, "partitions", "partitions", name, rest_errno::kInvalidPartitionName,
             [&](const json& p) { return partition_info(p, call.ctx.config.cluster_name); });
}

void get_reservations(Call& call, const std::string& name) {
  list_named(call, "reservations", "reservations", name, rest_errno::kReservationInvalid,
             reservation_info);
}

void get_shares(Call& call) {
  proto::QueryRequest req{.what = "shares"};
  // ?users=a,b&accounts=x as Slurm's shares query takes them.
  for (auto [key, list] : {std::pair{"users", &req.users}, std::pair{"accounts", &req.accounts}})
    if (const std::string v = call.param(key); !v.empty())
      *list = csv(v).get<std::vector<std::string>>();
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
