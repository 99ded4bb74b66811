// /slurmdb/v0.0.44/ jobs, job/{id}, accounts, users, associations and qos: job records from the
// accounting store, the rest from the accounting file (accounts.cfg) the controller loaded.
#include <algorithm>
#include <cctype>
#include <map>

#include "core/acct_dump.hpp"
#include "ctld/acct_record.hpp"
#include "ctld/rest_handlers.hpp"
#include "proto/data_parser/slurmdb_job.hpp"
#include "proto/data_parser/values.hpp"
#include "sched/limits.hpp"

namespace drover::ctld::rest {

using namespace proto::data_parser;

namespace {

json tres(const core::TresCounts& counts) {
  return counts.empty() ? json::array() : tres_list(core::format_tres_counts(counts));
}

const sched::Limits* limits_of(const Call& call) { return call.ctx.config.limits.get(); }

// The short association form accounts and users list.
json assoc_short(const sched::Limits::Assoc& a, int id, const Config& config) {
  return {{"account", a.account},
          {"cluster", config.cluster_name},
          {"partition", a.partition},
          {"user", a.user},
          {"id", id}};
}

}  // namespace

void get_db_jobs(Call& call, const std::string& id) {
  store::JobFilter filter;
  call.body["jobs"] = json::array();
  try {
    if (!id.empty()) filter.job_ids.push_back(std::stoull(id));
    if (const std::string v = call.param("start_time"); !v.empty())
      filter.window_start = std::stoll(v);
    if (const std::string v = call.param("end_time"); !v.empty()) filter.window_end = std::stoll(v);
  } catch (const std::exception&) {
    return call.error(400, rest_errno::kRestInvalidQuery, "Invalid job id or time", "query");
  }
  if (filter.window_start && !filter.window_end) filter.window_end = call.ctx.now;
  if (filter.window_end && !filter.window_start) filter.window_start = 0;
  filter.include_ineligible = true;
  for (const char* key : {"account", "partition", "state"})
    for (const auto& v : csv(call.param(key))) {
      const std::string s = v.get<std::string>();
      if (std::string(key) == "account") filter.accounts.push_back(s);
      if (std::string(key) == "partition") filter.partitions.push_back(s);
      if (std::string(key) == "state") filter.states.push_back(s);
    }
  const json users = csv(call.param("users"));
  for (const auto& r : call.ctx.backend.acct_jobs(filter)) {
    if (!users.empty() && std::find(users.begin(), users.end(), r.user) == users.end()) continue;
    call.body["jobs"].push_back(db_job(acct_record_json(r), call.ctx.config.cluster_name));
  }
  if (!id.empty() && call.body["jobs"].empty())
    call.error(404, rest_errno::kInvalidJobId, "Unable to find job " + id, "slurmdb_jobs_get()");
}

void get_db_accounts(Call& call) {
  json& out = call.body["accounts"] = json::array();
  const sched::Limits* limits = limits_of(call);
  if (!limits) {
    // Without an accounting file every user charges root (as priority/multifactor does).
    out.push_back({{"associations", json::array()},
                   {"coordinators", json::array()},
                   {"description", "default root account"},
                   {"name", "root"},
                   {"organization", "root"},
                   {"flags", json::array()}});
    return;
  }
  const auto& assocs = limits->assocs();
  for (int i = 0; i < int(assocs.size()); ++i) {
    const auto& a = assocs[i];
    if (a.is_user()) continue;
    json members = json::array();
    for (int k = 0; k < int(assocs.size()); ++k)
      if (assocs[k].is_user() && assocs[k].account == a.account)
        members.push_back(assoc_short(assocs[k], k, call.ctx.config));
    std::string description = a.account, organization = a.account;
    for (const auto& line : limits->dump().assocs)
      if (line.kind == core::AcctAssocLine::Kind::Account && line.name == a.account) {
        if (!line.description.empty()) description = line.description;
        if (!line.organization.empty()) organization = line.organization;
      }
    out.push_back({{"associations", std::move(members)},
                   {"coordinators", json::array()},
                   {"description", description},
                   {"name", a.account},
                   {"organization", organization},
                   {"flags", json::array()}});
  }
}

void get_db_users(Call& call) {
  json& out = call.body["users"] = json::array();
  const sched::Limits* limits = limits_of(call);
  if (!limits) return;
  std::vector<std::string> order;
  std::map<std::string, json> users;
  const auto& assocs = limits->assocs();
  for (int i = 0; i < int(assocs.size()); ++i) {
    const auto& a = assocs[i];
    if (!a.is_user()) continue;
    auto [it, fresh] = users.try_emplace(a.user);
    if (fresh) {
      order.push_back(a.user);
      const auto line = std::find_if(
          limits->dump().assocs.begin(), limits->dump().assocs.end(), [&](const auto& l) {
            return l.kind == core::AcctAssocLine::Kind::User && l.name == a.user;
          });
      const bool has_line = line != limits->dump().assocs.end();
      const std::string level = has_line && !line->admin_level.empty() ? line->admin_level : "None";
      it->second = {{"administrator_level", json::array({level})},
                    {"associations", json::array()},
                    {"coordinators", json::array()},
                    {"default",
                     {{"qos", 0},
                      {"account", limits->default_account(a.user).value_or(a.account)},
                      {"wckey", has_line ? line->default_wckey : ""}}},
                    {"flags", json::array({"NONE"})},
                    {"name", a.user},
                    {"old_name", ""},
                    {"wckeys", json::array()}};
    }
    it->second["associations"].push_back(assoc_short(a, i, call.ctx.config));
  }
  for (const auto& name : order) out.push_back(std::move(users[name]));
}

void get_db_associations(Call& call) {
  json& out = call.body["associations"] = json::array();
  const sched::Limits* limits = limits_of(call);
  if (!limits) return;
  const auto& assocs = limits->assocs();
  const auto& qos = limits->qos();
  for (int i = 0; i < int(assocs.size()); ++i) {
    const auto& a = assocs[i];
    const auto& own = a.own;
    // Lineage as slurmdbd spells it: "/parent/.../account/" then "0-user" for users.
    std::string lineage = "/";
    std::vector<std::string> chain;
    for (int p = a.is_user() ? a.parent : i; p != sched::Limits::kNone; p = assocs[p].parent)
      chain.insert(chain.begin(), assocs[p].account);
    for (const auto& c : chain) lineage += c + "/";
    if (a.is_user()) lineage += "0-" + a.user + "/";
    json qos_names = json::array();
    for (int q : a.qos)
      if (q >= 0 && q < int(qos.size())) qos_names.push_back(qos[q].name);
    // slurmdbd names the parent of accounts only.
    const std::string parent =
        a.is_user() || a.parent == sched::Limits::kNone ? "" : assocs[a.parent].account;
    out.push_back({
        {"accounting", json::array()},
        {"account", a.account},
        {"cluster", call.ctx.config.cluster_name},
        {"comment", ""},
        {"default",
         {{"qos",
           a.default_qos >= 0 && a.default_qos < int(qos.size()) ? qos[a.default_qos].name : ""}}},
        {"flags", json::array()},
        {"max",
         {{"jobs",
           {{"per",
             {{"count", limit(own.grp_jobs)},
              {"accruing", limit(own.grp_jobs_accrue)},
              {"submitted", limit(own.grp_submit_jobs)},
              {"wall_clock", limit(own.max_wall_min)}}},
            {"active", limit(own.max_jobs)},
            {"accruing", limit(own.max_jobs_accrue)},
            {"total", limit(own.max_submit_jobs)}}},
          {"tres",
           {{"total", tres(own.grp_tres)},
            {"group",
             {{"minutes", tres(own.grp_tres_mins)}, {"active", tres(own.grp_tres_run_mins)}}},
            {"minutes",
             {{"total", tres(own.max_tres_run_mins)},
              {"per", {{"job", tres(own.max_tres_mins_per_job)}}}}},
            {"per", {{"job", tres(own.max_tres_per_job)}, {"node", tres(own.max_tres_per_node)}}}}},
          {"per", {{"account", {{"wall_clock", limit(own.grp_wall_min)}}}}}}},
        {"id", i},
        {"is_default", a.is_user() && limits->default_account(a.user) == a.account},
        {"lineage", lineage},
        {"min", {{"priority_threshold", limit(own.min_prio_thresh)}}},
        {"parent_account", parent},
        {"partition", a.partition},
        {"priority", a.priority > 0 ? number(a.priority) : unset()},
        {"qos", std::move(qos_names)},
        {"shares_raw", 1},
        {"user", a.user},
    });
  }
}

void get_db_qos(Call& call) {
  json& out = call.body["qos"] = json::array();
  std::vector<core::QosLine> lines;
  if (const sched::Limits* limits = limits_of(call))
    lines = limits->qos();
  else {
    lines.emplace_back();
    lines.back().name = "normal";
  }
  for (int i = 0; i < int(lines.size()); ++i) {
    const auto& q = lines[i];
    json flags = json::array();
    for (const auto& f : q.flags) flags.push_back(f);
    json preempt_mode = json::array();
    for (auto m : q.preempt_mode) {
      for (auto& c : m) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      preempt_mode.push_back(m == "OFF" ? "DISABLED" : m);
    }
    if (preempt_mode.empty()) preempt_mode.push_back("DISABLED");
    out.push_back({
        {"description", q.description.empty() ? q.name : q.description},
        {"flags", std::move(flags)},
        {"id", i + 1},
        {"limits",
         {{"grace_time", q.grace_time_s},
          {"max",
           {{"active_jobs", {{"accruing", limit(q.grp_jobs_accrue)}, {"count", limit(q.grp_jobs)}}},
            {"jobs",
             {{"count", limit(q.grp_submit_jobs)},
              {"active_jobs",
               {{"per",
                 {{"account", limit(q.max_jobs_per_account)},
                  {"user", limit(q.max_jobs_per_user)}}}}},
              {"per",
               {{"account", limit(q.max_submit_jobs_per_account)},
                {"user", limit(q.max_submit_jobs_per_user)}}}}},
            {"tres",
             {{"total", tres(q.grp_tres)},
              {"minutes",
               {{"total", tres(q.grp_tres_mins)},
                {"per",
                 {{"qos", tres(q.grp_tres_run_mins)},
                  {"job", tres(q.max_tres_mins_per_job)},
                  {"account", tres(q.max_tres_run_mins_per_account)},
                  {"user", tres(q.max_tres_run_mins_per_user)}}}}},
              {"per",
               {{"account", tres(q.max_tres_per_account)},
                {"job", tres(q.max_tres_per_job)},
                {"node", tres(q.max_tres_per_node)},
                {"user", tres(q.max_tres_per_user)}}}}},
            {"wall_clock",
             {{"per", {{"qos", limit(q.grp_wall_min)}, {"job", limit(q.max_wall_min)}}}}},
            {"accruing",
             {{"per",
               {{"account", limit(q.max_jobs_accrue_per_account)},
                {"user", limit(q.max_jobs_accrue_per_user)}}}}}}},
          {"factor", q.limit_factor < 0 ? unset() : number(q.limit_factor)},
          {"min",
           {{"priority_threshold", limit(q.min_prio_thresh)},
            {"tres", {{"per", {{"job", tres(q.min_tres_per_job)}}}}}}}}},
        {"name", q.name},
        {"preempt",
         {{"list", q.preempt},
          {"mode", std::move(preempt_mode)},
          {"exempt_time", limit(q.preempt_exempt_time_s)}}},
        {"priority", number(q.priority)},
        {"usage_factor", number(q.usage_factor)},
        {"usage_threshold", q.usage_threshold < 0 ? unset() : number(q.usage_threshold)},
    });
  }
}

}  // namespace drover::ctld::rest
