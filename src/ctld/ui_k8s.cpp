#include "ctld/ui_k8s.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <string>

#include "k8s/operator/nodeset.hpp"

namespace drover::ctld {

using nlohmann::json;
namespace op = k8s::op;

namespace {

// RFC 3339 ("2026-11-28T15:04:05Z", what the API server writes) to unix seconds; 0 if not one.
int64_t rfc3339_seconds(const std::string& s) {
  std::tm tm{};
  if (s.size() < 19 || strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr) return 0;
  return static_cast<int64_t>(timegm(&tm));
}

const json& member(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? empty : *it;
}

std::string text(const json& j, const char* key) {
  const json& m = member(j, key);
  return m.is_string() ? m.get<std::string>() : std::string();
}

int64_t number(const json& j, const char* key) {
  const json& m = member(j, key);
  return m.is_number() ? m.get<int64_t>() : 0;
}

bool condition_true(const json& status, const std::string& type) {
  const json& conds = member(status, "conditions");
  if (!conds.is_array()) return false;
  for (const json& c : conds)
    if (text(c, "type") == type) return text(c, "status") == "True";
  return false;
}

}  // namespace

std::string ui_k8s_node_state(const op::DroverNode& n) {
  std::string s;
  if (!n.registered) return "unregistered";
  switch (n.state) {
    case op::NodeState::Idle:
      s = n.drain ? "drained" : "idle";
      break;
    case op::NodeState::Mixed:
    case op::NodeState::Allocated:
      s = n.drain ? "draining" : n.state == op::NodeState::Mixed ? "mixed" : "allocated";
      break;
    case op::NodeState::Down:
      s = "down";
      break;
    case op::NodeState::Future:
      s = "future";
      break;
  }
  return n.not_responding ? s + "*" : s;
}

json ui_k8s(const std::optional<op::ObservedView>& view,
            const std::vector<op::ScaleDecision>& decisions, const StateMachine& machine,
            const UiViewer& v, int64_t now) {
  if (!view) return {{"enabled", false}};
  json nodesets = json::array();
  json pods = json::array();
  // Pods by NodeSet, oldest ordinal first.
  std::map<std::string, std::vector<const json*>> pods_of;
  for (const json& p : view->pods) {
    const json& md = member(p, "metadata");
    pods_of[text(member(md, "labels"), op::kNodeSetLabel)].push_back(&p);
  }
  for (const json& obj : view->nodesets) {
    const json& md = member(obj, "metadata");
    const std::string name = text(md, "name");
    const json& status = member(obj, "status");
    json ns = {{"name", name},
               {"replicas", nullptr},
               {"status_replicas", number(status, "replicas")},
               {"ready_replicas", number(status, "readyReplicas")},
               {"updated_replicas", number(status, "updatedReplicas")},
               {"autoscaling", nullptr},
               {"deleting", md.contains("deletionTimestamp")},
               {"conditions", member(status, "conditions").is_array() ? member(status, "conditions")
                                                                      : json::array()},
               {"error", ""}};
    try {
      const op::NodeSetSpec spec = op::parse_nodeset(obj);
      ns["replicas"] = spec.replicas;
      ns["cost"] = spec.cost;
      ns["update_strategy"] =
          spec.update_type == op::UpdateType::RollingUpdate ? "RollingUpdate" : "OnDelete";
      ns["max_unavailable"] =
          std::to_string(spec.max_unavailable) + (spec.max_unavailable_pct ? "%" : "");
      ns["workload_protection"] = spec.workload_protection;
      ns["partitions"] = spec.partitions;
      if (spec.autoscaling)
        ns["autoscaling"] = {{"min_replicas", spec.autoscaling->min_replicas},
                             {"max_replicas", spec.autoscaling->max_replicas},
                             {"idle_timeout_s", spec.autoscaling->idle_timeout}};
    } catch (const std::exception& e) {
      // The operator leaves such a NodeSet alone and logs why: the view says it too.
      ns["error"] = e.what();
    }
    std::map<std::string, int> states;
    auto& mine = pods_of[name];
    std::sort(mine.begin(), mine.end(), [&](const json* a, const json* b) {
      const std::string na = text(member(*a, "metadata"), "name");
      const std::string nb = text(member(*b, "metadata"), "name");
      const int oa = op::pod_ordinal(name, na), ob = op::pod_ordinal(name, nb);
      return oa != ob ? oa < ob : na < nb;
    });
    for (const json* p : mine) {
      const json& pmd = member(*p, "metadata");
      const json& pst = member(*p, "status");
      const std::string pod = text(pmd, "name");
      // The agent in a pod joins as the drover node of the pod's name.
      auto dn = view->drover.nodes.find(pod);
      const op::DroverNode* n = dn == view->drover.nodes.end() ? nullptr : &dn->second;
      const std::string state = n ? ui_k8s_node_state(*n) : "unregistered";
      ++states[state];
      const int64_t created = rfc3339_seconds(text(pmd, "creationTimestamp"));
      pods.push_back({{"name", pod},
                      {"nodeset", name},
                      {"phase", text(pst, "phase")},
                      {"ready", condition_true(pst, "Ready")},
                      {"k8s_node", text(member(*p, "spec"), "nodeName")},
                      {"node", pod},
                      {"node_state", state},
                      {"reason", n ? n->reason : std::string()},
                      {"jobs", n ? n->jobs.size() : size_t{0}},
                      {"busy", n != nullptr && n->busy()},
                      {"protected", text(member(pmd, "labels"), op::kBusyLabel) == "true"},
                      {"deleting", pmd.contains("deletionTimestamp")},
                      {"created", created},
                      {"age_s", created > 0 ? std::max<int64_t>(0, now - created) : int64_t{0}}});
    }
    ns["node_states"] = states;
    nodesets.push_back(std::move(ns));
  }

  json out_decisions = json::array();
  const size_t first = decisions.size() > kUiK8sDecisions ? decisions.size() - kUiK8sDecisions : 0;
  for (size_t i = first; i < decisions.size(); ++i) {
    const op::ScaleDecision& d = decisions[i];
    json jobs = json::array();
    bool others = false;
    for (uint64_t id : d.jobs) {
      const core::Job* j = machine.find_job(id);
      // A job no longer known (purged) has no owner to check: shown to operators only.
      if (v.is_operator || (j != nullptr && v.may_see(*j)) || (j == nullptr && !v.private_jobs))
        jobs.push_back(id);
      else
        others = true;
    }
    out_decisions.push_back(
        {{"time", d.time},
         {"nodeset", d.nodeset},
         {"from", d.from},
         {"to", d.to},
         {"reason",
          others ? std::string("for pending jobs (PrivateData=jobs hides which)") : d.reason},
         {"jobs", std::move(jobs)}});
  }
  return {{"enabled", true},
          {"namespace", view->ns},
          {"time", view->time},
          {"version", view->version},
          {"now", now},
          {"nodesets", std::move(nodesets)},
          {"pods", std::move(pods)},
          {"decisions", std::move(out_decisions)}};
}

}  // namespace drover::ctld
