#pragma once
// The Kubernetes operator's snapshot of the controller's nodes, built on the state thread from
// the state machine's const accessors, so the state machine itself knows nothing of
// Kubernetes.
#include <cstdint>

#include "ctld/k8s_operator.hpp"
#include "ctld/state_machine.hpp"
#include "k8s/operator/observed.hpp"

namespace drover::ctld {

// Every node with the jobs holding resources on it, whether it joined at run time and whether
// the operator (kK8sOperatorUid) set its reason.
k8s::op::ControllerSnapshot k8s_snapshot(const StateMachine& sm, int64_t controller_start);

// The autoscaler's decision, on the state thread: each member's node found in the controller's
// view (a member whose node has not registered is starting, up no earlier than a second from
// now), each set's partitions those its node shape joins (of those its spec names, if any), and
// the planner run on the pending jobs a full pass would consider.
sched::AutoscaleDecision autoscale_decide(const StateMachine& sm, sched::Autoscaler& planner,
                                          std::vector<AutoscaleSet> sets, int64_t now);

}  // namespace drover::ctld
