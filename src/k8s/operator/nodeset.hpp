#pragma once
// A NodeSet (drover.io/v1alpha1) as the reconcilers read it, parsed once from the object the
// API server returns. Parsing checks what the CRD's schema cannot (durations, quantities in the
// template) and what the operator relies on, so a bad object gets one clear message.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace drover::k8s::op {

inline constexpr const char* kGroup = "drover.io";
inline constexpr const char* kApiVersion = "drover.io/v1alpha1";
inline constexpr const char* kKind = "NodeSet";
// Held on every NodeSet: its deletion waits until the operator drained and deleted its pods.
inline constexpr const char* kFinalizer = "drover.io/drain";
// Labels and condition the operator puts on agent pods.
inline constexpr const char* kNodeSetLabel = "drover.io/nodeset";
inline constexpr const char* kHashLabel = "drover.io/template-hash";
inline constexpr const char* kBusyLabel = "drover.io/busy";
inline constexpr const char* kNodeStateCondition = "drover.io/NodeState";
// Annotations on busy agent pods that tell the cluster autoscalers not to remove their machine
// (Cluster Autoscaler, Karpenter); idle pods go without, so an empty machine can go.
inline constexpr const char* kSafeToEvictAnnotation =
    "cluster-autoscaler.kubernetes.io/safe-to-evict";
inline constexpr const char* kDoNotDisruptAnnotation = "karpenter.sh/do-not-disrupt";

// Kubernetes node taints that say the machine is about to go away: Cluster Autoscaler's
// scale-down, Karpenter's disruption, GKE's termination notice, and the AWS Node Termination
// Handler's spot interruption, ASG scale-in and scheduled maintenance.
inline const std::vector<std::string>& default_disruption_taints() {
  static const std::vector<std::string> taints = {
      "ToBeDeletedByClusterAutoscaler",
      "karpenter.sh/disrupted",
      "cloud.google.com/impending-node-termination",
      "aws-node-termination-handler/spot-itn",
      "aws-node-termination-handler/asg-lifecycle-termination",
      "aws-node-termination-handler/scheduled-maintenance",
  };
  return taints;
}

// Where an agent pod's droverd serves its vouching socket unless the template says otherwise:
// an emptyDir of its own, so srun in the pod's jobs, which run as their users, reaches it.
inline constexpr const char* kAuthSocketDir = "/run/drover";
inline constexpr const char* kAuthSocketVolume = "drover-run";

enum class UpdateType { RollingUpdate, OnDelete };
enum class DrainTimeoutPolicy { Requeue, Cancel, Wait };

struct NodeSetSpec {
  // metadata
  std::string name, ns, uid;
  int64_t generation = 0;
  bool deleting = false;       // metadata.deletionTimestamp is set
  bool has_finalizer = false;  // kFinalizer is in metadata.finalizers
  nlohmann::json status;       // as last written (object; empty when none)

  // spec
  int replicas = 1;
  nlohmann::json pod_template;  // a PodTemplateSpec: {metadata, spec}
  std::vector<std::string> partitions;
  std::vector<std::string> features;
  std::vector<std::string> features_from_node_labels;
  // Kubernetes node condition types (e.g. from node-problem-detector) that, when True, drain the
  // node's drover nodes as a cordon does.
  std::vector<std::string> drain_on_node_conditions;
  // Taint keys on a Kubernetes node that mean it is about to go away: its drover nodes drain at
  // once and their jobs are requeued (or cancelled) before it goes. Empty: none.
  std::vector<std::string> disruption_taints = default_disruption_taints();
  UpdateType update_type = UpdateType::RollingUpdate;
  int max_unavailable = 1;  // absolute, or a percentage of replicas when max_unavailable_pct
  bool max_unavailable_pct = false;
  int64_t max_drain_time = -1;  // seconds; -1: no limit
  DrainTimeoutPolicy drain_timeout_policy = DrainTimeoutPolicy::Requeue;
  bool workload_protection = true;
  int64_t registration_timeout = 300;  // seconds
  // Relative cost of a node: the autoscaler prefers cheaper sets.
  double cost = 1;
  // spec.autoscaling: replicas follow what the scheduler's plan wants, within [min, max].
  struct Autoscaling {
    int min_replicas = 0, max_replicas = 0;
    int64_t idle_timeout = 600;  // seconds
    int64_t startup_time = 60;   // seconds: from pod creation to a registered node
  };
  std::optional<Autoscaling> autoscaling;

  // maxUnavailable for `replicas` pods: a percentage rounds down, and at least one pod may be
  // unavailable (or a rollout could never start).
  int max_unavailable_for(int replicas) const;
  // "drover.io/nodeset=<name>": the pods' selector (status.selector, the scale subresource).
  std::string selector() const;
};

// Parses a NodeSet object. Throws core::ParseError naming the field ("spec.maxDrainTime: ...").
NodeSetSpec parse_nodeset(const nlohmann::json& obj);

// Kubernetes duration strings (Go's time.ParseDuration: "90s", "1h30m", "1.5h", "500ms") to
// whole seconds, rounding up. Throws core::ParseError.
int64_t parse_duration_seconds(std::string_view s);

// Kubernetes resource quantities ("500m", "2", "1.5", "4Gi", "4G", "1e9") as a number of units.
// Throws core::ParseError.
long double parse_quantity(std::string_view s);

// The agent pod and drover node name of an ordinal: "<nodeset>-<ordinal>".
std::string pod_name(std::string_view nodeset, int ordinal);
// The ordinal in a pod / node name of this NodeSet, or -1 when the name is not one of its.
int pod_ordinal(std::string_view nodeset, std::string_view name);

// A stable hash of the pod template (hex): pods carry it in kHashLabel, and a different one
// means the pod runs an older template.
std::string template_hash(const nlohmann::json& pod_template);

// A node's shape as drover sees it, from an agent pod's resources: the sum over its containers
// of requests (limits where no request is given). A pod may take part of a machine.
struct NodeShape {
  int cpus = 1;  // whole CPUs, rounded down, at least 1
  int64_t real_memory_mb = 0;
  int64_t gpus = 0;  // nvidia.com/gpu
  bool operator==(const NodeShape&) const = default;
};
NodeShape shape_from_pod_spec(const nlohmann::json& pod_spec);
// As a slurm.conf node line for a dynamic node ("CPUs=2 RealMemory=8192 Gres=gpu:2
// Feature=a,b"), what `droverd -Z --conf` takes.
std::string node_conf_line(const NodeShape& shape, const std::vector<std::string>& features);

}  // namespace drover::k8s::op
