// The Kubernetes operator's snapshot of the controller's nodes (k8s::op::ControllerSnapshot),
// built on the state thread; the mapping of one node is k8s::op::to_drover_node.
#include "ctld/k8s_snapshot.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "k8s/operator/nodeset.hpp"
#include "k8s/operator/snapshot.hpp"

namespace drover::ctld {

k8s::op::ControllerSnapshot k8s_snapshot(const StateMachine& sm, int64_t controller_start) {
  std::unordered_map<std::string, std::vector<k8s::op::JobOnNode>> jobs_on;
  for (uint64_t id : sm.jobs().active()) {
    const core::Job& job = *sm.jobs().get(id);
    if (!holds_resources(job)) continue;  // a finished job keeps its allocation on record
    const k8s::op::JobOnNode j{static_cast<uint32_t>(id),
                               k8s::op::expected_end(job.start_time, job.time_limit_min),
                               sm.requeue_allowed(job), job.completing};
    for (const auto& a : job.alloc) jobs_on[a.node].push_back(j);
  }
  k8s::op::ControllerSnapshot snap;
  snap.controller_start = controller_start;
  for (auto it = sm.nodes().begin(); it != sm.nodes().end(); ++it) {
    const core::Node& n = *it;
    auto jobs = jobs_on.find(n.name);
    const auto by =
        n.reason_uid == kK8sOperatorUid ? k8s::op::ReasonBy::Operator : k8s::op::ReasonBy::Admin;
    snap.nodes.emplace(
        n.name, k8s::op::to_drover_node(n, sm.nodes().dynamic(it.id()), by,
                                        jobs == jobs_on.end() ? std::vector<k8s::op::JobOnNode>{}
                                                              : std::move(jobs->second)));
  }
  return snap;
}

sched::AutoscaleDecision autoscale_decide(const StateMachine& sm, sched::Autoscaler& planner,
                                          std::vector<AutoscaleSet> sets, int64_t now) {
  sched::ClusterView v = sm.autoscale_view(now);
  std::vector<sched::NodeSetView> views;
  views.reserve(sets.size());
  for (AutoscaleSet& a : sets) {
    sched::NodeSetView& s = a.set;
    // The set's powered-down nodes without a pod are the planner's hypothetical ones: out of
    // the partitions, or they would count twice (as when a job could ever run).
    std::unordered_set<int> slots;
    for (auto it = sm.nodes().begin(); it != sm.nodes().end(); ++it)
      if (sm.nodes().cloud(it.id()) && !it->registered &&
          k8s::op::pod_ordinal(s.name, it->name) >= 0 &&
          std::find(a.member_nodes.begin(), a.member_nodes.end(), it->name) == a.member_nodes.end())
        slots.insert(static_cast<int>(it.id()));
    if (!slots.empty())
      for (auto& part : v.partitions)
        std::erase_if(part.nodes, [&](int n) { return slots.count(n) > 0; });
    std::vector<std::string> joins = sm.partitions_taking(s.shape);
    if (!s.partitions.empty())
      std::erase_if(joins, [&](const std::string& p) {
        return std::find(s.partitions.begin(), s.partitions.end(), p) == s.partitions.end();
      });
    s.partitions = std::move(joins);
    for (size_t m = 0; m < s.members.size(); ++m) {
      sched::NodeSetMember& mem = s.members[m];
      mem.slot = -1;
      const std::string& name = m < a.member_nodes.size() ? a.member_nodes[m] : std::string();
      const NodeId id = name.empty() ? kNoNode : sm.nodes().find(name);
      const core::Node* n = id == kNoNode ? nullptr : sm.nodes().get(id);
      if (n != nullptr && static_cast<size_t>(id) < v.nodes.size()) mem.slot = static_cast<int>(id);
      // Not registered (or a powered-down slot): starting, and never counted as up already,
      // or the planner would start more nodes in its place.
      if (n == nullptr || !n->registered) {
        mem.ready_at = std::max(mem.ready_at, now + 1);
        mem.idle_since = -1;
      }
    }
    views.push_back(std::move(s));
  }
  return planner.decide(v, views, now);
}

}  // namespace drover::ctld
