#pragma once
// The Kubernetes operator's snapshot of the controller's nodes, built on the state thread from
// the state machine's const accessors, so the state machine itself knows nothing of
// Kubernetes.
#include <cstdint>

#include "ctld/state_machine.hpp"
#include "k8s/operator/observed.hpp"

namespace drover::ctld {

// Every node with the jobs holding resources on it, whether it joined at run time and whether
// the operator (kK8sOperatorUid) set its reason.
k8s::op::ControllerSnapshot k8s_snapshot(const StateMachine& sm, int64_t controller_start);

}  // namespace drover::ctld
