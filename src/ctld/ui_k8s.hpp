#pragma once
// The dashboard's Kubernetes view (GET /ui/api/k8s): the NodeSets the operator manages, their
// pods with the drover node each one runs, and the NodeSet size decisions, from a copy of what
// the operator's last pass saw (K8sOperator::observed()). Pure, so it is tested with a made-up
// view; the server calls it on the state thread, which knows the jobs' owners.
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "ctld/state_machine.hpp"
#include "ctld/ui_api.hpp"
#include "k8s/operator/decision_log.hpp"
#include "k8s/operator/view.hpp"

namespace drover::ctld {

// How many decisions the view shows (the newest).
inline constexpr size_t kUiK8sDecisions = 200;

// {"enabled": false} when the operator is off (`view` nullopt); else {"enabled": true,
// "namespace", "time", "version", "nodesets": [...], "pods": [...], "decisions": [...]}.
//
// Who sees what: NodeSets and pods are the cluster's nodes seen from Kubernetes, so everyone
// who may run sinfo (every user) sees them, as the Nodes view shows every node. A decision
// names the pending jobs it was for: under PrivateData=jobs a user sees only their own among
// them, and a decision's reason only when it names no one else's job.
nlohmann::json ui_k8s(const std::optional<k8s::op::ObservedView>& view,
                      const std::vector<k8s::op::ScaleDecision>& decisions,
                      const StateMachine& machine, const UiViewer& v, int64_t now);

// A drover node's state as sinfo words it ("idle", "mixed", "allocated", "down", "drained",
// "draining", "future"; "*" appended when not responding; "unregistered" before it joins).
std::string ui_k8s_node_state(const k8s::op::DroverNode& n);

}  // namespace drover::ctld
