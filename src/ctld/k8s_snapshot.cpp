// The Kubernetes operator's snapshot of the controller's nodes (k8s::op::ControllerSnapshot),
// built on the state thread; the mapping of one node is k8s::op::to_drover_node.
#include "ctld/k8s_snapshot.hpp"

#include <string>
#include <unordered_map>
#include <vector>

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

}  // namespace drover::ctld
