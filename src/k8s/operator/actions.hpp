#pragma once
// What a reconcile asks for. Actions on drover (drain, resume, down, delete node, requeue,
// cancel, features) are carried out through the controller's own commands, so they are
// journaled and show as scontrol's do; the others go to the Kubernetes API. Executed in order.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

namespace drover::k8s::op {

struct CreatePod {
  nlohmann::json pod;
};
struct DeletePod {
  std::string name, uid;  // uid: a precondition, so a newer pod of the same name is safe
};
// Labels and annotations to merge into a pod's metadata, in one write; a null value removes
// the key.
struct PatchPodLabels {
  std::string pod;
  nlohmann::json labels;
  nlohmann::json annotations = nlohmann::json::object();
};
// Conditions to set in the pod's status (merged by type).
struct PatchPodConditions {
  std::string pod;
  nlohmann::json conditions;
};
struct DrainNode {
  std::string node, reason;
};
struct ResumeNode {
  std::string node;
};
// Marks a drover node DOWN now (its pod or machine is gone), which requeues or fails its jobs
// as Slurm does for a failed node.
struct DownNode {
  std::string node, reason;
};
struct DeleteDroverNode {
  std::string node;
};
struct SetNodeFeatures {
  std::string node;
  std::vector<std::string> features;
};
struct RequeueJob {
  uint32_t job = 0;
  std::string reason;
};
struct CancelJob {
  uint32_t job = 0;
  std::string reason;
};
struct UpdateStatus {
  nlohmann::json status;
};
// Adds (present) or removes the NodeSet's kFinalizer.
struct SetFinalizer {
  bool present = true;
};
struct ApplyPDB {
  nlohmann::json pdb;
};
struct DeletePDB {
  std::string name;
};
struct ObjectRef {
  std::string kind, name, uid;
};
struct EmitEvent {
  ObjectRef object;
  std::string type;  // "Normal" or "Warning"
  std::string reason, message;
};

using Action = std::variant<CreatePod, DeletePod, PatchPodLabels, PatchPodConditions, DrainNode,
                            ResumeNode, DownNode, DeleteDroverNode, SetNodeFeatures, RequeueJob,
                            CancelJob, UpdateStatus, SetFinalizer, ApplyPDB, DeletePDB, EmitEvent>;

// One line per action for logs and tests: "drain gpu-1 (scale-in)", "create pod gpu-3".
std::string describe(const Action& a);
// {"action": "DrainNode", "node": ..., "reason": ...}: the struct's name and fields, for
// debugging output and tests that replay actions against a real API server.
nlohmann::json to_json(const Action& a);

}  // namespace drover::k8s::op
