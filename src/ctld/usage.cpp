#include "ctld/usage.hpp"

#include "core/error.hpp"
#include "core/gres.hpp"
#include "proto/acct_json.hpp"

namespace drover::ctld {
namespace {

core::TresCounts tres_of(const std::string& text) {
  try {
    return core::parse_tres_counts(text);
  } catch (const core::ParseError&) {
    return {};  // a record from an older form: counted as nothing
  }
}

core::TresCounts node_tres_counts(const core::NodeConf& n) {
  core::TresCounts t = {
      {"cpu", n.cpus}, {"mem", n.real_memory_mb}, {"node", 1}, {"billing", n.cpus}};
  if (n.gres.empty()) return t;
  try {
    for (const auto& g : core::parse_gres_list(n.gres)) t["gres/" + g.name] += g.count;
  } catch (const core::ParseError&) {
    // slurm.conf's check reports it; the node counts no GRES.
  }
  return t;
}

}  // namespace

std::string node_tres(const core::NodeConf& node) {
  return core::format_tres_counts(node_tres_counts(node));
}

std::string cluster_tres(const Config& config) {
  core::TresCounts t;
  for (const auto& n : config.conf.nodes)
    for (const auto& [name, count] : node_tres_counts(n)) t[name] += count;
  return core::format_tres_counts(t);
}

std::string node_service_state(const core::Node& node) {
  if (node.down || (node.drain && node.running_jobs == 0 && node.alloc_cpus == 0)) return "DOWN";
  if (node.maint) return "MAINT";
  return "";
}

core::UsageJob usage_job(const store::JobRecord& r) {
  core::UsageJob j;
  // Without accounts (no accounting data) jobs carry none: their users sit under root, as in
  // fair share.
  j.account = r.account.empty() ? "root" : r.account;
  j.user = r.user;
  j.eligible = r.eligible_time;
  j.start = r.start_time;
  j.end = r.end_time;
  j.requested = tres_of(r.req_tres);
  j.allocated = tres_of(r.alloc_tres);
  return j;
}

nlohmann::json usage_reply(const std::string& cluster, const std::vector<store::JobRecord>& jobs,
                           const std::vector<store::ClusterTresRecord>& tres,
                           const std::vector<store::NodeEventRecord>& node_events,
                           const core::AcctData& data, int64_t start, int64_t end, int64_t now) {
  std::vector<core::UsageJob> usage;
  usage.reserve(jobs.size());
  for (const auto& r : jobs) usage.push_back(usage_job(r));
  std::vector<core::TresPeriod> periods;
  for (const auto& t : tres) periods.push_back({t.since, tres_of(t.tres)});
  std::vector<core::NodeDownPeriod> down;
  for (const auto& e : node_events)
    down.push_back({e.since, e.until, tres_of(e.tres), e.state == "MAINT"});
  nlohmann::json parents = nlohmann::json::object();
  for (const auto& a : data.assocs)
    if (!a.is_user()) parents[a.account] = a.parent;
  return {{"ok", true},
          {"cluster", cluster},
          {"start", start},
          {"end", end},
          {"report", core::compute_usage(usage, periods, down, start, end, now)},
          {"parents", std::move(parents)}};
}

}  // namespace drover::ctld
