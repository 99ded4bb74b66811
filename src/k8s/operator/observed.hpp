#pragma once
// What the reconcilers see: the NodeSet's pods and the Kubernetes nodes as the API server
// returns them, and a snapshot of drover's own view of the nodes named after those pods.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace drover::k8s::op {

// Base state of a drover node; drain and not-responding are flags on top, as in Slurm.
enum class NodeState : uint8_t { Idle, Mixed, Allocated, Down, Future };

// Who set a node's drain/down reason: drover's own operator (its reasons may be undone by it)
// or anyone else (an administrator; the operator never lifts those).
enum class ReasonBy : uint8_t { None, Operator, Admin };

struct JobOnNode {
  uint32_t id = 0;
  int64_t expected_end = 0;  // by its time limit or the plan; 0: unknown (counts as never)
  bool requeueable = true;
  // Already on its way out (requeued or cancelled, its processes still being stopped): asking
  // again would only be refused.
  bool ending = false;
};

struct DroverNode {
  std::string name;
  NodeState state = NodeState::Idle;
  bool drain = false;
  bool not_responding = false;
  bool dynamic = true;  // the operator only manages nodes that joined at run time
  std::string reason;
  ReasonBy reason_by = ReasonBy::None;
  int64_t reason_since = 0;  // when the drain/down reason was set
  bool registered = false;
  int64_t registered_since = 0;
  std::vector<std::string> features;
  std::vector<JobOnNode> jobs;

  bool busy() const { return !jobs.empty(); }
};

struct ControllerSnapshot {
  std::map<std::string, DroverNode> nodes;  // by name
  // When the controller started: agents re-register after a restart, so a pod's registration
  // timeout counts from whichever is later, this or the pod's start.
  int64_t controller_start = 0;
};

struct Observed {
  std::vector<nlohmann::json> pods;                 // the NodeSet's pods (label kNodeSetLabel)
  std::map<std::string, nlohmann::json> k8s_nodes;  // Kubernetes Nodes by name
  std::optional<nlohmann::json> pdb;                // the NodeSet's PodDisruptionBudget, if any
  ControllerSnapshot drover;
};

}  // namespace drover::k8s::op
